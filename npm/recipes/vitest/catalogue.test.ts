import { type Client, createClient, type RunningServer, startServer } from 'rock-legends'
import { afterAll, beforeAll, beforeEach, expect, test } from 'vitest'

let server: RunningServer
let api: Client
beforeAll(async () => {
  server = await startServer({ seed: true, allowReset: true })
  api = createClient(server.url, { apiKey: server.apiKey })
})
beforeEach(() => server.reset()) // back to the seeded catalogue
afterAll(() => server.stop())

test('adds an album to a new artist', async () => {
  const moris = await api.artists.create({ name: 'Moris', band: 'Los Beatniks' })
  const album = await api.albums.create(moris.id, { name: '30 minutos de vida', year: 1970 })
  expect(await api.albums.get(moris.id, album.id)).toMatchObject({ artistId: moris.id, year: 1970 })
})

test('refuses a write without credentials, as a problem', async () => {
  const anonymous = createClient(server.url)
  await expect(anonymous.artists.create({ name: 'Moris' })).rejects.toMatchObject({ status: 401 })
})
