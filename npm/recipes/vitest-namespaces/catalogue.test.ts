import { describe } from 'vitest'
import { test } from './fixtures'

describe.concurrent('tests that write, all at once on one server', () => {
  test.for(['Los Gatos', 'Almendra', 'Manal'])('adds %s: id 33 in every test', async (band, { api, expect }) => {
    expect(await api.artists.create({ name: `A fan of ${band}`, band })).toMatchObject({ id: 33 })
    const page = await api.artists.list({ offset: 32 })
    expect(page.meta.total).toBe(33)
    expect(page.data.map((artist) => artist.band)).toEqual([band])
  })

  test.for(['Ana', 'Beto'])('%s signs up with the email every test uses', async (name, { api, expect }) => {
    const user = { name, email: 'same@rock-legends.com', password: 'i-love-rock' }
    expect(await api.user.signup(user)).toMatchObject({ id: 1, name })
    const { token } = await api.user.login({ email: user.email, password: user.password })
    expect(await api.with({ token }).user.me()).toMatchObject({ id: 1, name })
  })

  test('loads the catalogue it needs in one call, and reads it back', async ({ api, ns, expect }) => {
    const moris = { name: 'Moris', band: 'Los Beatniks', albums: [{ name: '30 minutos de vida', year: 1970 }] }
    expect(await ns.load({ artists: [moris] })).toEqual({ artists: 1, albums: 1 })
    expect((await api.artists.list()).data.map((artist) => artist.name)).toEqual(['Moris'])
    expect(await ns.state()).toMatchObject({ artists: [moris] })
  })
})
