/**
 * Conditional requests: entity tags on reads and writes, `If-None-Match` → 304, `If-Match` on PUT → 412. Part of the
 * contract suite: over the in-memory store by default, over PostgreSQL with `bun run test:sql` (or
 * `ROCK_LEGENDS_TEST_BACKEND=postgres`); the last block runs the same checks over a JSON data file, across a restart.
 * Every answer goes through `call`, which checks it against the OpenAPI document.
 */
import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { createApp } from '../../src/app.ts'
import { captureStartState } from '../../src/fixtures/reset.ts'
import { openJsonFileStore } from '../../src/store/json-file/json-file.ts'
import type { Store } from '../../src/store/store.ts'
import { asService, SERVICE_KEY, testApp } from '../helpers.ts'
import { removeDir, tempDir } from '../support/binary.ts'

const spinetta = { name: 'Luis Alberto Spinetta', band: 'Almendra' }
const STRONG = /^"[A-Za-z0-9_-]{22}"$/
const WEAK = /^W\/"[A-Za-z0-9_-]{22}"$/

/** An app over `store` (this run's backend by default) with one artist and one album, and its tags. */
async function withArtist(store?: Store) {
  const app = testApp(store)
  const created = await app.call('/api/v1/artists', { method: 'POST', headers: asService, body: spinetta })
  expect(created.status).toBe(201)
  const id = created.json.id as number
  const album = await app.call(`/api/v1/artists/${id}/albums`, {
    method: 'POST',
    headers: asService,
    body: { name: 'Artaud', year: 1973 },
  })
  expect(album.status).toBe(201)
  const put = (body: object, headers: Record<string, string> = {}) =>
    app.call(`/api/v1/artists/${id}`, { method: 'PUT', headers: { ...asService, ...headers }, body })
  const get = (path: string, headers: Record<string, string> = {}) => app.call(path, { headers })
  return { ...app, id, created, album, put, get, url: `/api/v1/artists/${id}` }
}

describe('entity tags on reads', () => {
  test('an artist carries a strong tag, the one its creation answered, and the same on every read', async () => {
    const { get, url, created } = await withArtist()
    const first = await get(url)
    expect(first.headers.get('etag')).toMatch(STRONG)
    expect(first.headers.get('etag')).toBe(created.headers.get('etag'))
    expect(first.headers.get('cache-control')).toBe('no-cache')
    expect((await get(url)).headers.get('etag')).toBe(first.headers.get('etag'))
  })

  test('an album carries a strong tag, the one its creation answered', async () => {
    const { get, id, album } = await withArtist()
    const read = await get(`/api/v1/artists/${id}/albums/${album.json.id}`)
    expect(read.headers.get('etag')).toMatch(STRONG)
    expect(read.headers.get('etag')).toBe(album.headers.get('etag'))
  })

  test.each([
    ['the artist list', () => '/api/v1/artists'],
    ['a searched, sorted artist list', () => '/api/v1/artists?q=spinetta&sort=name&limit=5'],
    ['an album list', (id: number) => `/api/v1/artists/${id}/albums`],
  ])('%s page carries a weak tag of its bytes', async (_, path) => {
    const { get, id } = await withArtist()
    const first = await get(path(id))
    expect(first.headers.get('etag')).toMatch(WEAK)
    expect(first.headers.get('cache-control')).toBe('no-cache')
    expect((await get(path(id))).headers.get('etag')).toBe(first.headers.get('etag'))
  })

  test('tags differ between artists, and between an artist before and after a change', async () => {
    const { call, get, put, url } = await withArtist()
    const other = await call('/api/v1/artists', { method: 'POST', headers: asService, body: spinetta })
    const before = (await get(url)).headers.get('etag')
    expect(other.headers.get('etag')).not.toBe(before)
    expect((await put({ ...spinetta, band: 'Pescado Rabioso' })).headers.get('etag')).not.toBe(before)
  })
})

