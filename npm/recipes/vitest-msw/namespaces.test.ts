import { http } from 'msw'
import { setupServer } from 'msw/node'
import { createService, type Namespace } from 'rock-legends'
import { afterAll, afterEach, beforeAll, beforeEach, expect, test } from 'vitest'
import { showArtists } from './artists'

const BASE = 'https://api.rock-legends.test'
// With fixtures: a namespace per test (its own catalogue, journal and faults), so tests may run concurrently.
const service = await createService({ seed: true, fixtures: true })
let ns: Namespace
const server = setupServer(
  http.all(`${BASE}/*`, ({ request }) => {
    const headers = new Headers(request.headers)
    headers.set('Rock-Legends-Namespace', ns.name)
    return service.fetch(request, { headers })
  }),
)

beforeAll(() => server.listen({ onUnhandledRequest: 'error' }))
beforeEach(({ task }) => {
  ns = service.namespace(`test-${task.id}`)
})
afterEach(() => ns.drop())
afterAll(async () => {
  server.close()
  await service.close()
})

test('shows the catalogue the test loaded', async () => {
  await ns.load({ artists: [{ name: 'Moris', band: 'Los Beatniks', albums: [] }] })
  await showArtists(document.body, BASE)
  expect([...document.querySelectorAll('li')].map((item) => item.textContent)).toEqual(['Moris'])
})

test('shows the problem of a 503, and the request is in the journal', async () => {
  await ns.fault({ method: 'GET', path: '/api/v1/artists', status: 503 })
  await showArtists(document.body, BASE)
  expect(document.querySelector('[role="alert"]')?.textContent).toMatch(/^Fault \d+, armed .* with 503/)
  expect(await ns.requests()).toMatchObject([{ method: 'GET', path: '/api/v1/artists', status: 503 }])
})
