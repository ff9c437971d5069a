import { afterEach, describe, expect, test } from 'bun:test'
import * as npm from '../../npm/rock-legends/lib/index.js'
import * as repository from '../../src/index.ts'
import { createClient, type RunningServer, type ServerOptions, startServer } from '../../src/index.ts'

// The handle of the in-process `startServer` is the npm package's (docs/testing-with-rock-legends.md, "In-process"):
// its key, reset and namespaces, and the same client under the same name.

let running: RunningServer[] = []
afterEach(async () => {
  await Promise.all(running.map((server) => server.stop()))
  running = []
})

async function start(options: ServerOptions = {}) {
  const server = await startServer(options)
  running.push(server)
  return server
}

describe('the in-process handle', () => {
  test('apiKey is the first service key given', async () => {
    const server = await start({ apiKeys: ['first-key', 'second-key'] })
    expect(server.apiKey).toBe('first-key')
  })

  test('without a service key, one is made for the server, as the npm package makes one: it writes there only', async () => {
    const [a, b] = await Promise.all([start(), start({ apiKeys: [] })])
    expect(a.apiKey).toMatch(/^rl_fixture_[0-9a-f]{36}$/)
    expect(b.apiKey).toMatch(/^rl_fixture_[0-9a-f]{36}$/)
    expect(b.apiKey).not.toBe(a.apiKey)
    expect(await createClient(a.url, { apiKey: a.apiKey }).artists.create({ name: 'Moris' })).toMatchObject({ id: 1 })
    await expect(createClient(b.url, { apiKey: a.apiKey }).artists.create({ name: 'Moris' })).rejects.toMatchObject({
      status: 401,
    })
  })

  test('namespace() needs fixtures: true, as the npm package’s does', async () => {
    const server = await start({ allowReset: true })
    expect(() => server.namespace('worker-1')).toThrow('start the server with fixtures: true to use namespaces')
  })

  test('a namespace is a world of its own on the server, with the npm package’s controls', async () => {
    const server = await start({ seed: true, fixtures: true })
    const ns = server.namespace('worker-1')
    expect(Object.keys(ns).sort()).toEqual(
      Object.keys(npm.connect({ url: server.url, apiKey: server.apiKey }).namespace('worker-1')).sort(),
    )
    expect(ns.headers).toEqual({ 'Rock-Legends-Namespace': 'worker-1' })
    const api = createClient(server.url, { apiKey: server.apiKey, headers: ns.headers })
    expect(await api.artists.create({ name: 'Pappo' })).toMatchObject({ id: 33 })
    expect((await createClient(server.url).artists.list()).meta.total).toBe(32)
    expect(await ns.requests({ method: 'POST' })).toMatchObject([{ path: '/api/v1/artists', status: 201 }])
    await ns.reset()
    expect((await api.artists.list()).meta.total).toBe(32)
    await ns.drop()
    expect(() => server.namespace('not a name')).toThrow('a namespace is named with 1 to 64 of')
  })

  test('reset() restores the default namespace, with fixtures as with allowReset', async () => {
    const server = await start({ seed: true, fixtures: true })
    const api = createClient(server.url, { apiKey: server.apiKey })
    await api.artists.create({ name: 'Pappo' })
    await server.reset()
    expect((await api.artists.list()).meta.total).toBe(32)
  })
})

describe('the names the package exports', () => {
  test('createClient, connect and ProblemError are the npm package’s own', () => {
    expect(repository.createClient).toBe(npm.createClient)
    expect(repository.connect).toBe(npm.connect)
    expect(repository.ProblemError).toBe(npm.ProblemError)
  })

  test('the typed client is createTypedClient, a name the npm package does not use', () => {
    expect(typeof repository.createTypedClient).toBe('function')
    expect(Object.keys(npm)).not.toContain('createTypedClient')
    // startServer is the one name of both with another meaning: the server here, in this process; there, a child.
    expect(repository.startServer).not.toBe(npm.startServer)
  })
})
