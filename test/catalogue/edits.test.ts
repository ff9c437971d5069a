/**
 * The edits beyond creating and replacing artists: `PATCH` of an artist (a JSON merge patch, RFC 7396), `PUT`,
 * `PATCH` and `DELETE` of an album, each with the credentials and rules of the writes before them, conditional
 * (`If-Match`, `If-None-Match`) and announced on the event stream. Part of the contract suite: over the in-memory
 * store by default, over PostgreSQL with `bun run test:sql`. Every answer is checked against the OpenAPI document.
 */
import { describe, expect, test } from 'bun:test'
import { asService, testApp } from '../helpers.ts'
import { announced } from '../support/announced.ts'

const MERGE_PATCH = { ...asService, 'content-type': 'application/merge-patch+json' }
const NEXT_YEAR = new Date().getUTCFullYear() + 1

/** An app with artist Spinetta (band, description) and his album Artaud (1973), and helpers to send writes. */
async function withAlbum() {
  const app = testApp()
  const artist = await app.call('/api/v1/artists', {
    method: 'POST',
    headers: asService,
    body: { name: 'Luis Alberto Spinetta', band: 'Almendra', description: 'Poet of rock.' },
  })
  const url = `/api/v1/artists/${artist.json.id}`
  const album = await app.call(`${url}/albums`, {
    method: 'POST',
    headers: asService,
    body: { name: 'Artaud', year: 1973, image: '/covers/albums/1.svg' },
  })
  const send = (method: string, path: string, body?: unknown, headers: Record<string, string> = asService) =>
    app.call(path, { method, headers, body })
  return { ...app, send, url, albumUrl: `${url}/albums/${album.json.id}`, artist, album }
}

describe('PATCH /api/v1/artists/{id}: a JSON merge patch', () => {
  test('a field sent replaces its value, null removes it, a field left out stays; the answer carries the new tag', async () => {
    const { send, url, call, artist } = await withAlbum()
    const patched = await send('PATCH', url, { band: 'Pescado Rabioso', description: null }, MERGE_PATCH)
    expect(patched.status).toBe(200)
    expect(patched.json).toEqual({ id: artist.json.id, name: 'Luis Alberto Spinetta', band: 'Pescado Rabioso' })
    expect(patched.headers.get('etag')).not.toBe(artist.headers.get('etag'))
    const read = await call(url)
    expect(read.json).toEqual(patched.json)
    expect(read.headers.get('etag')).toBe(patched.headers.get('etag'))
  })

  test('plain application/json is taken as a merge patch too; an empty patch changes nothing', async () => {
    const { send, url, artist } = await withAlbum()
    const patched = await send('PATCH', url, { name: '  Spinetta  ' })
    expect(patched.status).toBe(200)
    expect(patched.json.name).toBe('Spinetta')
    expect(patched.json.band).toBe('Almendra')
    const empty = await send('PATCH', url, {}, MERGE_PATCH)
    expect(empty.json).toEqual(patched.json)
    expect(empty.headers.get('etag')).toBe(patched.headers.get('etag'))
    expect(artist.headers.get('etag')).not.toBe(patched.headers.get('etag'))
  })

  test('a JSON Patch (RFC 6902) or another type is 415 with Accept-Patch', async () => {
    const { send, url } = await withAlbum()
    const refused = await send('PATCH', url, '[{"op":"remove","path":"/band"}]', {
      ...asService,
      'content-type': 'application/json-patch+json',
    })
    expect(refused.status).toBe(415)
    expect(refused.headers.get('accept-patch')).toBe('application/merge-patch+json, application/json')
    expect(refused.json.detail).toContain('merge patch')
  })

  test('each field sent is held to the rules of PUT; the problem names each field, and nothing changes', async () => {
    const { send, url, call } = await withAlbum()
    const refused = await send('PATCH', url, { name: null, band: 'x'.repeat(201), genre: 'rock' }, MERGE_PATCH)
    expect(refused.status).toBe(400)
    expect(refused.json.errors.map((error: { pointer: string }) => error.pointer).sort()).toEqual([
      '/band',
      '/genre',
      '/name',
    ])
    expect((await send('PATCH', url, { name: '   ' }, MERGE_PATCH)).status).toBe(400)
    expect((await send('PATCH', url, { image: 'not a url' }, MERGE_PATCH)).status).toBe(400)
    const id = await send('PATCH', url, { id: 999, band: 'X' }, MERGE_PATCH)
    expect(id.status).toBe(400)
    expect(id.json.errors).toEqual([{ pointer: '/id', detail: expect.stringContaining('equal to the artist id') }])
    expect((await call(url)).json.band).toBe('Almendra')
  })

  test('credentials as for PUT (401 without), an unknown artist 404', async () => {
    const { send, url } = await withAlbum()
    const anonymous = await send('PATCH', url, { band: 'X' }, { 'content-type': 'application/merge-patch+json' })
    expect(anonymous.status).toBe(401)
    expect(anonymous.headers.get('www-authenticate')).toBe('Bearer realm="rock-legends"')
    expect((await send('PATCH', '/api/v1/artists/999', { band: 'X' }, MERGE_PATCH)).status).toBe(404)
  })

  test('If-Match: the current tag applies it; a stale one is 412 with the current tag', async () => {
    const { send, url, artist } = await withAlbum()
    const tag = artist.headers.get('etag') as string
    const first = await send('PATCH', url, { band: 'Invisible' }, { ...MERGE_PATCH, 'if-match': tag })
    expect(first.status).toBe(200)
    const stale = await send('PATCH', url, { band: 'Jade' }, { ...MERGE_PATCH, 'if-match': tag })
    expect(stale.status).toBe(412)
    expect(stale.headers.get('etag')).toBe(first.headers.get('etag'))
    expect((await send('PATCH', url, { band: 'X' }, { ...MERGE_PATCH, 'if-none-match': '*' })).status).toBe(412)
  })

  test('patches sent together each apply to what the others wrote: none is lost', async () => {
    const { send, url, call } = await withAlbum()
    const answers = await Promise.all([
      send('PATCH', url, { band: 'Invisible' }, MERGE_PATCH),
      send('PATCH', url, { description: 'Guitarist.' }, MERGE_PATCH),
      send('PATCH', url, { image: '/covers/artists/1.svg' }, MERGE_PATCH),
    ])
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200])
    expect((await call(url)).json).toMatchObject({
      band: 'Invisible',
      description: 'Guitarist.',
      image: '/covers/artists/1.svg',
    })
  })

  test('is announced as artist-updated', async () => {
    const { send, url, store } = await withAlbum()
    const changes = await announced(store, () => send('PATCH', url, { band: 'Invisible' }, MERGE_PATCH))
    expect(changes).toEqual([{ kind: 'artist-updated', artist: expect.objectContaining({ band: 'Invisible' }) }])
  })
})

