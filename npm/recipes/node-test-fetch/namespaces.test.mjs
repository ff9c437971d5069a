import assert from 'node:assert/strict'
import { after, afterEach, before, beforeEach, mock, test } from 'node:test'
import { createService } from 'rock-legends'
import { artistNames } from './catalogue.mjs'

const BASE = 'https://api.rock-legends.test'
let service
let ns
let tests = 0
before(async () => {
  service = await createService({ seed: true, fixtures: true })
})
// With fixtures: a namespace per test (its own catalogue, journal and faults), which the fetch puts requests in.
beforeEach(() => {
  ns = service.namespace(`test-${++tests}`)
  mock.method(globalThis, 'fetch', async (input, init) => {
    const request = new Request(input, init)
    if (!request.url.startsWith(`${BASE}/`)) throw new Error(`unexpected request for ${request.url}`)
    const headers = new Headers(request.headers)
    headers.set('Rock-Legends-Namespace', ns.name)
    return service.fetch(request, { headers })
  })
})
afterEach(async () => {
  mock.restoreAll()
  await ns.drop()
})
after(() => service.close())

test('reads the catalogue the test loaded', async () => {
  await ns.load({ artists: [{ name: 'Moris', band: 'Los Beatniks', albums: [] }] })
  assert.deepEqual(await artistNames(BASE), ['Moris'])
})

test('throws the problem of a 503, and the request is in the journal', async () => {
  await ns.fault({ method: 'GET', path: '/api/v1/artists', status: 503 })
  await assert.rejects(artistNames(BASE), { status: 503, message: /^Fault \d+, armed .* with 503/ })
  const journal = (await ns.requests()).map(({ method, path, status }) => ({ method, path, status }))
  assert.deepEqual(journal, [{ method: 'GET', path: '/api/v1/artists', status: 503 }])
})