describe('If-None-Match', () => {
  // Weak comparison (RFC 9110 13.1.2): W/"x" matches "x", a list matches if any member does, * matches anything.
  test.each([
    ['the tag', (tag: string) => tag],
    ['the tag marked weak', (tag: string) => `W/${tag}`],
    ['a list holding the tag', (tag: string) => `"other", W/"more" , ${tag}`],
    ['*', () => '*'],
  ])('naming %s answers 304 with no body, the same tag and Cache-Control', async (_, header) => {
    const { get, url } = await withArtist()
    const tag = (await get(url)).headers.get('etag') as string
    const answer = await get(url, { 'if-none-match': header(tag) })
    expect(answer.status).toBe(304)
    expect(answer.text).toBe('')
    expect(answer.headers.get('etag')).toBe(tag)
    expect(answer.headers.get('cache-control')).toBe('no-cache')
    expect(answer.headers.get('content-type')).toBeNull()
  })

  test.each([
    ['another tag', '"q3ZCr0YdUuq1pW4pVfDgxw"'],
    ['a malformed value', 'not-a-tag'],
    ['an empty value', ''],
  ])('naming %s answers 200 with the artist', async (_, header) => {
    const { get, url } = await withArtist()
    const answer = await get(url, { 'if-none-match': header })
    expect(answer.status).toBe(200)
    expect(answer.json.name).toBe(spinetta.name)
  })

  test('a list page answers 304 while unchanged, and 200 with a new tag once a write changes it', async () => {
    const { call, get, id } = await withArtist()
    for (const path of ['/api/v1/artists?limit=5', `/api/v1/artists/${id}/albums`]) {
      const tag = (await get(path)).headers.get('etag') as string
      const again = await get(path, { 'if-none-match': tag })
      expect(again.status).toBe(304)
      expect(again.headers.get('etag')).toBe(tag)
    }
    const artistsTag = (await get('/api/v1/artists?limit=5')).headers.get('etag') as string
    const albumsTag = (await get(`/api/v1/artists/${id}/albums`)).headers.get('etag') as string
    await call('/api/v1/artists', { method: 'POST', headers: asService, body: { name: 'Charly García' } })
    await call(`/api/v1/artists/${id}/albums`, {
      method: 'POST',
      headers: asService,
      body: { name: 'Alma de diamante' },
    })
    const artists = await get('/api/v1/artists?limit=5', { 'if-none-match': artistsTag })
    expect(artists.status).toBe(200)
    expect(artists.json.meta.total).toBe(2)
    expect(artists.headers.get('etag')).not.toBe(artistsTag)
    const albums = await get(`/api/v1/artists/${id}/albums`, { 'if-none-match': albumsTag })
    expect(albums.status).toBe(200)
    expect(albums.json.data).toHaveLength(2)
  })

  test('an unknown artist is 404 whatever If-None-Match says', async () => {
    const { get } = await withArtist()
    expect((await get('/api/v1/artists/999', { 'if-none-match': '*' })).status).toBe(404)
  })
})

