import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createApp } from '../../src/app.ts'
import { paginator } from '../../src/http/pagination.ts'
import type { Artist } from '../../src/model/artist.ts'
import type { CatalogueEntry } from '../../src/model/catalogue.ts'
import { openMemoryStore } from '../../src/store/document/memory.ts'
import { PageCache } from '../../src/store/sql/page-cache.ts'
import { openSqlStore, type SqlStore } from '../../src/store/sql/sql-store.ts'
import type { Store } from '../../src/store/store.ts'
import { skipWithoutPostgres, type TestPostgres, testPostgres } from '../support/postgres.ts'

// The caches of list pages hold what visitors ask for: as many distinct pages as there are limits, offsets, searches
// and orders, each as large as its records. They are bounded by bytes (16 MiB each, by an estimate that counts what
// an entry keeps alive), never by a count of pages: with 130 of the largest artists, 100 distinct pages hold 627 MB.
// The cache itself (ByteCache) is tested in byte-cache.test.ts.

const MiB = 1024 * 1024

/** The largest artist the API accepts, made of a character JSON writes as six (`\u0001`): about 75 KB of JSON. */
const largeArtist = (i: number): CatalogueEntry => {
  const filler = (length: number) => '\u0001'.repeat(length)
  const name = `Artist ${i} `
  return {
    name: `${name}${filler(200 - name.length)}`,
    description: filler(10_000),
    image: `/${filler(2047)}`,
    band: filler(200),
    albums: [],
  }
}
const LARGE_ARTISTS = Array.from({ length: 130 }, (_, i) => largeArtist(i + 1))

/** The heap in use once everything unreachable is collected: the memory a cache keeps, measured. */
const heapAfterGc = () => {
  Bun.gc(true)
  return process.memoryUsage().heapUsed
}

describe('the paginator (the encoded pages of the artist and album lists)', () => {
  test('many distinct large pages: its bytes stay within 16 MiB; a page past an eighth of that is served, not kept', async () => {
    const store = openMemoryStore()
    await store.load(LARGE_ARTISTS)
    const paginate = paginator()
    expect(paginate.cache.budget).toBe(16 * MiB)
    // Pages of 1 to 3 large artists (75 to 225 KB of JSON each) are kept; 390 of them are far more than 16 MiB.
    for (let limit = 1; limit <= 3; limit++)
      for (let offset = 0; offset < 130; offset++) {
        const page = { limit, offset }
        const response = paginate('/api/v1/artists', page, await store.artists.list(page))
        expect(response.status).toBe(200)
        expect(paginate.cache.bytes).toBeLessThanOrEqual(16 * MiB)
      }
    expect(paginate.cache.size).toBeGreaterThan(10)
    const kept = paginate.cache.size
    // A page of 100 such artists is 7.5 MB: answered whole, never kept.
    const page = { limit: 100, offset: 0 }
    const response = paginate('/api/v1/artists', page, await store.artists.list(page))
    const body = (await response.json()) as { data: Artist[] }
    expect(body.data).toHaveLength(100)
    expect(body.data[99]?.description).toBe('\u0001'.repeat(10_000))
    expect(paginate.cache.size).toBe(kept)
    expect(paginate.cache.bytes).toBeLessThanOrEqual(16 * MiB)
  })

  test('a kept page is answered again with the same bytes', async () => {
    const store = openMemoryStore()
    await store.load(LARGE_ARTISTS.slice(0, 3))
    const paginate = paginator()
    const page = { limit: 2, offset: 1 }
    const first = await paginate('/api/v1/artists', page, await store.artists.list(page)).text()
    const size = paginate.cache.size
    const again = await paginate('/api/v1/artists', page, await store.artists.list(page)).text()
    expect(again).toBe(first)
    expect(paginate.cache.size).toBe(size)
  })
})

