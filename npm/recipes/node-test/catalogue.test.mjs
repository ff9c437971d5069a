import assert from 'node:assert/strict'
import { after, before, beforeEach, test } from 'node:test'
import { createClient, startServer } from 'rock-legends'

let server
let api
before(async () => {
  server = await startServer({ seed: true, allowReset: true })
  api = createClient(server.url, { apiKey: server.apiKey })
})
beforeEach(() => server.reset()) // back to the seeded catalogue
after(() => server.stop())

test('adds an artist and reads it back', async () => {
  const moris = await api.artists.create({ name: 'Moris', band: 'Los Beatniks' })
  assert.equal((await api.artists.get(moris.id)).band, 'Los Beatniks')
})

test('starts every test from the seeded catalogue', async () => {
  assert.equal((await api.artists.list()).meta.total, 32)
})