describe('If-Match on PUT /api/v1/artists/{id}', () => {
  test('the current tag: replaced, and the answer carries the new tag, the one reads now give', async () => {
    const { get, put, url } = await withArtist()
    const tag = (await get(url)).headers.get('etag') as string
    const answer = await put({ ...spinetta, band: 'Invisible' }, { 'if-match': tag })
    expect(answer.status).toBe(200)
    expect(answer.json.band).toBe('Invisible')
    expect(answer.headers.get('etag')).toMatch(STRONG)
    expect(answer.headers.get('etag')).not.toBe(tag)
    expect((await get(url)).headers.get('etag')).toBe(answer.headers.get('etag'))
  })

  test('a tag no longer current: 412, the current tag in ETag, and nothing changed', async () => {
    const { get, put, url, id } = await withArtist()
    const read = (await get(url)).headers.get('etag') as string
    const saved = await put({ ...spinetta, band: 'Pescado Rabioso' }, { 'if-match': read })
    const stale = await put({ ...spinetta, band: 'Spinetta Jade' }, { 'if-match': read })
    expect(stale.status).toBe(412)
    expect(stale.headers.get('content-type')).toBe('application/problem+json')
    expect(stale.headers.get('etag')).toBe(saved.headers.get('etag'))
    expect(stale.json).toMatchObject({ type: '/problems/precondition-failed', status: 412 })
    expect(stale.json.detail).toContain(`Artist ${id} changed since you read it`)
    expect(stale.json.detail).toContain(saved.headers.get('etag'))
    const now = await get(url)
    expect(now.json.band).toBe('Pescado Rabioso')
    expect(now.headers.get('etag')).toBe(saved.headers.get('etag'))
  })

  // Strong comparison (RFC 9110 13.1.1): a weak tag never matches.
  test.each([
    ['a list holding the current tag', 200, (tag: string) => `"old", ${tag}`],
    ['*', 200, () => '*'],
    ['the current tag marked weak', 412, (tag: string) => `W/${tag}`],
    ['another tag', 412, () => '"q3ZCr0YdUuq1pW4pVfDgxw"'],
    ['a malformed value', 412, () => 'Spinetta'],
  ])('naming %s answers %d', async (_, status, header) => {
    const { get, put, url } = await withArtist()
    const tag = (await get(url)).headers.get('etag') as string
    const answer = await put({ ...spinetta, band: 'Invisible' }, { 'if-match': header(tag) })
    expect(answer.status).toBe(status)
    expect((await get(url)).json.band).toBe(status === 200 ? 'Invisible' : spinetta.band)
  })

  test('without If-Match the last write wins, as before', async () => {
    const { put } = await withArtist()
    expect((await put({ ...spinetta, band: 'Invisible' })).status).toBe(200)
    expect((await put({ ...spinetta, band: 'Spinetta Jade' })).status).toBe(200)
  })

  test('an unknown artist is 404, and a body that breaks the rules 400, whatever If-Match says', async () => {
    const { call, put } = await withArtist()
    const unknown = await call('/api/v1/artists/999', {
      method: 'PUT',
      headers: { ...asService, 'if-match': '"x"' },
      body: spinetta,
    })
    expect(unknown.status).toBe(404)
    expect((await put({ name: '' }, { 'if-match': '"x"' })).status).toBe(400)
  })

  test('a replacement that changes nothing keeps the tag, so a writer holding it loses nothing', async () => {
    const { get, put, url } = await withArtist()
    const tag = (await get(url)).headers.get('etag') as string
    const same = await put(spinetta, { 'if-match': tag })
    expect(same.status).toBe(200)
    expect(same.headers.get('etag')).toBe(tag)
  })

  test('ten PUTs at once with the same If-Match: exactly one is saved, the others are 412 naming its tag', async () => {
    const { get, put, url } = await withArtist()
    const tag = (await get(url)).headers.get('etag') as string
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) => put({ ...spinetta, band: `Band ${i}` }, { 'if-match': tag })),
    )
    const saved = answers.filter((answer) => answer.status === 200)
    expect(saved).toHaveLength(1)
    expect(answers.filter((answer) => answer.status === 412)).toHaveLength(9)
    const winner = saved[0]?.headers.get('etag')
    for (const answer of answers) expect(answer.headers.get('etag')).toBe(winner as string)
    expect((await get(url)).json.band).toBe(saved[0]?.json.band)
  })
})

describe('a reset', () => {
  test('never lets a tag of a record it removed match the new record that reuses its id', async () => {
    const store = testApp().store
    const app = createApp({ store, apiKeys: [SERVICE_KEY], reset: await captureStartState(store) })
    const send = (path: string, init: RequestInit = {}) => app.handle(new Request(`http://localhost${path}`, init))
    const create = (name: string) =>
      send('/api/v1/artists', {
        method: 'POST',
        headers: { ...asService, 'content-type': 'application/json' },
        body: JSON.stringify({ name }),
      })
    const first = await create('Before the reset')
    const { id } = (await first.json()) as { id: number }
    const old = first.headers.get('etag') as string
    expect((await send('/__admin/reset', { method: 'POST', headers: asService })).status).toBe(204)
    const second = await create('After the reset')
    expect(((await second.json()) as { id: number }).id).toBe(id)
    expect(second.headers.get('etag')).not.toBe(old)
    expect((await send(`/api/v1/artists/${id}`, { headers: { 'if-none-match': old } })).status).toBe(200)
    const stale = await send(`/api/v1/artists/${id}`, {
      method: 'PUT',
      headers: { ...asService, 'content-type': 'application/json', 'if-match': old },
      body: JSON.stringify({ name: 'Overwritten' }),
    })
    expect(stale.status).toBe(412)
    expect(((await (await send(`/api/v1/artists/${id}`)).json()) as { name: string }).name).toBe('After the reset')
  })

  test('brings back the tag of a record it brings back, and no tag of the changes it undid', async () => {
    const store = testApp().store
    await store.load([{ name: 'Pappo', albums: [] }])
    const app = createApp({ store, apiKeys: [SERVICE_KEY], reset: await captureStartState(store) })
    const send = (path: string, init: RequestInit = {}) => app.handle(new Request(`http://localhost${path}`, init))
    const original = (await send('/api/v1/artists/1')).headers.get('etag') as string
    const changed = await send('/api/v1/artists/1', {
      method: 'PUT',
      headers: { ...asService, 'content-type': 'application/json', 'if-match': original },
      body: JSON.stringify({ name: 'Pappo', band: 'Riff' }),
    })
    const undone = changed.headers.get('etag') as string
    expect((await send('/__admin/reset', { method: 'POST', headers: asService })).status).toBe(204)
    expect((await send('/api/v1/artists/1')).headers.get('etag')).toBe(original)
    const put = (tag: string) =>
      send('/api/v1/artists/1', {
        method: 'PUT',
        headers: { ...asService, 'content-type': 'application/json', 'if-match': tag },
        body: JSON.stringify({ name: 'Pappo', band: 'Aeroblus' }),
      })
    expect((await put(undone)).status).toBe(412)
    expect((await put(original)).status).toBe(200)
  })
})

