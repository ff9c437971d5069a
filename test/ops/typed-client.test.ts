/**
 * The typed client (`createTypedClient`, Elysia's Eden over the app's own type) against a running server. That it refuses
 * what the API refuses at compile time is checked by `bun run typecheck` (test/fixtures/typed-client.ts) and, with
 * its directives taken out, by the release step (test/release/typed-client.types.test.ts).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createTypedClient, type RunningServer, startServer } from '../../src/index.ts'

const KEY = 'client-test-key'

let server: RunningServer
beforeAll(async () => {
  server = await startServer({ seed: true, apiKeys: [KEY] })
})
afterAll(() => server.stop())

describe('the typed client', () => {
  test('creates an artist and an album, then reads them back', async () => {
    const api = createTypedClient(server.url, { headers: { 'x-api-key': KEY } })
    const created = await api.api.v1.artists.post({ name: 'Moris', band: 'Los Beatniks' })
    expect(created.status).toBe(201)
    if (created.error) throw new Error(`create failed: ${JSON.stringify(created.error.value)}`)
    expect(created.data).toStrictEqual({ id: 33, name: 'Moris', band: 'Los Beatniks' })
    expect(created.response.headers.get('location')).toBe('/api/v1/artists/33')

    const album = await api.api.v1.artists({ artistId: created.data.id }).albums.post({ name: '30 minutos de vida' })
    expect(album.status).toBe(201)

    const read = await api.api.v1.artists({ artistId: created.data.id }).get()
    expect(read.data).toEqual(created.data)
    const albums = await api.api.v1.artists({ artistId: 33 }).albums.get({ query: { limit: '5' } })
    expect(albums.data?.data.map((each) => each.name)).toEqual(['30 minutos de vida'])
  })

  test('reads a page with a typed query', async () => {
    const api = createTypedClient(server.url)
    const page = await api.api.v1.artists.get({ query: { limit: '2', offset: '1' } })
    expect(page.data?.meta).toMatchObject({ limit: 2, offset: 1, next: '/api/v1/artists?limit=2&offset=3' })
    expect(page.data?.data.map((artist) => artist.id)).toEqual([2, 3])
  })

  test('hands problems back as typed errors', async () => {
    const api = createTypedClient(server.url)
    const anonymous = await api.api.v1.artists.post({ name: 'Nobody' })
    expect(anonymous.data).toBeNull()
    expect(anonymous.error?.status).toBe(401)
    expect(anonymous.error?.value).toMatchObject({ type: '/problems/unauthorized', status: 401 })
    const missing = await api.api.v1.artists({ artistId: 999 }).get()
    expect(missing.error?.status).toBe(404)
  })

  test('keeps dates as the strings the API sends', async () => {
    const api = createTypedClient(server.url)
    const user = { name: 'Carlos', email: 'dates@rock-legends.com', password: 'i-love-rock' }
    expect((await api.api.v1.user.signup.post(user)).status).toBe(201)
    const login = await api.api.v1.user.login.post({ email: user.email, password: user.password })
    expect(typeof login.data?.expires_at).toBe('string')
  })
})
