/**
 * `GET /api/v1/artists/{id}/history`: every write of the API (POST, PUT and PATCH of an artist; POST, PUT, PATCH and
 * DELETE of an album) is listed with the credential that made it, as the request log names it, newest first, paged
 * like every list, with a weak ETag. Part of the contract suite: over the in-memory store by default, over
 * PostgreSQL with `bun run test:sql`. Every answer is checked against the OpenAPI document by `call`.
 */
import { describe, expect, test } from 'bun:test'
import { createApp } from '../../src/app.ts'
import { captureStartState } from '../../src/fixtures/reset.ts'
import { HISTORY_PER_ARTIST } from '../../src/model/history.ts'
import { apiKey, bearer, createKey, signedIn } from '../accounts/helpers.ts'
import { asService, SERVICE_KEY, testApp } from '../helpers.ts'
import { testStore } from '../support/backends.ts'

const MERGE = { 'content-type': 'application/merge-patch+json' }

describe('the history of an artist', () => {
  test('each kind of write, with who made it: the service key, a bearer token, a personal key', async () => {
    const { call, store } = testApp()
    const login = await signedIn(call)
    const userId = login.user.id
    const asUser = bearer(login.token)
    const key = await createKey(call, asUser)
    const [token] = (await store.credentials.listByUser(userId)).filter((each) => each.kind === 'token')
    const created = await call('/api/v1/artists', { method: 'POST', headers: asService, body: { name: 'Pappo' } })
    const url = `/api/v1/artists/${created.json.id}`
    expect((await call(url, { method: 'PUT', headers: asUser, body: { name: 'Pappo', band: 'Riff' } })).status).toBe(
      200,
    )
    const patched = await call(url, {
      method: 'PATCH',
      headers: { ...apiKey(key.key), ...MERGE },
      body: { band: null },
    })
    expect(patched.status).toBe(200)
    const album = await call(`${url}/albums`, { method: 'POST', headers: asUser, body: { name: 'Riff I' } })
    const albumUrl = `${url}/albums/${album.json.id}`
    expect(
      (await call(albumUrl, { method: 'PUT', headers: asService, body: { name: 'Riff', year: 1980 } })).status,
    ).toBe(200)
    const albumPatch = { method: 'PATCH', headers: { ...apiKey(key.key), ...MERGE }, body: { year: 1981 } }
    expect((await call(albumUrl, albumPatch)).status).toBe(200)
    expect((await call(albumUrl, { method: 'DELETE', headers: asUser })).status).toBe(204)
    // A refused write is no change.
    expect(
      (await call(url, { method: 'PUT', headers: { ...asService, 'if-match': '"old"' }, body: { name: 'X' } })).status,
    ).toBe(412)

    const history = await call(`${url}/history`, { headers: asService })
    expect(history.status).toBe(200)
    expect(history.headers.get('content-type')).toStartWith('application/json')
    const byToken = `user:${userId}/token:${token?.id}`
    const byKey = `user:${userId}/key:${key.id}`
    expect(history.json.data.map((change: { kind: string; by: string }) => [change.kind, change.by])).toEqual([
      ['album-deleted', byToken],
      ['album-updated', byKey],
      ['album-updated', 'service'],
      ['album-created', byToken],
      ['artist-updated', byKey],
      ['artist-updated', byToken],
      ['artist-created', 'service'],
    ])
    expect(history.json.meta).toEqual({ limit: 10, offset: 0, total: 7, next: null })
    const [deleted, , , , patchedChange, , first] = history.json.data
    expect(deleted.album).toEqual({
      id: album.json.id,
      artistId: created.json.id,
      name: 'Riff',
      year: 1981,
      kind: 'studio',
    })
    expect(patchedChange.artist).toEqual({ id: created.json.id, name: 'Pappo' })
    expect(first.artist).toEqual(created.json)
    expect(Date.parse(first.at)).toBeLessThanOrEqual(Date.parse(deleted.at))
    // Never a secret: neither the token nor the key appears in it.
    expect(history.text).not.toContain(login.token)
    expect(history.text).not.toContain(key.key)
  })

  test('paged like every list: limit, offset, meta.next, and a weak ETag with 304', async () => {
    const { call } = testApp()
    const created = await call('/api/v1/artists', { method: 'POST', headers: asService, body: { name: 'Charly' } })
    const url = `/api/v1/artists/${created.json.id}`
    for (let i = 1; i <= 4; i++) await call(url, { method: 'PUT', headers: asService, body: { name: `Charly ${i}` } })
    const first = await call(`${url}/history?limit=2`, { headers: asService })
    expect(first.json.meta).toEqual({ limit: 2, offset: 0, total: 5, next: `${url}/history?limit=2&offset=2` })
    expect(first.json.data.map((change: { artist: { name: string } }) => change.artist.name)).toEqual([
      'Charly 4',
      'Charly 3',
    ])
    const second = await call(first.json.meta.next, { headers: asService })
    expect(second.json.data.map((change: { artist: { name: string } }) => change.artist.name)).toEqual([
      'Charly 2',
      'Charly 1',
    ])
    const etag = first.headers.get('etag') as string
    expect(etag).toStartWith('W/')
    expect((await call(`${url}/history?limit=2`, { headers: { ...asService, 'if-none-match': etag } })).status).toBe(
      304,
    )
    await call(url, { method: 'PUT', headers: asService, body: { name: 'Charly García' } })
    const after = await call(`${url}/history?limit=2`, { headers: { ...asService, 'if-none-match': etag } })
    expect(after.status).toBe(200)
    expect(after.json.data[0].artist.name).toBe('Charly García')
  })

  test(`keeps the newest ${HISTORY_PER_ARTIST} changes; meta.total says how many are kept`, async () => {
    const { call } = testApp()
    const created = await call('/api/v1/artists', { method: 'POST', headers: asService, body: { name: 'Fito' } })
    const url = `/api/v1/artists/${created.json.id}`
    for (let i = 1; i <= HISTORY_PER_ARTIST; i++)
      await call(url, { method: 'PUT', headers: asService, body: { name: `Fito ${i}` } })
    const page = await call(`${url}/history?limit=100&offset=${HISTORY_PER_ARTIST - 1}`, { headers: asService })
    expect(page.json.meta.total).toBe(HISTORY_PER_ARTIST)
    // The creation was the oldest, and went first.
    expect(page.json.data.map((change: { artist: { name: string } }) => change.artist.name)).toEqual(['Fito 1'])
  })

  test('public like every read; an unknown artist is 404, a malformed id 400', async () => {
    const { call } = testApp()
    const created = await call('/api/v1/artists', { method: 'POST', headers: asService, body: { name: 'Nebbia' } })
    expect((await call('/api/v1/artists/999999/history', { headers: asService })).status).toBe(404)
    expect((await call('/api/v1/artists/abc/history', { headers: asService })).status).toBe(400)
    const anonymous = await call(`/api/v1/artists/${created.json.id}/history`)
    expect(anonymous.status).toBe(200)
    expect(anonymous.json.data[0]).toMatchObject({ kind: 'artist-created', by: 'service' })
  })

  test("an artist's history holds neither another artist's changes nor the seed", async () => {
    const { call, store } = testApp()
    await store.load([{ name: 'Seeded', image: null, albums: [{ name: 'Seed album', image: null }] }])
    const other = await call('/api/v1/artists', { method: 'POST', headers: asService, body: { name: 'Other' } })
    await call(`/api/v1/artists/${other.json.id}/albums`, { method: 'POST', headers: asService, body: { name: 'X' } })
    const seeded = await call('/api/v1/artists/1/history', { headers: asService })
    expect(seeded.json).toEqual({ data: [], meta: { limit: 10, offset: 0, total: 0, next: null } })
  })

  test('a reset (--allow-reset) returns the histories to the start-up state, with the records', async () => {
    const store = testStore()
    const artist = await store.artists.insert({ name: 'Before the start' }, 'service')
    const reset = await captureStartState(store)
    const { call } = testApp(store)
    const app = createApp({ store, apiKeys: [SERVICE_KEY], reset, report: () => {} })
    const url = `/api/v1/artists/${artist.id}`
    await call(url, { method: 'PUT', headers: asService, body: { name: 'After the start' } })
    expect((await call(`${url}/history`)).json.meta.total).toBe(2)
    const answer = await app.handle(
      new Request('http://localhost/__admin/reset', { method: 'POST', headers: asService }),
    )
    expect(answer.status).toBe(204)
    const history = await call(`${url}/history`)
    expect(history.json.data.map((change: { kind: string; by: string }) => [change.kind, change.by])).toEqual([
      ['artist-created', 'service'],
    ])
  })
})
