const { api } = require('./namespace')

test.each(['Los Gatos', 'Almendra', 'Manal'])('adds a fan of %s: id 33 in every worker', async (band) => {
  expect(await api.artists.create({ name: `A fan of ${band}`, band })).toMatchObject({ id: 33 })
  const page = await api.artists.list({ offset: 32 })
  expect(page.meta.total).toBe(33)
  expect(page.data.map((artist) => artist.band)).toEqual([band])
})

test('starts every test from the seeded catalogue', async () => {
  expect((await api.artists.list()).meta.total).toBe(32)
})
