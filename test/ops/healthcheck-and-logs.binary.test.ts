import { afterEach, beforeAll, describe, expect, test } from 'bun:test'
import { checkHealth, healthzUrl } from '../../src/healthcheck.ts'
import { ensureBinary, type RunningBinary, runBinary, startBinary } from '../support/binary.ts'

// Operations as a subprocess user sees them: the healthcheck command, logs on stderr, the fixture flags.
const KEY = 'ops-binary-key'

let running: RunningBinary[] = []
beforeAll(() => ensureBinary(), 120_000)
afterEach(async () => {
  await Promise.all(running.map((server) => server.stop('SIGKILL')))
  running = []
})

async function start(args: string[], env: Record<string, string> = {}) {
  const server = await startBinary(['--port', '0', '--data', ':memory:', '--api-key', KEY, ...args], { env })
  running.push(server)
  return server
}

const portOf = (url: string) => new URL(url).port

describe('rock-legends healthcheck', () => {
  test('exits 0 against a live server, with --url and with the PORT the server was given', async () => {
    const server = await start(['--log', 'off'])
    const byUrl = await runBinary(['healthcheck', '--url', server.url])
    expect(byUrl).toMatchObject({ code: 0, stderr: '' })
    expect(byUrl.stdout).toContain(`healthy: ${server.url}/healthz`)
    const byEnv = await runBinary(['healthcheck'], { env: { PORT: portOf(server.url), HOST: '0.0.0.0' } })
    expect(byEnv.code).toBe(0)
  })

  test('exits 1 once the server is gone', async () => {
    const server = await start(['--log', 'off'])
    running = []
    expect(await server.stop()).toBe(0)
    const result = await runBinary(['healthcheck', '--url', server.url])
    expect(result.code).toBe(1)
    expect(result.stdout).toBe('')
    expect(result.stderr).toContain('unhealthy')
  })

  test('exits 1 when something else answers on the port', async () => {
    const impostor = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response('busy', { status: 503 }) })
    try {
      const result = await runBinary(['healthcheck', '--url', `http://127.0.0.1:${impostor.port}`])
      expect(result.code).toBe(1)
      expect(result.stderr).toContain('answered 503')
    } finally {
      impostor.stop(true)
    }
  })

  test('exits 2 on a bad URL', async () => {
    const result = await runBinary(['healthcheck', '--url', 'ftp://127.0.0.1:1'])
    expect(result.code).toBe(2)
    expect(result.stderr).toContain('--url must be an http(s) URL')
  })
})

describe('checkHealth', () => {
  test('gives up after its timeout when nothing answers', async () => {
    const silent = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Promise<Response>(() => {}) })
    try {
      const health = await checkHealth(`http://127.0.0.1:${silent.port}`, 200)
      expect(health).toEqual({ healthy: false, detail: expect.stringContaining('no answer within 200 ms') })
    } finally {
      silent.stop(true)
    }
  })

  test.each([
    ['http://127.0.0.1:3000', 'http://127.0.0.1:3000/healthz'],
    ['http://127.0.0.1:3000/', 'http://127.0.0.1:3000/healthz'],
    ['https://api.example/rock/', 'https://api.example/rock/healthz'],
    ['http://127.0.0.1:3000/healthz', 'http://127.0.0.1:3000/healthz'],
  ])('%s → %s', (base, url) => {
    expect(healthzUrl(base)).toBe(url)
  })
})

