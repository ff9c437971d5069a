/**
 * RFC 9110 preconditions (section 13) on every method of the catalogue: `If-Match` (strong comparison) and
 * `If-None-Match` (weak comparison, `*` included) on reads, creates and replacements, in the order of 13.2.2, each
 * 412 carrying the current `ETag`. Part of the contract suite: over the in-memory store by default, over PostgreSQL
 * with `bun run test:sql`. Every answer goes through `call`, which checks it against the OpenAPI document.
 */
import { describe, expect, test } from 'bun:test'
import { asService, testApp } from '../helpers.ts'

const spinetta = { name: 'Luis Alberto Spinetta', band: 'Almendra' }
const OTHER = '"q3ZCr0YdUuq1pW4pVfDgxw"'

/** An app with one artist and one album of it, with their paths and tags. */
async function withAlbum() {
  const app = testApp()
  const artist = await app.call('/api/v1/artists', { method: 'POST', headers: asService, body: spinetta })
  const url = `/api/v1/artists/${artist.json.id}`
  const album = await app.call(`${url}/albums`, { method: 'POST', headers: asService, body: { name: 'Artaud' } })
  const get = (path: string, headers: Record<string, string> = {}, method = 'GET') =>
    app.call(path, { method, headers })
  const send = (method: string, path: string, body: unknown, headers: Record<string, string> = {}) =>
    app.call(path, { method, headers: { ...asService, ...headers }, body })
  return {
    ...app,
    get,
    send,
    url,
    albumUrl: `${url}/albums/${album.json.id}`,
    artistTag: artist.headers.get('etag') as string,
    albumTag: album.headers.get('etag') as string,
  }
}

const expect412 = (answer: { status: number; headers: Headers; json: { type?: string } }, etag: string) => {
  expect(answer.status).toBe(412)
  expect(answer.headers.get('content-type')).toBe('application/problem+json')
  expect(answer.json.type).toBe('/problems/precondition-failed')
  expect(answer.headers.get('etag')).toBe(etag)
}

describe('If-Match on reads (GET, HEAD)', () => {
  test.each([
    ['the current tag', 200, (tag: string) => tag],
    ['a list holding it', 200, (tag: string) => `${OTHER}, ${tag}`],
    ['*', 200, () => '*'],
    ['another tag', 412, () => OTHER],
    ['the current tag marked weak', 412, (tag: string) => `W/${tag}`],
  ])('an artist and an album with %s: %d', async (_, status, header) => {
    const { get, url, albumUrl, artistTag, albumTag } = await withAlbum()
    for (const [path, tag] of [
      [url, artistTag],
      [albumUrl, albumTag],
    ] as const) {
      const answer = await get(path, { 'if-match': header(tag) })
      expect(answer.status).toBe(status)
      expect(answer.headers.get('etag')).toBe(tag)
    }
  })

  test('HEAD answers as GET does: 412 with the current tag when If-Match does not hold', async () => {
    const { get, url, artistTag } = await withAlbum()
    const answer = await get(url, { 'if-match': OTHER }, 'HEAD')
    expect(answer.status).toBe(412)
    expect(answer.headers.get('etag')).toBe(artistTag)
    expect((await get(url, { 'if-match': artistTag }, 'HEAD')).status).toBe(200)
  })

  test('a list page has a weak tag only: If-Match with any tag is 412 (strong comparison), * is 200', async () => {
    const { get, url } = await withAlbum()
    for (const path of ['/api/v1/artists', `${url}/albums`]) {
      const page = await get(path)
      const tag = page.headers.get('etag') as string
      expect412(await get(path, { 'if-match': tag }), tag)
      expect((await get(path, { 'if-match': '*' })).status).toBe(200)
    }
  })

  test('If-Match is evaluated before If-None-Match (RFC 9110 13.2.2): a failing one is 412, not 304', async () => {
    const { get, url, artistTag } = await withAlbum()
    expect412(await get(url, { 'if-match': OTHER, 'if-none-match': artistTag }), artistTag)
    expect((await get(url, { 'if-match': artistTag, 'if-none-match': artistTag })).status).toBe(304)
  })

  test('an unknown artist or album is 404 whatever the conditions say (13.2.1)', async () => {
    const { get, url } = await withAlbum()
    expect((await get('/api/v1/artists/999', { 'if-match': OTHER })).status).toBe(404)
    expect((await get(`${url}/albums/999`, { 'if-match': '*' })).status).toBe(404)
  })
})

