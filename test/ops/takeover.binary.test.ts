import { afterEach, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { connect } from 'node:net'
import { join } from 'node:path'
import {
  ensureBinary,
  freePort,
  type RunningBinary,
  removeDir,
  runBinary,
  startBinary,
  tempDir,
} from '../support/binary.ts'
import { skipProxies } from '../support/proxies.ts'
import { loadDuringSwap, nginxInFront } from '../support/swap.ts'

// Replacing the executable on one machine, as an upgrade does: a new process started with --takeover over the same
// data file and port while the old one serves under load, straight and through nginx as docs/operations.md sets it
// up. Not one request may fail, and every acknowledged create must be in the new process's store.

const KEY = 'takeover-test-key-0123456789abcdef'

let dir: string
let port: number
let running: RunningBinary[] = []
beforeAll(() => ensureBinary(), 120_000)
beforeEach(() => {
  dir = tempDir('rock-legends-takeover-')
  port = freePort()
})
afterEach(async () => {
  await Promise.all(running.map((server) => server.stop('SIGKILL')))
  running = []
  removeDir(dir)
})

const args = (data = join(dir, 'db.json')) => ['--port', String(port), '--data', data, '--api-key', KEY]

async function start(extra: string[], data?: string) {
  const server = await startBinary([...args(data), ...extra])
  running.push(server)
  return server
}

/** Load on `base` while a new process takes over from `old`; what the clients saw, checked against the new store. */
async function swapUnderLoad(old: RunningBinary, base: string, options: { keepAlive?: boolean; insecure?: boolean }) {
  let next: RunningBinary | undefined
  const load = await loadDuringSwap({
    base,
    key: KEY,
    clients: 16,
    beforeMs: 500,
    afterMs: 500,
    ...options,
    swap: async () => {
      next = await start(['--takeover'])
      expect(await old.process.exited).toBe(0)
    },
  })
  // Requests were sent while the new process took over, and after it had.
  expect(load.sentDuring).toBeGreaterThan(0)
  expect(load.sentAfter).toBeGreaterThan(0)
  const missing: number[] = []
  for (const id of load.created)
    if ((await fetch(`http://127.0.0.1:${port}/api/v1/artists/${id}`)).status !== 200) missing.push(id)
  return { load, missing, next: next as RunningBinary }
}

describe('--takeover', () => {
  test('replaces a server under load on keep-alive connections without a failed request', async () => {
    const old = await start(['--seed'])
    const { load, missing, next } = await swapUnderLoad(old, `http://127.0.0.1:${port}`, {})
    expect(load.failures).toEqual([])
    expect(load.created.length).toBe(load.writes)
    expect(missing).toEqual([])
    expect(await next.stop()).toBe(0)
    expect(await next.stderr()).toContain(`took over from pid ${old.process.pid}`)
  }, 60_000)

  test('replaces a server under load on a new connection per request without a failed request', async () => {
    const old = await start(['--log', 'off'])
    const { load, missing } = await swapUnderLoad(old, `http://127.0.0.1:${port}`, { keepAlive: false })
    expect(load.failures).toEqual([])
    expect(load.created.length).toBe(load.writes)
    expect(missing).toEqual([])
  }, 60_000)

  test.skipIf(skipProxies)(
    'replaces a server behind nginx without a failed request',
    async () => {
      const old = await start(['--log', 'off', '--trust-proxy', '127.0.0.1'])
      const nginx = await nginxInFront(dir, port)
      try {
        const { load, missing } = await swapUnderLoad(old, nginx.url, { insecure: true })
        expect(load.failures).toEqual([])
        expect(load.created.length).toBe(load.writes)
        expect(missing).toEqual([])
      } finally {
        nginx.stop()
      }
    },
    60_000,
  )

  test('takes the metrics listener over as well', async () => {
    const metrics = ['--metrics', `127.0.0.1:${freePort()}`, '--log', 'off']
    const old = await start(metrics)
    const next = await start([...metrics, '--takeover'])
    expect(await old.process.exited).toBe(0)
    expect(next.process.exitCode).toBeNull()
    const text = await (await fetch(`http://${metrics[1]}/metrics`)).text()
    expect(text).toContain('# TYPE rock_legends_http_requests_total counter')
  })

  test('is an ordinary start where no server runs', async () => {
    const server = await start(['--takeover', '--seed'])
    expect((await fetch(`${server.url}/api/v1/artists/1`)).status).toBe(200)
  })

  test('records in the lock the signal that asks for a handover', async () => {
    await start([])
    expect(readFileSync(join(dir, 'db.json.lock'), 'utf8')).toMatch(/^\d+\nurl=http:\S+\nkey=\S+\nhandover=SIGUSR2\n$/)
  })

  test('is refused over memory, as over a database', async () => {
    const result = await runBinary(['--port', '0', '--data', ':memory:', '--takeover'])
    expect(result.code).toBe(2)
    expect(result.stderr).toContain('--takeover hands a data file over from the server running over it')
  })
})

describe('the port', () => {
  test('is not shared with a second server that does not take over', async () => {
    await start([])
    // Another data file, the same port: SO_REUSEPORT would let it take half the connections without a word.
    const result = await runBinary([...args(join(dir, 'other.json')), '--allow-new-data'])
    expect(result.code).toBe(2)
    expect(result.stderr).toContain('the address is already in use')
  })
})

describe('SIGUSR2', () => {
  test('closes keep-alive connections with their next answer, then stops as SIGTERM does', async () => {
    const server = await start([])
    const socket = connect(port, '127.0.0.1')
    let received = ''
    socket.on('data', (chunk) => {
      received += chunk.toString()
    })
    const closed = new Promise((resolve) => socket.on('close', resolve))
    await new Promise((resolve) => socket.on('connect', resolve))
    server.process.kill('SIGUSR2')
    await Bun.sleep(50)
    socket.write('GET /api/v1/artists HTTP/1.1\r\nHost: x\r\n\r\n')
    await closed
    expect(received).toMatch(/^HTTP\/1\.1 200 OK\r\n/)
    expect(received.toLowerCase()).toContain('connection: close')
    expect(await server.process.exited).toBe(0)
  })
})