describe('the list pages of the app, as a visitor fills them', () => {
  test('130 large artists, 300 distinct anonymous pages: the heap grows by less than 40 MiB, bounded by bytes', async () => {
    const store = openMemoryStore()
    await store.load(LARGE_ARTISTS)
    const app = createApp({ store, report: () => {} })
    const get = async (path: string) => {
      const response = await app.handle(new Request(`http://localhost${path}`))
      expect(response.status).toBe(200)
      await response.arrayBuffer()
    }
    // Every record serialised once (its text lives as long as the record), and the routes compiled.
    await get('/api/v1/artists?limit=100&offset=0')
    await get('/api/v1/artists?limit=100&offset=100')
    await get('/api/v1/artists/1/albums')
    const before = heapAfterGc()
    // 100 pages of 20 to 29 large artists (1.5 to 2.2 MB each), then 200 of 1 or 2 (75 to 150 KB each).
    for (let i = 0; i < 100; i++) await get(`/api/v1/artists?limit=${20 + (i % 10)}&offset=${i}`)
    for (let i = 0; i < 200; i++) await get(`/api/v1/artists?limit=${1 + (i % 2)}&offset=${i % 130}&sort=name`)
    const grown = heapAfterGc() - before
    expect(grown, `the heap grew by ${(grown / MiB).toFixed(1)} MiB`).toBeLessThan(40 * MiB)
  }, 60_000)
})

describe('the SQL store’s page cache (decoded pages of the artist list)', () => {
  const skip = skipWithoutPostgres()
  let pg: TestPostgres
  let store: SqlStore
  /** A database with the schema and no rows (`reusedDatabase`), emptied again after the file (`recycle`). */
  let database: string
  beforeAll(async () => {
    if (skip) return
    pg = await testPostgres()
    database = await pg.reusedDatabase()
    store = await openSqlStore(pg.url(database), { pool: 4, waitMs: 5000 })
    await store.load(LARGE_ARTISTS)
  }, 60_000)
  afterAll(async () => {
    if (skip) return
    await store?.close()
    await pg.recycle(database)
  })

  /** Reads the same pages over and over with a store that caches them: a page is held only while it is unchanged. */
  const readPages = async (target: Pick<Store, 'artists'>, pages: { limit: number; offset: number }[]) => {
    for (const page of pages) {
      const slice = await target.artists.list(page, { sort: 'name' })
      expect(slice.items.length).toBe(Math.min(page.limit, 130 - page.offset))
    }
  }

  test.skipIf(skip)(
    '200 distinct pages of large artists: the heap grows by less than 40 MiB, bounded by bytes',
    async () => {
      await readPages(store, [{ limit: 1, offset: 0 }])
      const before = heapAfterGc()
      // Pages of 40 to 46 large artists: about 600 KB each as decoded, far more than 16 MiB in all.
      const pages = Array.from({ length: 200 }, (_, i) => ({ limit: 40 + (i % 7), offset: i % 85 }))
      await readPages(store, pages)
      const grown = heapAfterGc() - before
      expect(grown, `the heap grew by ${(grown / MiB).toFixed(1)} MiB`).toBeLessThan(40 * MiB)
    },
    60_000,
  )

  test.skipIf(skip)(
    'the pages read from PostgreSQL, kept by a PageCache: its bytes stay within 16 MiB',
    async () => {
      const cache = new PageCache<Artist>()
      for (let limit = 5; limit <= 25; limit += 5)
        for (let offset = 0; offset < 130; offset += 3) {
          const page = { limit, offset }
          cache.set(`${limit} ${offset}`, '1', await store.artists.list(page))
          expect(cache.bytes).toBeLessThanOrEqual(16 * MiB)
        }
      expect(cache.get('25 129', '1')?.items).toHaveLength(1)
      expect(cache.get('25 129', '2')).toBeUndefined()
      // A page of 100 large artists (over 2 MiB as estimated) is not kept.
      cache.set('100 0', '1', await store.artists.list({ limit: 100, offset: 0 }))
      expect(cache.has('100 0')).toBe(false)
    },
    60_000,
  )
})