describe('If-None-Match on PUT /api/v1/artists/{id}', () => {
  test('* on an existing artist: 412 with its tag, and nothing changes', async () => {
    const { get, send, url, artistTag } = await withAlbum()
    const answer = await send('PUT', url, { ...spinetta, band: 'Invisible' }, { 'if-none-match': '*' })
    expect412(answer, artistTag)
    expect(answer.json.detail).toContain('If-None-Match')
    expect((await get(url)).json.band).toBe(spinetta.band)
  })

  test('* on an unknown artist: still 404, since PUT never creates one here', async () => {
    const { send } = await withAlbum()
    expect((await send('PUT', '/api/v1/artists/999', spinetta, { 'if-none-match': '*' })).status).toBe(404)
  })

  test('the current tag (weakly compared) is 412; another tag lets the replacement through', async () => {
    const { send, url, artistTag } = await withAlbum()
    expect412(await send('PUT', url, { ...spinetta, band: 'X' }, { 'if-none-match': `W/${artistTag}` }), artistTag)
    const through = await send('PUT', url, { ...spinetta, band: 'Invisible' }, { 'if-none-match': OTHER })
    expect(through.status).toBe(200)
    expect(through.json.band).toBe('Invisible')
  })

  test('If-Match and If-None-Match together must both hold', async () => {
    const { send, url, artistTag } = await withAlbum()
    const both = { 'if-match': artistTag, 'if-none-match': artistTag }
    expect412(await send('PUT', url, spinetta, both), artistTag)
    expect((await send('PUT', url, spinetta, { 'if-match': artistTag, 'if-none-match': OTHER })).status).toBe(200)
  })
})

describe('conditions on POST /api/v1/artists/{id}/albums: the artist is the target', () => {
  test("If-Match with the artist's tag adds the album; a stale tag is 412 with the artist's tag, and adds none", async () => {
    const { get, send, url, artistTag } = await withAlbum()
    const added = await send('POST', `${url}/albums`, { name: 'Pescado 2' }, { 'if-match': artistTag })
    expect(added.status).toBe(201)
    const renamed = await send('PUT', url, { ...spinetta, band: 'Pescado Rabioso' })
    const stale = await send('POST', `${url}/albums`, { name: 'Durazno sangrando' }, { 'if-match': artistTag })
    expect412(stale, renamed.headers.get('etag') as string)
    expect(stale.json.detail).toContain('changed since you read it')
    expect((await get(`${url}/albums`)).json.meta.total).toBe(2)
  })

  test('If-None-Match: * is 412 (the artist exists), and an unknown artist is 404 whatever the conditions', async () => {
    const { send, url, artistTag } = await withAlbum()
    expect412(await send('POST', `${url}/albums`, { name: 'A' }, { 'if-none-match': '*' }), artistTag)
    expect((await send('POST', '/api/v1/artists/999/albums', { name: 'A' }, { 'if-match': OTHER })).status).toBe(404)
  })

  test('ten adds at once with the same If-Match and a PUT among them: no add after the PUT succeeds', async () => {
    const { get, send, url, artistTag } = await withAlbum()
    const adds = Array.from({ length: 10 }, (_, i) =>
      send('POST', `${url}/albums`, { name: `Album ${i}` }, { 'if-match': artistTag }),
    )
    const put = send('PUT', url, { ...spinetta, band: 'Invisible' })
    const answers = await Promise.all(adds)
    expect((await put).status).toBe(200)
    const added = answers.filter((answer) => answer.status === 201).length
    expect(added + answers.filter((answer) => answer.status === 412).length).toBe(10)
    expect((await get(`${url}/albums`)).json.meta.total).toBe(1 + added)
  })
})

describe('conditions on POST /api/v1/artists: the artist collection is the target', () => {
  test('If-Match: * and If-None-Match naming another version create; a tag in If-Match is 412 (a weak tag never matches)', async () => {
    const { send, get } = await withAlbum()
    expect((await send('POST', '/api/v1/artists', { name: 'A' }, { 'if-match': '*' })).status).toBe(201)
    expect((await send('POST', '/api/v1/artists', { name: 'B' }, { 'if-none-match': OTHER })).status).toBe(201)
    const page = (await get('/api/v1/artists')).headers.get('etag') as string
    expect412(await send('POST', '/api/v1/artists', { name: 'C' }, { 'if-match': page }), page)
    expect((await get('/api/v1/artists')).json.meta.total).toBe(3)
  })

  test('If-None-Match: * or the first page tag is 412 with that tag, and creates nothing', async () => {
    const { send, get } = await withAlbum()
    const page = (await get('/api/v1/artists')).headers.get('etag') as string
    expect412(await send('POST', '/api/v1/artists', { name: 'A' }, { 'if-none-match': '*' }), page)
    expect412(await send('POST', '/api/v1/artists', { name: 'A' }, { 'if-none-match': page }), page)
    expect((await get('/api/v1/artists')).json.meta.total).toBe(1)
  })
})
