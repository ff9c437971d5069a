const { createClient, startServer } = require('rock-legends')

let server
let api
beforeAll(async () => {
  server = await startServer({ seed: true, allowReset: true })
  api = createClient(server.url, { apiKey: server.apiKey })
})
beforeEach(() => server.reset()) // back to the seeded catalogue
afterAll(() => server.stop())

test('lists the legends', async () => {
  const { data, meta } = await api.artists.list({ limit: 5 })
  expect(data).toHaveLength(5)
  expect(meta.total).toBe(32)
})

test('answers an unknown artist with a 404 problem', async () => {
  await expect(api.artists.get(9999)).rejects.toMatchObject({ status: 404, problem: { status: 404 } })
})
