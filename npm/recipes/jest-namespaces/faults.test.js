const { api, ns } = require('./namespace')

test('a 503 from a fault, then the artist', async () => {
  await ns.fault({ method: 'GET', path: '/api/v1/artists/30', status: 503 })
  await expect(api.artists.get(30)).rejects.toMatchObject({ status: 503 })
  expect((await api.artists.get(30)).name).toBe('Moris')
  const journal = await ns.requests({ path: '/api/v1/artists/30' })
  expect(journal.map((entry) => entry.status)).toEqual([503, 200])
})
