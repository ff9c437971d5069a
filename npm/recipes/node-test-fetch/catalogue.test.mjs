import assert from 'node:assert/strict'
import { after, afterEach, before, beforeEach, mock, test } from 'node:test'
import { createClient, createService } from 'rock-legends'
import { addArtist, artist, artistNames } from './catalogue.mjs'

const BASE = 'https://api.rock-legends.test'
let service
before(async () => {
  service = await createService({ seed: true, passwords: 'fast-for-tests' })
})
// The global fetch, for each test: requests for BASE are answered by the service in this process, any other fails.
beforeEach(() => {
  mock.method(globalThis, 'fetch', async (input, init) => {
    const request = new Request(input, init)
    if (!request.url.startsWith(`${BASE}/`)) throw new Error(`unexpected request for ${request.url}`)
    return service.fetch(request)
  })
  return service.reset()
})
afterEach(() => mock.restoreAll())
after(() => service.close())

test('reads the seeded catalogue, every page', async () => {
  const names = await artistNames(BASE)
  assert.equal(names.length, 32)
  assert.ok(names.includes('Luis Alberto Spinetta'))
})

test('throws the detail of a 404 problem', async () => {
  await assert.rejects(artist(BASE, 9999), { status: 404, message: 'There is no artist 9999.' })
})

test('reads back what it wrote with the service key', async () => {
  const created = await addArtist(BASE, service.apiKey, { name: 'Pescado Rabioso', band: 'Pescado Rabioso' })
  assert.equal((await artist(BASE, created.id)).name, 'Pescado Rabioso')
})

test('reset() puts the seeded catalogue back', async () => {
  await addArtist(BASE, service.apiKey, { name: 'Pescado Rabioso' })
  await service.reset()
  assert.equal((await artistNames(BASE)).length, 32)
})

// Code that takes a fetch needs no global one: the package's client, for one, answered by the service itself.
test('signs up and logs in through the client, with the service as its fetch', async () => {
  const api = createClient(BASE, { fetch: service.fetch })
  await api.user.signup({ name: 'Nito', email: 'nito@example.com', password: 'almendra-1969' })
  const { token } = await api.user.login({ email: 'nito@example.com', password: 'almendra-1969' })
  assert.equal((await api.with({ token }).user.me()).name, 'Nito')
  await assert.rejects(api.user.login({ email: 'nito@example.com', password: 'not-the-password' }), { status: 401 })
})
