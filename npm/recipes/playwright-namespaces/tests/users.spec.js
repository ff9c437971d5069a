import { API_KEY, expect, test } from './fixtures.js'

for (const name of ['Ana', 'Beto', 'Carla']) {
  test(`${name} signs up with the email every worker uses`, async ({ request }) => {
    const user = { name, email: 'same@rock-legends.com', password: 'i-love-rock' }
    expect((await request.post('/api/v1/user/signup', { data: user })).status()).toBe(201)
    const login = await request.post('/api/v1/user/login', { data: { email: user.email, password: user.password } })
    const { token } = await login.json()
    const me = await request.get('/api/v1/user/me', { headers: { Authorization: `Bearer ${token}` } })
    expect(await me.json()).toMatchObject({ id: 1, name })
  })
}

test('a 503 from a fault, then the artist', async ({ request }) => {
  const fault = await request.post('/__admin/faults', {
    headers: { 'X-API-Key': API_KEY },
    data: { method: 'GET', path: '/api/v1/artists/30', status: 503 },
  })
  expect(fault.status()).toBe(201)
  expect((await request.get('/api/v1/artists/30')).status()).toBe(503)
  expect(await (await request.get('/api/v1/artists/30')).json()).toMatchObject({ name: 'Moris' }) // once, by default
})
