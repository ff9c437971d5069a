/**
 * A restore (and so a reset, a `restore` or a `copy` into a database) moves the sequences its ids come from together
 * with the rows. A sequence is not transactional: a `setval` made before a commit that never happens stays, so a copy
 * killed just before its commit (as the kill -9 loop of test/ops/copy.binary.test.ts kills them) would leave the old
 * rows under the new counters, and the next album, account or key would be given an id an old row holds.
 */
import { describe, expect, test } from 'bun:test'
import { SQL } from 'bun'
import { emailKey } from '../../../src/model/email.ts'
import type { StoreDocument } from '../../../src/model/store-document.ts'
import { replaceAll } from '../../../src/store/sql/snapshot.ts'
import { openSqlStore } from '../../../src/store/sql/sql-store.ts'
import { sqlTestFile, type TestPostgres } from '../../support/postgres.ts'

let pg: TestPostgres
const { skip, opened, pools, emptyDatabase } = sqlTestFile((server) => {
  pg = server
})

/**
 * A replica over a database of the test's own holding two artists with an album each, and the snapshot of that state.
 * The database is empty and migrated when taken (`reusedDatabase`: one an earlier test emptied, its sequences back at
 * their start, else a copy of a migrated template): the same start as a new copy the replica migrates, for far less.
 */
async function twoArtists() {
  const database = await emptyDatabase()
  const store = await openSqlStore(pg.url(database), { pool: 4, waitMs: 5000 })
  opened.push(store)
  for (const name of ['Sui Generis', 'Serú Girán']) {
    const artist = await store.artists.insert({ name })
    await store.albums.insert({ artistId: artist.id, name: `${name}: el primero` })
  }
  return { database, store, small: await store.snapshot() }
}

/** The counters a snapshot holds. */
const countersOf = (snapshot: StoreDocument) => snapshot.counters

describe.skipIf(skip)('a restore whose client is gone before its commit', () => {
  test('leaves the counters with the rows it did not replace: the next ids are past every old row', async () => {
    const { database, store, small } = await twoArtists()
    // More than the snapshot holds: the state a restore would replace.
    for (const name of ['Almendra', 'Pescado Rabioso', 'Invisible']) {
      const artist = await store.artists.insert({ name })
      await store.albums.insert({ artistId: artist.id, name: `${name}: el primero` })
    }
    const before = countersOf(await store.snapshot())
    expect(before).toMatchObject({ artists: 5, albums: 5 })

    // The restore's writes, in a transaction whose backend is then ended, as when its client is killed.
    const raw = new SQL({ url: pg.url(database), max: 2 })
    pools.push(raw)
    const restore = raw.begin(async (tx) => {
      await replaceAll(tx as unknown as SQL, small, emailKey)
      const [{ pid }] = await tx`SELECT pg_backend_pid() AS pid`
      await raw`SELECT pg_terminate_backend(${pid})`
      await tx`SELECT 1`
    })
    expect(restore).rejects.toThrow()
    await restore.catch(() => {})

    const after = await store.snapshot()
    expect(countersOf(after)).toEqual(before)
    const artist = await store.artists.insert({ name: 'Color Humano' })
    expect(artist.id).toBe(6)
    expect((await store.albums.insert({ artistId: artist.id, name: 'Color Humano' }))?.id).toBe(6)
  })

  test('a restore that commits puts the counters back with the rows: the next ids are the snapshot’s next', async () => {
    const { store, small } = await twoArtists()
    for (const name of ['Almendra', 'Pescado Rabioso']) await store.artists.insert({ name })
    await store.restore(small)
    expect(countersOf(await store.snapshot())).toEqual(countersOf(small))
    expect((await store.artists.insert({ name: 'Aquelarre' })).id).toBe(3)
  })
})
