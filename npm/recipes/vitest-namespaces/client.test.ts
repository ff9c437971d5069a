import { type Client, ProblemError } from 'rock-legends'
import { describe } from 'vitest'
import { test } from './fixtures'

/** The code under test: reads an artist, and tries once more after a 503. */
async function artistName(api: Client, id: number): Promise<string> {
  try {
    return (await api.artists.get(id)).name
  } catch (error) {
    if (!(error instanceof ProblemError) || error.status !== 503) throw error
    return (await api.artists.get(id)).name
  }
}

describe.concurrent('what the client sent, and how it copes', () => {
  test('the journal shows the request as the server received it', async ({ api, ns, expect }) => {
    await api.artists.create({ name: 'Moris', band: 'Los Beatniks' })
    expect(await ns.requests({ method: 'POST' })).toMatchObject([
      {
        path: '/api/v1/artists',
        status: 201,
        body: { name: 'Moris', band: 'Los Beatniks' },
        headers: { 'x-api-key': '[redacted]' },
      },
    ])
  })

  test('retries after a 503', async ({ api, ns, expect }) => {
    await ns.fault({ method: 'GET', path: '/api/v1/artists/30', status: 503 })
    expect(await artistName(api, 30)).toBe('Moris')
    expect((await ns.requests({ path: '/api/v1/artists/30' })).map((entry) => entry.status)).toEqual([503, 200])
  })

  test('gives up on a 404', async ({ api, ns, expect }) => {
    await expect(artistName(api, 9999)).rejects.toMatchObject({ status: 404 })
    expect(await ns.requests()).toHaveLength(1)
  })
})
