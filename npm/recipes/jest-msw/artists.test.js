const { http } = require('msw')
const { setupServer } = require('msw/node')
const { createService } = require('rock-legends')
const { showArtist, showArtists } = require('./artists')

const BASE = 'https://api.rock-legends.test'
let service
// Every request for the API is answered by the service, in this process; any other request fails the test.
const server = setupServer(http.all(`${BASE}/*`, ({ request }) => service.fetch(request)))

beforeAll(async () => {
  // The real service: its rules, its problems, its seeded catalogue. One per file, reset before each test.
  service = await createService({ seed: true, passwords: 'fast-for-tests' })
  server.listen({ onUnhandledRequest: 'error' })
})
beforeEach(() => service.reset())
afterAll(async () => {
  server.close()
  await service.close()
})

const names = () => [...document.querySelectorAll('li')].map((item) => item.textContent)
const post = (path, body, headers = {}) =>
  fetch(`${BASE}${path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...headers },
    body: JSON.stringify(body),
  })
const write = (artist) => post('/api/v1/artists', artist, { 'X-API-Key': service.apiKey })

test('lists the seeded legends', async () => {
  await showArtists(document.body, BASE)
  expect(names()).toHaveLength(32)
  expect(names()).toContain('Luis Alberto Spinetta')
})

test('shows the detail of a 404 problem', async () => {
  await showArtist(document.body, BASE, 9999)
  expect(document.querySelector('[role="alert"]').textContent).toBe('There is no artist 9999.')
})

test('shows an artist written with the service key', async () => {
  const created = await write({ name: 'Pescado Rabioso', band: 'Pescado Rabioso' })
  expect(created.status).toBe(201)
  await showArtist(document.body, BASE, (await created.json()).id)
  expect(document.querySelector('h1').textContent).toBe('Pescado Rabioso')
})

test('reset() puts the seeded catalogue back', async () => {
  await write({ name: 'Pescado Rabioso' })
  await service.reset()
  await showArtists(document.body, BASE)
  expect(names()).toHaveLength(32)
  expect(names()).not.toContain('Pescado Rabioso')
})

test('signs up and logs in: real password checks, at the fast-for-tests cost', async () => {
  const user = { name: 'Nito', email: 'nito@example.com', password: 'almendra-1969' }
  expect((await post('/api/v1/user/signup', user)).status).toBe(201)
  expect((await post('/api/v1/user/login', { email: user.email, password: 'not-the-password' })).status).toBe(401)
  const login = await post('/api/v1/user/login', { email: user.email, password: user.password })
  expect(login.status).toBe(200)
  const me = await fetch(`${BASE}/api/v1/user/me`, {
    headers: { Authorization: `Bearer ${(await login.json()).token}` },
  })
  expect(await me.json()).toMatchObject({ name: 'Nito', email: 'nito@example.com' })
})
