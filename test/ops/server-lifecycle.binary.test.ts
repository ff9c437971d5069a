import { afterEach, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import pkg from '../../package.json' with { type: 'json' }
import { ensureBinary, type RunningBinary, removeDir, runBinary, startBinary, tempDir } from '../support/binary.ts'

// The executable as users run it: a subprocess on a free port, talked to over HTTP.
const KEY = 'binary-test-key'
const write = { 'x-api-key': KEY, 'content-type': 'application/json' }

let dir: string
let running: RunningBinary[] = []
beforeAll(() => ensureBinary(), 120_000)
beforeEach(() => {
  dir = tempDir()
})
afterEach(async () => {
  await Promise.all(running.map((server) => server.stop('SIGKILL')))
  running = []
  removeDir(dir)
})

async function start(args: string[] = [], options: { cwd?: string; env?: Record<string, string> } = {}) {
  const server = await startBinary(['--port', '0', '--data', join(dir, 'db.json'), '--api-key', KEY, ...args], options)
  running.push(server)
  return server
}

const post = (url: string, body: unknown) => fetch(url, { method: 'POST', headers: write, body: JSON.stringify(body) })

describe('the compiled executable', () => {
  test('prints one ready line with the real port and serves the API', async () => {
    const server = await start(['--log', 'off'])
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
    expect(server.url.endsWith(':0')).toBe(false)
    const health = await fetch(`${server.url}/healthz`)
    expect(await health.json()).toEqual({ status: 'ok' })
  })

  test('keeps acknowledged writes across SIGTERM and a restart', async () => {
    const first = await start()
    const created = await Promise.all(
      ['Spinetta', 'García', 'Cerati'].map((name) => post(`${first.url}/api/v1/artists`, { name })),
    )
    expect(created.map((response) => response.status)).toEqual([201, 201, 201])
    const album = await post(`${first.url}/api/v1/artists/2/albums`, { name: 'Clics modernos', year: 1983 })
    expect(album.status).toBe(201)
    expect(await first.stop()).toBe(0)
    running = []
    const second = await start()
    const list = (await (await fetch(`${second.url}/api/v1/artists`)).json()) as { data: { name: string }[] }
    expect(list.data.map((artist) => artist.name).sort()).toEqual(['Cerati', 'García', 'Spinetta'])
    const albums = (await (await fetch(`${second.url}/api/v1/artists/2/albums`)).json()) as { data: unknown[] }
    expect(albums.data).toStrictEqual([{ id: 1, artistId: 2, name: 'Clics modernos', year: 1983, kind: 'studio' }])
  })

  // SIGHUP too: a closed terminal or an operator's `kill -HUP` must not cut writes off (it used to exit 129 at once).
  for (const signal of ['SIGTERM', 'SIGHUP'] as const)
    test(`finishes writes in flight when stopped with ${signal}`, async () => {
      const server = await start()
      const writes = Array.from({ length: 16 }, (_, i) =>
        post(`${server.url}/api/v1/artists`, { name: `In flight ${i}` }),
      )
      await Bun.sleep(5)
      const code = server.stop(signal)
      // A request that had not reached the server yet may be refused; one that got an answer must have been saved.
      const answers = await Promise.all(
        writes.map((response) =>
          response.then(
            (r) => r.json(),
            () => undefined,
          ),
        ),
      )
      expect(await code).toBe(0)
      running = []
      const acknowledged = answers.filter(Boolean).map((artist) => (artist as { id: number }).id)
      const onDisk = JSON.parse(readFileSync(join(dir, 'db.json'), 'utf8')) as { artists: { id: number }[] }
      expect(onDisk.artists.map((artist) => artist.id)).toEqual(expect.arrayContaining(acknowledged))
    })

  test('a corrupt data file stops start-up with exit 2 and one line, and is left untouched', async () => {
    const file = join(dir, 'db.json')
    const bytes = '{"version":1,"counters":{"artists":1},"artists":[{"id":1,"name":"Charly"}'
    writeFileSync(file, bytes)
    const { code, stdout, stderr } = await runBinary(['--port', '0', '--data', file])
    expect(code).toBe(2)
    expect(stdout).toBe('')
    expect(stderr.trim().split('\n')).toHaveLength(1)
    expect(stderr).toContain(file)
    expect(readFileSync(file, 'utf8')).toBe(bytes)
  })

  test('a second process on the same data file is refused', async () => {
    await start()
    const { code, stderr } = await runBinary(['--port', '0', '--data', join(dir, 'db.json')])
    expect(code).toBe(2)
    expect(stderr).toContain('in use by another rock-legends process')
  })

  test('runs from any directory and ignores a stray .env and bunfig.toml there', async () => {
    writeFileSync(join(dir, '.env'), 'PORT=1\nROCK_LEGENDS_DATA=/nonexistent/nope.json\n')
    writeFileSync(join(dir, 'bunfig.toml'), 'this is [not valid toml\n')
    const server = await startBinary(['--port', '0', '--data', ':memory:', '--seed'], { cwd: dir })
    running.push(server)
    const response = await fetch(`${server.url}/api/v1/artists?limit=1`)
    expect(response.status).toBe(200)
    expect(((await response.json()) as { meta: { total: number } }).meta.total).toBeGreaterThanOrEqual(25)
  })

  test('reads its settings from the environment', async () => {
    const server = await startBinary([], {
      env: { PORT: '0', ROCK_LEGENDS_DATA: join(dir, 'env.json'), ROCK_LEGENDS_API_KEYS: 'k1,k2' },
    })
    running.push(server)
    const response = await fetch(`${server.url}/api/v1/artists`, {
      method: 'POST',
      headers: { 'x-api-key': 'k2', 'content-type': 'application/json' },
      body: '{"name":"Moris"}',
    })
    expect(response.status).toBe(201)
    expect(await server.stop()).toBe(0)
    running = []
    expect(readFileSync(join(dir, 'env.json'), 'utf8')).toContain('Moris')
  })

  test.each([
    [['--help'], 0, /Usage: rock-legends/, 'stdout'],
    [['--version'], 0, new RegExp(`rock-legends ${pkg.version.replaceAll('.', '\\.')}`), 'stdout'],
    [['--port', 'eighty'], 2, /--port must be/, 'stderr'],
    [['--frobnicate'], 2, /unknown option --frobnicate[\s\S]*Usage:/, 'stderr'],
  ] as const)('%p exits %d', async (args, expectedCode, pattern, stream) => {
    const result = await runBinary([...args])
    expect(result.code).toBe(expectedCode)
    expect(result[stream]).toMatch(pattern)
  })
})
