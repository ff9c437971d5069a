/**
 * One contract for `snapshot`, `restore` and `resetPoint` on both stores (src/store/store.ts): a snapshot is a copy
 * that later writes leave as it is, and restores the state it copied as often as asked; the reset point is fixed by
 * the first call, and over a database shared by replicas every replica gets the first one's.
 */
import { afterEach, beforeAll, describe, expect, test } from 'bun:test'
import { openMemoryStore } from '../../src/store/document/memory.ts'
import { openSqlStore, type SqlStore } from '../../src/store/sql/sql-store.ts'
import type { Store } from '../../src/store/store.ts'
import { skipWithoutPostgres, type TestPostgres, testPostgres } from '../support/postgres.ts'

const skip = skipWithoutPostgres()
let pg: TestPostgres
const opened: SqlStore[] = []
// The run's shared server (this file never stops it), not one of this process's own.
beforeAll(async () => {
  if (!skip) pg = await testPostgres()
})
// The stores closed after their test; its databases are emptied for the next test's once they are (`emptyDatabase`).
afterEach(async () => {
  await Promise.all(opened.splice(0).map((store) => store.close().catch(() => {})))
})

/**
 * A database of the test's own with the schema and no rows: the same start as a new copy its first store migrates,
 * for far less of PostgreSQL's work; the snapshots, not the migrations, are under test.
 */
const emptyDatabase = () => pg.emptyDatabase()

async function sqlStore(database: string): Promise<SqlStore> {
  const store = await openSqlStore(pg.url(database), { pool: 2, waitMs: 5000 })
  opened.push(store)
  return store
}

/** Everything a client could see: the artists, an artist's albums, and the next id each collection gives. */
async function seen(store: Store) {
  return {
    artists: (await store.artists.list({ limit: 100, offset: 0 })).items,
    albums: (await store.albums.listByArtist(1, { limit: 100, offset: 0 }))?.items,
    user: await store.users.findByEmail('ana@rock.com'),
  }
}

const USER = { name: 'Ana', email: 'ana@rock.com', passwordHash: 'h', createdAt: '2025-01-01T00:00:00.000Z' }

const stores: [string, () => Promise<Store>][] = [
  ['the document store', async () => openMemoryStore()],
  ['the SQL store', async () => sqlStore(await emptyDatabase())],
]

for (const [name, open] of stores)
  describe.skipIf(skip && name === 'the SQL store')(name, () => {
    test('a snapshot is a copy: writes after it change neither it nor what restoring it brings back', async () => {
      const store = await open()
      await store.artists.insert({ name: 'Spinetta' })
      await store.albums.insert({ artistId: 1, name: 'Artaud' })
      const before = await seen(store)
      const snapshot = await store.snapshot()
      const copy = JSON.stringify(snapshot)

      await store.artists.insert({ name: 'Intruso' })
      await store.albums.insert({ artistId: 1, name: 'Intruso' })
      await store.artists.replace({ id: 1, name: 'Renamed' })
      await store.users.insert({ ...USER, disabledAt: null })
      expect(JSON.stringify(snapshot)).toBe(copy)

      for (let round = 0; round < 2; round++) {
        await store.restore(snapshot)
        expect(await seen(store)).toEqual(before)
        // Ids given after the snapshot are given again: the counters are restored too.
        expect((await store.artists.insert({ name: 'After' })).id).toBe(2)
      }
      expect(JSON.stringify(snapshot)).toBe(copy)
    })

    test('the reset point is fixed by the first call: later calls return it, whatever was written since', async () => {
      const store = await open()
      await store.artists.insert({ name: 'Charly' })
      const point = await store.resetPoint()
      await store.artists.insert({ name: 'Later' })
      const again = await store.resetPoint()
      expect(again).toEqual(point)
      await store.restore(again)
      expect((await store.artists.list({ limit: 10, offset: 0 })).items.map((artist) => artist.name)).toEqual([
        'Charly',
      ])
    })
  })

describe.skipIf(skip)('over a database shared by replicas', () => {
  test('every replica gets the reset point of the first one to ask, and it outlives them', async () => {
    const database = await emptyDatabase()
    const first = await sqlStore(database)
    await first.artists.insert({ name: 'Fito' })
    const point = await first.resetPoint()
    await first.artists.insert({ name: 'Written after the point' })

    const second = await sqlStore(database)
    expect(await second.resetPoint()).toEqual(point)
    await first.close()
    const third = await sqlStore(database)
    await third.restore(await third.resetPoint())
    expect((await second.artists.list({ limit: 10, offset: 0 })).items.map((artist) => artist.name)).toEqual(['Fito'])
  })
})
