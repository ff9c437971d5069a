import { expect, test } from './fixtures.js'

test('adds an artist with the API key', async ({ request, rockLegends }) => {
  const created = await request.post('/api/v1/artists', {
    headers: { 'X-API-Key': rockLegends.apiKey },
    data: { name: 'Moris' },
  })
  expect(created.status()).toBe(201)
})

test('starts every test from the seeded catalogue', async ({ request }) => {
  const page = await (await request.get('/api/v1/artists?limit=1')).json()
  expect(page.meta.total).toBe(32)
})