describe('PUT /api/v1/artists/{id}/albums/{albumId}', () => {
  test('replaces every field: those left out become unset; the answer carries the new tag', async () => {
    const { send, albumUrl, call, album } = await withAlbum()
    const replaced = await send('PUT', albumUrl, { name: 'Artaud (remastered)' })
    expect(replaced.status).toBe(200)
    expect(replaced.json).toEqual({
      id: album.json.id,
      artistId: album.json.artistId,
      name: 'Artaud (remastered)',
      kind: 'studio',
    })
    expect(replaced.headers.get('etag')).not.toBe(album.headers.get('etag'))
    expect((await call(albumUrl)).json).toEqual(replaced.json)
  })

  test('held to the rules of adding an album: the year bound, unknown fields, a different id', async () => {
    const { send, albumUrl, call } = await withAlbum()
    expect((await send('PUT', albumUrl, { name: 'A', year: NEXT_YEAR + 1 })).json.errors).toEqual([
      { pointer: '/year', detail: expect.stringContaining(String(NEXT_YEAR)) },
    ])
    expect((await send('PUT', albumUrl, { name: 'A', year: NEXT_YEAR })).status).toBe(200)
    expect((await send('PUT', albumUrl, { name: 'A', genre: 'rock' })).status).toBe(400)
    expect((await send('PUT', albumUrl, { name: 'A', kind: 'bootleg' })).json.errors).toEqual([
      { pointer: '/kind', detail: expect.stringContaining('one of studio, live, ep') },
    ])
    expect((await send('PUT', albumUrl, { id: 999, name: 'A' })).json.errors[0].pointer).toBe('/id')
    expect((await send('PUT', albumUrl, {})).status).toBe(400)
    expect((await call(albumUrl)).json.year).toBe(NEXT_YEAR)
  })

  test("an unknown album, or another artist's, is 404 (never created); without credentials 401", async () => {
    const { send, url, albumUrl } = await withAlbum()
    const other = await send('POST', '/api/v1/artists', { name: 'Charly García' })
    expect((await send('PUT', `/api/v1/artists/${other.json.id}/albums/1`, { name: 'A' })).status).toBe(404)
    expect((await send('PUT', `${url}/albums/999`, { name: 'A' })).status).toBe(404)
    expect((await send('PUT', albumUrl, { name: 'A' }, {})).status).toBe(401)
  })

  test('If-Match and If-None-Match on the album: 412 with its current tag, and nothing changes', async () => {
    const { send, albumUrl, album, call } = await withAlbum()
    const tag = album.headers.get('etag') as string
    expect((await send('PUT', albumUrl, { name: 'A' }, { ...asService, 'if-none-match': '*' })).status).toBe(412)
    const first = await send('PUT', albumUrl, { name: 'B' }, { ...asService, 'if-match': tag })
    expect(first.status).toBe(200)
    const stale = await send('PUT', albumUrl, { name: 'C' }, { ...asService, 'if-match': tag })
    expect(stale.status).toBe(412)
    expect(stale.headers.get('etag')).toBe(first.headers.get('etag'))
    expect(stale.json.detail).toContain('changed since you read it')
    expect((await call(albumUrl)).json.name).toBe('B')
  })
})

