/**
 * The cost of reading an artist's albums is bounded by constants, not by how many albums the artist has. Sorting by
 * name makes each album's name key once, not on every comparison (which costs 2 s for one `?limit=1&sort=name` over
 * 20,000 albums), and the artist page shows one page of albums, not all of them (178 MB for 20,000).
 * The counts here are deterministic (calls to `String.prototype.normalize`, which every name key starts with, and
 * items on a page); bench/album-costs.ts measures the time.
 */
import { afterEach, describe, expect, spyOn, test } from 'bun:test'
import { openMemoryStore } from '../../src/store/document/memory.ts'
import type { Store } from '../../src/store/store.ts'
import { ALBUMS_PER_PAGE } from '../../src/web/artist-page.ts'
import { testApp } from '../helpers.ts'

const BROWSER = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' }

/** Loads one artist with `count` albums named `name(i)`, years cycling through 1970–1999, the first without one. */
async function discography(store: Store, count: number, name = (i: number) => `Disco ${i}`) {
  const albums = Array.from({ length: count }, (_, i) => ({
    name: name(i),
    year: i === 0 ? undefined : 1970 + (i % 30),
    image: null,
  }))
  await store.load([{ name: 'Prolific', image: null, albums }])
}

let normalize: ReturnType<typeof spyOn> | undefined
afterEach(() => {
  normalize?.mockRestore()
  normalize = undefined
})

/** How many times `String.prototype.normalize` runs while `work` does (it still runs: the spy only counts). */
async function normalizations(work: () => Promise<unknown>): Promise<number> {
  normalize = spyOn(String.prototype, 'normalize')
  try {
    await work()
    return normalize.mock.calls.length
  } finally {
    normalize.mockRestore()
    normalize = undefined
  }
}

describe("an artist's albums by name", () => {
  test('each name key is made once per album, and not again for the next request', async () => {
    const count = 2000
    const { call, store } = testApp(openMemoryStore())
    // Names whose order is not their ids' order, so that sorting them takes about count × log2(count) comparisons.
    await discography(store, count, (i) => `Disco ${(i * 7919) % count}`)
    const list = (query: string) => call(`/api/v1/artists/1/albums?${query}`)
    // What a request costs without any sorting by name: the baseline of other normalisations.
    const unsorted = await normalizations(() => list('limit=1'))
    const first = await normalizations(async () => {
      const { status, json } = await list('limit=1&sort=name')
      expect(status).toBe(200)
      expect(json.data[0].name).toBe('Disco 0')
    })
    expect(first - unsorted).toBeLessThanOrEqual(count)
    const again = await normalizations(() => list('limit=1&offset=7&sort=name'))
    expect(again - unsorted).toBeLessThanOrEqual(0)
    // A search folds each name once too (the first time), and needs no sort of its matches.
    expect((await normalizations(() => list('limit=1&sort=name&q=disco'))) - unsorted).toBeLessThanOrEqual(count + 1)
    expect((await normalizations(() => list('limit=1&sort=name&q=disco 1'))) - unsorted).toBeLessThanOrEqual(1)
    // The order is the one the keys give, searched or not.
    const { json } = await list('limit=3&offset=10&sort=name&q=disco')
    expect(json.data.map((album: { name: string }) => album.name)).toEqual(['Disco 10', 'Disco 11', 'Disco 12'])
    expect(json.meta.total).toBe(count)
  })

  test('a new album is placed in the kept orders', async () => {
    const { call, store } = testApp(openMemoryStore())
    await discography(store, 5)
    expect((await call('/api/v1/artists/1/albums?sort=name')).json.meta.total).toBe(5)
    await store.albums.insert({ artistId: 1, name: 'Aaa', year: 1960 })
    const byName = (await call('/api/v1/artists/1/albums?sort=name')).json
    expect(byName.meta.total).toBe(6)
    expect(byName.data[0].name).toBe('Aaa')
    expect((await call('/api/v1/artists/1/albums?sort=year')).json.data[0].name).toBe('Aaa')
    expect((await call('/api/v1/artists/1/albums?sort=-year&q=aaa')).json.data[0].name).toBe('Aaa')
  })
})

describe('GET /artists/{id} with many albums', () => {
  // Names of 200 characters that HTML escapes (5 bytes each, in three places per album), as in the report.
  const longName = (i: number) => `${String(i).padStart(4, '0')}${'&'.repeat(196)}`

  test(`shows ${ALBUMS_PER_PAGE} albums a page, by year, linking the next and previous pages`, async () => {
    const count = 1000
    const { call, store } = testApp(openMemoryStore())
    await discography(store, count, longName)
    const page = async (query: string) => {
      const { status, text } = await call(`/artists/1${query}`, { headers: BROWSER })
      expect(status).toBe(200)
      return { text, items: text.match(/<li id="album-\d+">/g)?.length ?? 0 }
    }
    const first = await page('')
    expect(first.items).toBe(ALBUMS_PER_PAGE)
    // Bounded by the page, whatever the artist holds: 1,000 such albums on one page are over 3 MB.
    expect(first.text.length).toBeLessThan(500_000)
    expect(first.text).toContain(`<p class="summary">${count} albums; showing 1–${ALBUMS_PER_PAGE}.</p>`)
    expect(first.text).toContain('<nav class="pager" aria-label="Pages of albums">')
    expect(first.text).toContain('<a rel="next" href="/artists/1?page=2#albums-title">Next albums →</a>')
    expect(first.text).not.toContain('rel="prev"')
    expect(first.text).toContain(`<span>Page 1 of ${count / ALBUMS_PER_PAGE}</span>`)
    // By year: the first page holds the oldest.
    expect(first.text).toContain('<p class="year">1970</p>')
    expect(first.text).not.toContain('<p class="year">1999</p>')

    const last = await page(`?page=${count / ALBUMS_PER_PAGE}`)
    expect(last.items).toBe(ALBUMS_PER_PAGE)
    expect(last.text).toContain(`<ol class="albums" start="${count - ALBUMS_PER_PAGE + 1}">`)
    expect(last.text).toContain(`<a rel="prev" href="/artists/1?page=${count / ALBUMS_PER_PAGE - 1}#albums-title">`)
    expect(last.text).not.toContain('rel="next"')
    // The album without a year comes last of all.
    expect(last.text.match(/<p class="year">(.*?)<\/p>/g)?.at(-1)).toBe('<p class="year">Year unknown</p>')

    const beyond = await page(`?page=${count / ALBUMS_PER_PAGE + 1}`)
    expect(beyond.items).toBe(0)
    expect(beyond.text).toContain(
      `There is no page ${count / ALBUMS_PER_PAGE + 1} of albums. <a href="/artists/1#albums-title">Go to the first page</a>`,
    )
  })

  test('an artist whose albums fit on one page has no pager', async () => {
    const { call, store } = testApp(openMemoryStore())
    await discography(store, ALBUMS_PER_PAGE)
    const { text } = await call('/artists/1', { headers: BROWSER })
    expect(text.match(/<li id="album-\d+">/g)).toHaveLength(ALBUMS_PER_PAGE)
    expect(text).not.toContain('class="pager"')
    expect(text).not.toContain('class="summary"')
  })
})