describe('over a JSON data file', () => {
  let dir: string
  beforeEach(() => {
    dir = tempDir()
  })
  afterEach(() => removeDir(dir))

  test('tags survive a restart, If-Match holds across it, and concurrent PUTs still save one', async () => {
    const file = join(dir, 'db.json')
    const before = await withArtist(await openJsonFileStore(file))
    const tag = (await before.get(before.url)).headers.get('etag') as string
    const listTag = (await before.get('/api/v1/artists')).headers.get('etag') as string
    await before.store.close()

    const after = await withArtistsOf(await openJsonFileStore(file))
    expect((await after.get(before.url)).headers.get('etag')).toBe(tag)
    expect((await after.get(before.url, { 'if-none-match': tag })).status).toBe(304)
    expect((await after.get('/api/v1/artists', { 'if-none-match': listTag })).status).toBe(304)
    const answers = await Promise.all(
      ['Invisible', 'Pescado Rabioso'].map((band) =>
        after.call(before.url, {
          method: 'PUT',
          headers: { ...asService, 'if-match': tag },
          body: { ...spinetta, band },
        }),
      ),
    )
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 412])
    await after.store.close()
  })

  test('a data file of an earlier build (nulls for unset fields) gives the tags its content gives today', async () => {
    const file = join(dir, 'db.json')
    const legacy = {
      version: 1,
      counters: { artists: 1, albums: 1, users: 0, credentials: 0 },
      artists: [{ id: 1, name: 'Pappo', description: null, image: null, band: 'Riff' }],
      albums: [{ id: 1, artistId: 1, name: 'Pappo’s Blues', year: null, image: null }],
      users: [],
      credentials: [],
    }
    await Bun.write(file, JSON.stringify(legacy))
    const old = withArtistsOf(await openJsonFileStore(file))
    const today = testApp()
    await today.store.load([
      { name: 'Pappo', band: 'Riff', image: null, albums: [{ name: 'Pappo’s Blues', image: null }] },
    ])
    for (const path of ['/api/v1/artists/1', '/api/v1/artists/1/albums/1', '/api/v1/artists'])
      expect((await old.get(path)).headers.get('etag')).toBe((await today.call(path)).headers.get('etag') as string)
    await old.store.close()
  })
})

describe('across origins (--cors)', () => {
  test('a browser on an allowed origin may send If-Match and If-None-Match, and read ETag', async () => {
    const store = testApp().store
    await store.load([{ name: 'Pappo', albums: [] }])
    const app = createApp({ store, apiKeys: [SERVICE_KEY], cors: ['https://demo.example'] })
    const origin = { origin: 'https://demo.example' }
    const preflight = await app.handle(
      new Request('http://localhost/api/v1/artists/1', {
        method: 'OPTIONS',
        headers: { ...origin, 'access-control-request-method': 'PUT', 'access-control-request-headers': 'if-match' },
      }),
    )
    expect(preflight.headers.get('access-control-allow-headers')).toContain('If-Match')
    expect(preflight.headers.get('access-control-allow-headers')).toContain('If-None-Match')
    const read = await app.handle(new Request('http://localhost/api/v1/artists/1', { headers: origin }))
    expect(read.headers.get('access-control-expose-headers')).toContain('ETag')
    const again = await app.handle(
      new Request('http://localhost/api/v1/artists/1', {
        headers: { ...origin, 'if-none-match': read.headers.get('etag') as string },
      }),
    )
    expect(again.status).toBe(304)
    expect(again.headers.get('vary')).toBe('Origin')
    expect(again.headers.get('access-control-allow-origin')).toBe('https://demo.example')
  })
})

/** An app over `store` as it is, with the helpers of {@link withArtist}. */
function withArtistsOf(store: Store) {
  const app = testApp(store)
  return { ...app, get: (path: string, headers: Record<string, string> = {}) => app.call(path, { headers }) }
}