describe('logs', () => {
  test('--log json: every stderr line is a JSON object; each request has one with its X-Request-Id', async () => {
    const server = await start(['--log', 'json', '--seed'])
    const sent = [
      await fetch(`${server.url}/api/v1/artists?limit=2`),
      await fetch(`${server.url}/api/v1/artists/999`),
      await fetch(`${server.url}/api/v1/artists`, { method: 'POST', headers: { 'x-request-id': 'from-the-client' } }),
    ]
    expect(sent.map((response) => response.status)).toEqual([200, 404, 401])
    await server.stop('SIGTERM')
    running = []
    const lines = (await server.stderr()).trim().split('\n')
    const records = lines.map((line) => JSON.parse(line) as Record<string, unknown>)
    for (const record of records) expect(record).toMatchObject({ time: expect.any(String), level: expect.any(String) })
    const requests = records.filter((record) => record.message === 'request')
    expect(requests).toEqual([
      expect.objectContaining({
        method: 'GET',
        path: '/api/v1/artists?limit=2',
        status: 200,
        requestId: sent[0]?.headers.get('x-request-id'),
        client: '127.0.0.1',
        userAgent: expect.stringMatching(/^Bun\//),
      }),
      expect.objectContaining({ method: 'GET', path: '/api/v1/artists/999', status: 404 }),
      expect.objectContaining({ method: 'POST', status: 401, requestId: 'from-the-client' }),
    ])
    expect(sent[2]?.headers.get('x-request-id')).toBe('from-the-client')
    expect(requests[0]?.durationMs).toBeNumber()
  })

  test('pretty (the default) writes one plain line per request when stderr is not a terminal', async () => {
    const server = await start([])
    const response = await fetch(`${server.url}/api/v1/artists/1`)
    const id = response.headers.get('x-request-id')
    await server.stop('SIGTERM')
    running = []
    const stderr = await server.stderr()
    expect(stderr).toContain(`GET /api/v1/artists/1 404 `)
    // The client and its user agent, then the request id last.
    expect(stderr).toMatch(new RegExp(` ms 127\\.0\\.0\\.1 "Bun/[^"]+" ${id}`))
    expect(stderr).not.toContain('\x1b[')
  })

  test('--log off writes nothing and sends no request ids', async () => {
    const server = await start(['--log', 'off', '--seed'])
    const response = await fetch(`${server.url}/api/v1/artists/1`)
    expect(response.headers.get('x-request-id')).toBeNull()
    await server.stop('SIGTERM')
    running = []
    expect(await server.stderr()).toBe('')
  })
})

describe('fixture flags on the command line', () => {
  test('--allow-reset with --seed: POST /__admin/reset restores the catalogue', async () => {
    const server = await start(['--log', 'off', '--seed', '--allow-reset'])
    const write = { 'x-api-key': KEY, 'content-type': 'application/json' }
    await fetch(`${server.url}/api/v1/artists`, { method: 'POST', headers: write, body: '{"name":"Temporary"}' })
    const reset = await fetch(`${server.url}/__admin/reset`, { method: 'POST', headers: { 'x-api-key': KEY } })
    expect(reset.status).toBe(204)
    const list = (await (await fetch(`${server.url}/api/v1/artists?limit=1`)).json()) as { meta: { total: number } }
    expect(list.meta.total).toBe(32)
  })

  test('ROCK_LEGENDS_READ_ONLY=true refuses writes, serves reads; security headers on both', async () => {
    const server = await start(['--log', 'off', '--seed'], { ROCK_LEGENDS_READ_ONLY: 'true' })
    const write = await fetch(`${server.url}/api/v1/artists`, {
      method: 'POST',
      headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
      body: '{"name":"X"}',
    })
    expect(write.status).toBe(403)
    const read = await fetch(`${server.url}/api/v1/artists/1`)
    expect(read.status).toBe(200)
    for (const response of [write, read]) {
      expect(response.headers.get('x-content-type-options')).toBe('nosniff')
      expect(response.headers.get('x-frame-options')).toBe('DENY')
      expect(response.headers.get('referrer-policy')).toBe('no-referrer')
    }
  })

  test('--delay slows the API, not /healthz', async () => {
    const server = await start(['--log', 'off', '--delay', '300'])
    const started = performance.now()
    expect((await fetch(`${server.url}/api/v1/artists`)).status).toBe(200)
    expect(performance.now() - started).toBeGreaterThanOrEqual(290)
    const health = await Promise.race([
      fetch(`${server.url}/healthz`).then((response) => response.status),
      Bun.sleep(10_000).then(() => 'still waiting'),
    ])
    expect(health).toBe(200)
  })
})