describe('PATCH /api/v1/artists/{id}/albums/{albumId}', () => {
  test('null removes a field, a field left out stays, the year bound holds', async () => {
    const { send, albumUrl, album } = await withAlbum()
    const patched = await send('PATCH', albumUrl, { year: null, name: 'Artaud (1973)' }, MERGE_PATCH)
    expect(patched.status).toBe(200)
    expect(patched.json).toEqual({ ...album.json, name: 'Artaud (1973)', year: undefined })
    expect(patched.json).not.toHaveProperty('year')
    expect((await send('PATCH', albumUrl, { year: 1899 }, MERGE_PATCH)).status).toBe(400)
    expect((await send('PATCH', albumUrl, { name: null }, MERGE_PATCH)).json.errors[0].pointer).toBe('/name')
  })

  test('a stale If-Match is 412; an unknown album 404', async () => {
    const { send, url, albumUrl } = await withAlbum()
    expect((await send('PATCH', albumUrl, { year: 1974 }, { ...MERGE_PATCH, 'if-match': '"old"' })).status).toBe(412)
    expect((await send('PATCH', `${url}/albums/999`, { year: 1974 }, MERGE_PATCH)).status).toBe(404)
  })
})

describe('DELETE /api/v1/artists/{id}/albums/{albumId}', () => {
  test('204, then the album is gone: 404 to read or delete again, out of the list and its count', async () => {
    const { send, url, albumUrl, call } = await withAlbum()
    await send('POST', `${url}/albums`, { name: 'Pescado 2' })
    const removed = await send('DELETE', albumUrl)
    expect(removed.status).toBe(204)
    expect(removed.text).toBe('')
    expect((await call(albumUrl)).status).toBe(404)
    expect((await send('DELETE', albumUrl)).status).toBe(404)
    const list = await call(`${url}/albums`)
    expect(list.json.meta.total).toBe(1)
    expect(list.json.data.map((album: { name: string }) => album.name)).toEqual(['Pescado 2'])
  })

  test("needs credentials (401); another artist's album is 404; a stale If-Match is 412 and removes nothing", async () => {
    const { send, albumUrl, call } = await withAlbum()
    expect((await send('DELETE', albumUrl, undefined, {})).status).toBe(401)
    const other = await send('POST', '/api/v1/artists', { name: 'Charly García' })
    expect((await send('DELETE', `/api/v1/artists/${other.json.id}/albums/1`)).status).toBe(404)
    const stale = await send('DELETE', albumUrl, undefined, { ...asService, 'if-match': '"old"' })
    expect(stale.status).toBe(412)
    expect(stale.headers.get('etag')).toBe((await call(albumUrl)).headers.get('etag'))
    expect((await call(albumUrl)).status).toBe(200)
  })

  test('the deprecated delete of an artist still deletes nothing', async () => {
    const { send, url, call } = await withAlbum()
    const refused = await send('DELETE', url)
    expect(refused.status).toBe(400)
    expect(refused.headers.get('deprecation')).toBeTruthy()
    expect((await call(url)).status).toBe(200)
  })

  test('a replace and a removal are announced: album-updated, then album-deleted with the album as it was', async () => {
    const { send, albumUrl, store, album } = await withAlbum()
    const changes = await announced(
      store,
      async () => {
        await send('PATCH', albumUrl, { year: 1974 }, MERGE_PATCH)
        await send('DELETE', albumUrl)
      },
      2,
    )
    const updated = { ...album.json, year: 1974 }
    expect(changes).toEqual([
      { kind: 'album-updated', album: expect.objectContaining(updated) },
      { kind: 'album-deleted', album: expect.objectContaining(updated) },
    ])
  })
})
