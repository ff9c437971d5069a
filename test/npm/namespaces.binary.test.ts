/**
 * The npm package's handle on a namespace (`startServer({ fixtures: true })`, `server.namespace(name)`), from its
 * sources under Bun against the compiled executable: many tests share one server at once, each in its own namespace,
 * through the handle's fetch, journal, faults, state and reset, and the typed client with its headers.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createClient, type RunningServer, startServer } from '../../npm/rock-legends/lib/index.js'
import { ensureBinary } from '../support/binary.ts'

let server: RunningServer
beforeAll(async () => {
  server = await startServer({ seed: true, fixtures: true, binary: await ensureBinary() })
})
afterAll(() => server?.stop())

describe('server.namespace(name), from the npm package', () => {
  test('concurrent tests, each in its own namespace, see only their own writes', async () => {
    const names = Array.from({ length: 12 }, (_, i) => `test-${i}`)
    const totals = await Promise.all(
      names.map(async (name) => {
        const ns = server.namespace(name)
        const api = createClient(server.url, { apiKey: server.apiKey, headers: ns.headers })
        const created = await api.artists.create({ name: `Solo en ${name}` })
        expect(created.id).toBe(33)
        const page = await api.artists.list({ limit: 1, offset: 32 })
        expect(page.data.map((artist) => artist.name)).toEqual([`Solo en ${name}`])
        return page.meta.total
      }),
    )
    expect(totals).toEqual(Array(12).fill(33))
    // The default namespace was not touched.
    expect((await createClient(server.url).artists.list()).meta.total).toBe(32)
  })

  test('fetch, the journal, a fault, state in and out, reset and drop', async () => {
    const ns = server.namespace('handle')
    expect((await ns.fetch('/api/v1/artists/1')).status).toBe(200)
    const fault = await ns.fault({ method: 'GET', path: '/api/v1/artists/*', status: 503 })
    expect(fault).toMatchObject({ id: 1, status: 503, active: true })
    const faulted = await ns.fetch('/api/v1/artists/2')
    expect(faulted.status).toBe(503)
    expect(faulted.headers.get('retry-after')).toBe('1')
    expect((await ns.faults())[0]).toMatchObject({ fired: 1, active: false })
    await ns.clearFaults()
    expect(await ns.faults()).toEqual([])
    const journal = await ns.requests({ path: '/api/v1/artists/*' })
    expect(journal.map((entry) => [entry.path, entry.status, entry.fault])).toEqual([
      ['/api/v1/artists/1', 200, undefined],
      ['/api/v1/artists/2', 503, 1],
    ])
    expect(await ns.requests({ status: 503 })).toHaveLength(1)
    await ns.clearRequests()
    expect(await ns.requests()).toEqual([])

    expect(await ns.load({ artists: [{ name: 'Uno', albums: [{ name: 'Primero', year: 1991 }] }] })).toEqual({
      artists: 1,
      albums: 1,
    })
    expect(await ns.state()).toEqual({
      artists: [{ name: 'Uno', albums: [{ name: 'Primero', year: 1991, kind: 'studio' }] }],
    })
    await ns.reset()
    expect((await ns.state()).artists).toHaveLength(32)
    await ns.load({ artists: [] })
    await ns.drop()
    // Used again, it starts over as the start-up state.
    expect((await ns.state()).artists).toHaveLength(32)
  })

  test('a bad name is refused before any request; a server without fixtures has no namespaces', async () => {
    expect(() => server.namespace('no spaces')).toThrow('a namespace is named with')
    const plain = await startServer({ binary: await ensureBinary() })
    try {
      expect(() => plain.namespace('x')).toThrow('fixtures: true')
    } finally {
      await plain.stop()
    }
  })
})
