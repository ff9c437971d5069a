/**
 * `connect({ url, apiKey })` of the npm package: a test worker that knows only the URL and a service key of a server
 * started elsewhere (a Vitest or Jest `globalSetup`, a Playwright `webServer`) gets the same namespace handles as
 * `server.namespace(name)`. From the package's sources under Bun, against the compiled executable.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { connect, createClient, type RunningServer, startServer } from '../../npm/rock-legends/lib/index.js'
import { ensureBinary } from '../support/binary.ts'

let server: RunningServer
beforeAll(async () => {
  server = await startServer({ seed: true, fixtures: true, binary: await ensureBinary() })
})
afterAll(() => server?.stop())

describe('connect({ url, apiKey }), from the npm package', () => {
  test('gives the namespaces of a server it did not start, as the server itself does', async () => {
    // What a globalSetup passes on: plain strings (a trailing slash too).
    const connected = connect({ url: `${server.url}/`, apiKey: server.apiKey })
    expect(connected.url).toBe(server.url)
    const ns = connected.namespace('worker-1')
    const api = createClient(connected.url, { apiKey: connected.apiKey, headers: ns.headers })
    expect((await api.artists.create({ name: 'Solo en worker-1' })).id).toBe(33)
    // The same namespace, seen through the handle of the server that started it.
    expect((await server.namespace('worker-1').state()).artists.at(-1)?.name).toBe('Solo en worker-1')
    expect(await ns.requests({ method: 'POST' })).toMatchObject([{ path: '/api/v1/artists', status: 201 }])
    await ns.reset()
    expect((await api.artists.list()).meta.total).toBe(32)
    await ns.drop()
  })

  test('refuses what is not a server: no URL, no key; a key that is not a service key fails the first control', async () => {
    expect(() => connect({ url: '', apiKey: 'k' })).toThrow('connect needs the url')
    expect(() => connect({ url: server.url } as { url: string; apiKey: string })).toThrow('connect needs a service key')
    const wrong = connect({ url: server.url, apiKey: 'not-a-key' }).namespace('x')
    await expect(wrong.reset()).rejects.toThrow('reset failed with 401')
  })
})
