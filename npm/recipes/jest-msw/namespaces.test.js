const { http } = require('msw')
const { setupServer } = require('msw/node')
const { createService } = require('rock-legends')
const { showArtists } = require('./artists')

const BASE = 'https://api.rock-legends.test'
let service
let ns
let tests = 0
// With fixtures: a namespace per test (its own catalogue, journal and faults), which the handler puts requests in.
const server = setupServer(
  http.all(`${BASE}/*`, ({ request }) => {
    const headers = new Headers(request.headers)
    headers.set('Rock-Legends-Namespace', ns.name)
    return service.fetch(request, { headers })
  }),
)

beforeAll(async () => {
  service = await createService({ seed: true, fixtures: true })
  server.listen({ onUnhandledRequest: 'error' })
})
beforeEach(() => {
  ns = service.namespace(`test-${++tests}`)
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
  expect(document.querySelector('[role="alert"]').textContent).toMatch(/^Fault \d+, armed .* with 503/)
  expect(await ns.requests()).toMatchObject([{ method: 'GET', path: '/api/v1/artists', status: 503 }])
})
