import { afterEach, describe, expect, test } from 'bun:test'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { type RunningServer, type ServerOptions, startServer } from '../../src/index.ts'
import { removeDir, tempDir } from '../support/binary.ts'

// Embedding: several servers in one process, as another team's test suite would start them.
const KEY = 'embedding-key'
const write = { 'x-api-key': KEY, 'content-type': 'application/json' }

let running: RunningServer[] = []
let dirs: string[] = []
afterEach(async () => {
  await Promise.all(running.map((server) => server.stop()))
  running = []
  for (const dir of dirs) removeDir(dir)
  dirs = []
})

async function start(options: ServerOptions = {}) {
  const server = await startServer({ apiKeys: [KEY], ...options })
  running.push(server)
  return server
}

const names = async (url: string) =>
  ((await (await fetch(`${url}/api/v1/artists?limit=100`)).json()) as { data: { name: string }[] }).data.map(
    (artist) => artist.name,
  )

const post = (url: string, name: string) =>
  fetch(`${url}/api/v1/artists`, { method: 'POST', headers: write, body: JSON.stringify({ name }) })

describe('startServer', () => {
  test('two instances on port 0 get their own ports and never see each other’s data', async () => {
    const [a, b] = await Promise.all([start({ seed: true }), start({ seed: true })])
    expect(a.port).toBeGreaterThan(0)
    expect(b.port).not.toBe(a.port)
    expect(a.url).toBe(`http://127.0.0.1:${a.port}`)
    expect((await post(a.url, 'Only in A')).status).toBe(201)
    expect((await post(b.url, 'Only in B')).status).toBe(201)
    expect(await names(a.url)).toContain('Only in A')
    expect(await names(a.url)).not.toContain('Only in B')
    expect(await names(b.url)).toContain('Only in B')
    expect(await names(b.url)).not.toContain('Only in A')
  })

  test('instances keep their own keys and settings', async () => {
    const a = await startServer({ apiKeys: ['key-a'] })
    const b = await startServer({ apiKeys: ['key-b'], readOnly: true })
    running.push(a, b)
    const as = (url: string, key: string) =>
      fetch(`${url}/api/v1/artists`, {
        method: 'POST',
        headers: { 'x-api-key': key, 'content-type': 'application/json' },
        body: '{"name":"X"}',
      }).then((response) => response.status)
    expect(await as(a.url, 'key-a')).toBe(201)
    expect(await as(a.url, 'key-b')).toBe(401)
    expect(await as(b.url, 'key-b')).toBe(403)
  })

  test('a second server on a port in use fails; once stop() resolves the port is free again', async () => {
    const first = await startServer({})
    await expect(startServer({ port: first.port })).rejects.toMatchObject({ code: 'EADDRINUSE' })
    await first.stop()
    const second = await start({ port: first.port })
    expect(second.port).toBe(first.port)
    expect((await fetch(`${second.url}/healthz`)).status).toBe(200)
  })

  test('a server that cannot listen releases its data file', async () => {
    const dir = tempDir()
    dirs.push(dir)
    const data = join(dir, 'db.json')
    const first = await start()
    await expect(startServer({ port: first.port, data })).rejects.toMatchObject({ code: 'EADDRINUSE' })
    expect(existsSync(`${data}.lock`)).toBe(false)
    const second = await start({ data })
    expect((await fetch(`${second.url}/healthz`)).status).toBe(200)
  })

  test('stop() flushes every acknowledged write to the data file and releases it', async () => {
    const dir = tempDir()
    dirs.push(dir)
    const data = join(dir, 'db.json')
    const server = await startServer({ data, apiKeys: [KEY] })
    const answers = await Promise.all(['Spinetta', 'García', 'Cerati'].map((name) => post(server.url, name)))
    expect(answers.map((answer) => answer.status)).toEqual([201, 201, 201])
    await server.stop()
    await server.stop() // idempotent
    expect(existsSync(`${data}.lock`)).toBe(false)
    const onDisk = JSON.parse(readFileSync(data, 'utf8')) as { artists: { name: string }[] }
    expect(onDisk.artists.map((artist) => artist.name).sort()).toEqual(['Cerati', 'García', 'Spinetta'])
    const reopened = await start({ data })
    expect((await names(reopened.url)).sort()).toEqual(['Cerati', 'García', 'Spinetta'])
  })

  test('reset() restores the start-up state; a file store keeps it across a restart', async () => {
    const dir = tempDir()
    dirs.push(dir)
    const data = join(dir, 'db.json')
    const server = await startServer({ data, seed: true, allowReset: true, apiKeys: [KEY] })
    const seeded = await names(server.url)
    await post(server.url, 'Temporary')
    await server.reset()
    expect(await names(server.url)).toEqual(seeded)
    await server.stop()
    const again = await start({ data })
    expect(await names(again.url)).toEqual(seeded)
  })

  test('reset() needs allowReset', async () => {
    const server = await start()
    await expect(server.reset()).rejects.toThrow('allowReset')
  })

  test('POST /__admin/reset with the service key, as a test in any language would call it', async () => {
    const server = await start({ seed: true, allowReset: true })
    await post(server.url, 'Temporary')
    const answer = await fetch(`${server.url}/__admin/reset`, { method: 'POST', headers: { 'x-api-key': KEY } })
    expect(answer.status).toBe(204)
    expect(await names(server.url)).not.toContain('Temporary')
  })

  test('options are checked as their flags are, with the same messages', async () => {
    await expect(startServer({ metrics: 'localhost' })).rejects.toThrow(
      'metrics must be [HOST:]PORT, such as 9464 or 127.0.0.1:9464, not "localhost"',
    )
    await expect(startServer({ fixtures: true, data: 'postgres://db/rl' })).rejects.toThrow(
      '--fixtures keeps its namespaces in memory',
    )
  })
})
