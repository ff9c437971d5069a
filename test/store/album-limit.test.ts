/**
 * `albums.insert` refuses an artist's album past `MAX_ALBUMS_PER_ARTIST` in the same step as it counts them, in the
 * document store and over PostgreSQL, where two replicas inserting at once cannot pass it together either.
 */
import { afterEach, beforeAll, describe, expect, test } from 'bun:test'
import { openMemoryStore } from '../../src/store/document/memory.ts'
import { openSqlStore, type SqlStore } from '../../src/store/sql/sql-store.ts'
import { AlbumLimitError, MAX_ALBUMS_PER_ARTIST, type Store } from '../../src/store/store.ts'
import { skipWithoutPostgres, type TestPostgres, testPostgres } from '../support/postgres.ts'

const skip = skipWithoutPostgres()
let pg: TestPostgres
let opened: SqlStore[] = []

beforeAll(async () => {
  if (!skip) pg = await testPostgres()
}, 60_000)
afterEach(async () => {
  await Promise.all(opened.map((store) => store.close().catch(() => {})))
  opened = []
})

/** Loads artist 1 with `MAX_ALBUMS_PER_ARTIST - room` albums, and artist 2 with none. */
async function nearlyFull(store: Store, room: number) {
  const albums = Array.from({ length: MAX_ALBUMS_PER_ARTIST - room }, (_, i) => ({ name: `Disco ${i}`, image: null }))
  await store.load([
    { name: 'Prolific', image: null, albums },
    { name: 'Other', image: null, albums: [] },
  ])
}

/** Sends `count` inserts at once to artist 1 through `stores` in turn; how many were stored and how many refused. */
async function race(stores: readonly Store[], count: number) {
  const outcomes = await Promise.allSettled(
    Array.from({ length: count }, (_, i) =>
      (stores[i % stores.length] as Store).albums.insert({ artistId: 1, name: `Carrera ${i}` }),
    ),
  )
  const refused = outcomes.filter((outcome) => outcome.status === 'rejected')
  for (const outcome of refused) expect(outcome.reason).toBeInstanceOf(AlbumLimitError)
  return { stored: outcomes.length - refused.length, refused: refused.length }
}

describe('at most MAX_ALBUMS_PER_ARTIST albums per artist, in the store', () => {
  test('the document store refuses the album past it, of concurrent inserts too, and only for that artist', async () => {
    const store = openMemoryStore()
    await nearlyFull(store, 7)
    expect(await race([store], 30)).toEqual({ stored: 7, refused: 23 })
    await expect(store.albums.insert({ artistId: 1, name: 'Otra' })).rejects.toThrow(
      `the artist already has ${MAX_ALBUMS_PER_ARTIST} albums`,
    )
    expect((await store.albums.listByArtist(1, { limit: 1, offset: 0 }))?.total).toBe(MAX_ALBUMS_PER_ARTIST)
    expect(await store.albums.insert({ artistId: 2, name: 'Libre' })).toMatchObject({ artistId: 2 })
    expect(await store.albums.insert({ artistId: 3, name: 'Nadie' })).toBeUndefined()
  })

  test.skipIf(skip)('two PostgreSQL replicas inserting at once cannot pass it together', async () => {
    const database = await pg.freshDatabase()
    const open = async () => {
      const store = await openSqlStore(pg.url(database), { pool: 4, waitMs: 5000 })
      opened.push(store)
      return store
    }
    const [a, b] = [await open(), await open()]
    await nearlyFull(a, 7)
    // Each replica batches its inserts into transactions of its own; the two batches race for the artist's row.
    expect(await race([a, b], 40)).toEqual({ stored: 7, refused: 33 })
    for (const store of [a, b])
      expect((await store.albums.listByArtist(1, { limit: 1, offset: 0 }))?.total).toBe(MAX_ALBUMS_PER_ARTIST)
    // What the list counts is what is stored, and the other artist still takes albums, in a batch with refused ones.
    const mixed = await Promise.allSettled([
      a.albums.insert({ artistId: 1, name: 'Otra' }),
      a.albums.insert({ artistId: 2, name: 'Libre' }),
      a.albums.insert({ artistId: 99, name: 'Nadie' }),
    ])
    expect(mixed.map((outcome) => outcome.status)).toEqual(['rejected', 'fulfilled', 'fulfilled'])
    expect((mixed[1] as PromiseFulfilledResult<unknown>).value).toMatchObject({ artistId: 2, name: 'Libre' })
    expect((mixed[2] as PromiseFulfilledResult<unknown>).value).toBeUndefined()
    const all = await a.albums.listByArtist(1, { limit: 100, offset: MAX_ALBUMS_PER_ARTIST - 100 })
    expect(all?.items).toHaveLength(100)
  })
})
