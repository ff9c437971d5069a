import { API_KEY, expect, test } from './fixtures.js'

// Run at once by the workers, each in its own namespace: the same ids, and no artist of another.
for (const band of ['Los Gatos', 'Almendra', 'Manal']) {
  test(`adds a fan of ${band}: id 33 in every worker`, async ({ request }) => {
    const created = await request.post('/api/v1/artists', {
      headers: { 'X-API-Key': API_KEY },
      data: { name: `A fan of ${band}`, band },
    })
    expect(created.status()).toBe(201)
    expect((await created.json()).id).toBe(33)
    const page = await (await request.get('/api/v1/artists?offset=32')).json()
    expect(page.meta.total).toBe(33)
    expect(page.data.map((artist) => artist.band)).toEqual([band])
  })
}

test('starts every test from the seeded catalogue', async ({ request }) => {
  const page = await (await request.get('/api/v1/artists?limit=1')).json()
  expect(page.meta.total).toBe(32)
})
