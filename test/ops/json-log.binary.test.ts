/**
 * `--log json` as a log shipper reads it: every line the executable writes, to stdout and to stderr, is one JSON
 * object with `time`, `level` and `message`, whatever happens: a start and a stop, a start that fails, a torn journal
 * line, a database that goes away and comes back (Bun's SQL client's own warnings included); and `--log-level`
 * decides which lines are written.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'bun:test'
import { appendFileSync, mkdirSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { startServer } from '../../npm/rock-legends/lib/index.js'
import { LOG_LEVELS } from '../../src/log.ts'
import { ensureBinary, type RunningBinary, removeDir, runBinary, startBinary, tempDir } from '../support/binary.ts'
import { ownPostgres, skipWithoutPostgres } from '../support/postgres.ts'

const KEY = 'json-log-key'
const write = { 'x-api-key': KEY, 'content-type': 'application/json' }
type LogRecord = Record<string, unknown> & { time: string; level: string; message: string }

let dir: string
let running: RunningBinary[] = []
beforeAll(() => {
  dir = tempDir('rock-legends-json-log-')
  return ensureBinary()
}, 120_000)
afterEach(async () => {
  await Promise.all(running.map((server) => server.stop('SIGKILL')))
  running = []
})
afterAll(() => removeDir(dir))

async function start(args: string[], env: Record<string, string> = {}) {
  const server = await startBinary(['--port', '0', '--api-key', KEY, ...args], { env })
  running.push(server)
  return server
}

/** Stops `server` with `signal`, expecting exit 0, and gives every line it wrote, each parsed: none may be anything else. */
async function stopped(server: RunningBinary, signal: NodeJS.Signals = 'SIGTERM') {
  running.splice(running.indexOf(server), 1)
  expect(await server.stop(signal)).toBe(0)
  return { stdout: records(await server.stdout()), stderr: records(await server.stderr()) }
}

/** Each line of `text` as the JSON object it must be, with an ISO `time`, a known `level` and a `message`. */
function records(text: string): LogRecord[] {
  const lines = text.split('\n')
  expect(lines.pop()).toBe('')
  return lines.map((line) => {
    let record: LogRecord
    try {
      record = JSON.parse(line)
    } catch {
      throw new Error(`not a JSON line: ${line}`)
    }
    expect(record).toEqual(expect.objectContaining({ time: expect.any(String), message: expect.any(String) }))
    expect(new Date(record.time).toISOString()).toBe(record.time)
    expect(LOG_LEVELS).toContain(record.level as never)
    return record
  })
}

const messages = (lines: LogRecord[]) => lines.map((line) => line.message)

describe('a start and a stop', () => {
  test.each(['SIGTERM', 'SIGHUP'] as const)(
    '%s: the ready object on stdout; seeding, requests, draining and stopped on stderr',
    async (signal) => {
      const data = join(dir, `${signal}.json`)
      const server = await start(['--data', data, '--seed', '--log', 'json'])
      const answers = await Promise.all([
        fetch(`${server.url}/api/v1/artists/1`),
        fetch(`${server.url}/api/v1/artists/999`),
        fetch(`${server.url}/api/v1/artists`, { method: 'POST', headers: write, body: '{"name":"Pappo"}' }),
      ])
      expect(answers.map((answer) => answer.status)).toEqual([200, 404, 201])
      // Health checks are not logged at the default level.
      for (const path of ['/healthz', '/livez', '/readyz'])
        expect((await fetch(`${server.url}${path}`, { method: 'HEAD' })).status).toBe(200)
      const { stdout, stderr } = await stopped(server, signal)

      expect(stdout).toEqual([
        {
          time: expect.any(String),
          level: 'info',
          message: 'ready',
          url: server.url,
          pages: `${server.url}/`,
          docs: `${server.url}/docs`,
          api: `${server.url}/api/v1/artists`,
          data,
          store: 'json-file',
          signup: true,
          version: expect.any(String),
          pid: server.process.pid,
        },
      ])
      expect(messages(stderr)).toEqual(['seeded the catalogue', 'request', 'request', 'request', 'draining', 'stopped'])
      expect(stderr.filter((line) => line.message === 'request').map((line) => [line.status, line.level])).toEqual(
        expect.arrayContaining([
          [200, 'info'],
          [404, 'info'],
          [201, 'info'],
        ]),
      )
      const [draining, end] = stderr.slice(-2)
      expect(draining).toMatchObject({ level: 'info', signal, inFlight: expect.any(Number) })
      expect(end).toMatchObject({ level: 'info', signal, drainMs: expect.any(Number) })
      // Stopped means released: the lock is gone.
      expect(statSync(`${data}.lock`, { throwIfNoEntry: false })).toBeUndefined()
    },
  )

  test('--log-level debug adds the health checks, at level debug', async () => {
    const server = await start(['--data', ':memory:', '--log', 'json', '--log-level', 'debug'])
    for (const path of ['/healthz', '/livez', '/readyz']) expect((await fetch(`${server.url}${path}`)).status).toBe(200)
    expect((await fetch(`${server.url}/api/v1/artists`)).status).toBe(200)
    const { stderr } = await stopped(server)
    const requests = stderr.filter((line) => line.message === 'request')
    expect(requests.map((line) => [line.path, line.level])).toEqual([
      ['/healthz', 'debug'],
      ['/livez', 'debug'],
      ['/readyz', 'debug'],
      ['/api/v1/artists', 'info'],
    ])
  })

  test("the npm package's startServer finds the URL in the ready object with log: 'json'", async () => {
    const server = await startServer({ log: 'json', logLevel: 'warn', binary: await ensureBinary() })
    try {
      expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
      expect((await fetch(`${server.url}/livez`)).status).toBe(200)
    } finally {
      await server.stop()
    }
  })

  test('pretty (the default): the banner as before, the health checks left out, draining and stopped', async () => {
    const server = await start(['--data', ':memory:'], { ROCK_LEGENDS_LOG_LEVEL: 'info' })
    await fetch(`${server.url}/healthz`)
    await fetch(`${server.url}/api/v1/artists`)
    running = []
    expect(await server.stop()).toBe(0)
    expect((await server.stdout()).split('\n')[0]).toBe(`rock-legends listening on ${server.url}`)
    const lines = (await server.stderr()).trimEnd().split('\n')
    expect(lines).toHaveLength(3)
    expect(lines[0]).toStartWith('GET /api/v1/artists 200 ')
    expect(lines[1]).toMatch(/^draining signal=SIGTERM inFlight=\d+$/)
    expect(lines[2]).toMatch(/^stopped signal=SIGTERM drainMs=\d+$/)
  })
})

describe('a start that fails: one JSON object on stderr, nothing on stdout, no stack', () => {
  // A port another listener holds.
  let busy: { port: number; stop(closeActive?: boolean): void } | undefined
  beforeAll(() => {
    busy = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
  })
  afterAll(() => busy?.stop(true))
  const bad = () => {
    const file = join(dir, 'bad', 'db.json')
    mkdirSync(join(dir, 'bad'), { recursive: true, mode: 0o755 })
    writeFileSync(file, '{"version": 1, "artists": [', { mode: 0o600 })
    return file
  }
  test.each([
    ['a bad flag value', () => ['--port', 'http', '--log', 'json'], {}, /^--port must be/],
    ['an unknown flag, json from the environment', () => ['--verbose'], { ROCK_LEGENDS_LOG: 'json' }, /--verbose/],
    // On a free port: the default one (3000) may be another server's on a developer's machine.
    ['a data file that is not JSON', () => ['--data', bad(), '--port', '0', '--log=json'], {}, /is not valid JSON/],
    [
      'a port in use',
      () => ['--port', String(busy?.port), '--data', ':memory:', '--log', 'json'],
      {},
      /^the address is already in use/,
    ],
  ] as const)('%s', async (_, args, env, message) => {
    const result = await runBinary(args(), { env })
    expect(result.code).toBe(2)
    expect(result.stdout).toBe('')
    const [record, ...more] = records(result.stderr)
    expect(more).toEqual([])
    expect(record).toMatchObject({ level: 'error', exitCode: 2 })
    expect(record?.message).toMatch(message)
    expect(JSON.stringify(record)).not.toContain('    at ')
  })

  test('pretty (the default) says the same as before: one line, then the usage for a bad flag', async () => {
    const result = await runBinary(['--port', 'http'])
    expect(result.code).toBe(2)
    expect(result.stderr).toStartWith('rock-legends: --port must be')
    expect(result.stderr).toContain('\n\nUsage: rock-legends [options]')
  })
})

describe('a torn journal line, cut off at start', () => {
  /**
   * A data file whose journal holds one acknowledged write, then the first bytes of another (`{"torn`): as a server
   * killed while appending leaves it. Returns the file, and where the torn bytes begin.
   */
  async function tornDataFile(name: string) {
    const data = join(dir, name, 'db.json')
    const first = await start(['--data', data, '--log', 'off'])
    const created = await fetch(`${first.url}/api/v1/artists`, {
      method: 'POST',
      headers: write,
      body: '{"name":"Moris"}',
    })
    expect(created.status).toBe(201)
    // Killed: the journal keeps its entry (a stop would fold it into the data file).
    running.splice(running.indexOf(first), 1)
    await first.stop('SIGKILL')
    const at = statSync(`${data}.journal`).size
    expect(at).toBeGreaterThan(0)
    appendFileSync(`${data}.journal`, '{"torn')
    return { data, at }
  }

  test('is logged as a warning: which journal, where and how many bytes; the acknowledged write is kept', async () => {
    const { data, at } = await tornDataFile('torn-json')
    const server = await start(['--data', data, '--log', 'json'])
    expect((await fetch(`${server.url}/api/v1/artists/1`)).status).toBe(200)
    const { stderr } = await stopped(server)
    expect(stderr[0]).toEqual({
      time: expect.any(String),
      level: 'warn',
      message: 'cut off a torn journal line: a write the process died making, never acknowledged',
      journal: `${data}.journal`,
      at,
      bytes: 6,
    })
  })

  test('--log-level warn writes it and leaves out the info lines; error leaves it out too', async () => {
    const warned = await start([
      '--data',
      (await tornDataFile('torn-warn')).data,
      '--log',
      'json',
      '--log-level',
      'warn',
    ])
    await fetch(`${warned.url}/api/v1/artists/1`)
    const { stdout, stderr } = await stopped(warned)
    // The ready object whatever the level: it says the server is ready.
    expect(messages(stdout)).toEqual(['ready'])
    expect(stderr.map((line) => line.level)).toEqual(['warn'])

    const quiet = await start(['--data', (await tornDataFile('torn-error')).data, '--log', 'json'], {
      ROCK_LEGENDS_LOG_LEVEL: 'error',
    })
    await fetch(`${quiet.url}/api/v1/artists/1`)
    expect((await stopped(quiet)).stderr).toEqual([])
  })

  test('pretty: a warning line', async () => {
    const server = await start(['--data', (await tornDataFile('torn-pretty')).data])
    running = []
    await server.stop()
    expect((await server.stderr()).split('\n')[0]).toStartWith('warning: cut off a torn journal line: ')
  })
})

const skipSql = skipWithoutPostgres()

describe.skipIf(skipSql)('a database that goes away and comes back', () => {
  test("every line is JSON, Bun's SQL client's warnings included; refused requests are errors", async () => {
    const postgres = await ownPostgres()
    const server = await start(['--data', postgres.url(await postgres.freshDatabase()), '--seed', '--log', 'json'])
    expect((await fetch(`${server.url}/api/v1/artists/1`)).status).toBe(200)
    postgres.stop('fast')
    try {
      // Long enough for the client to try its LISTEN connection again: the first retry came within a second here.
      const deadline = Date.now() + 2000
      while (Date.now() < deadline) {
        expect([200, 503]).toContain((await fetch(`${server.url}/api/v1/artists/1`)).status)
        expect((await fetch(`${server.url}/healthz`)).status).toBeGreaterThanOrEqual(200)
        await Bun.sleep(250)
      }
    } finally {
      postgres.start()
    }
    const back = Date.now() + 15_000
    while ((await fetch(`${server.url}/readyz`)).status !== 200)
      if (Date.now() > back) throw new Error('the server did not serve again within 15 s of the database')
      else await Bun.sleep(100)
    const { stdout, stderr } = await stopped(server)

    expect(stdout).toEqual([expect.objectContaining({ message: 'ready', store: 'postgresql' })])
    const driver = stderr.filter((line) => line.message.startsWith('bun:sql '))
    expect(driver.length).toBeGreaterThan(0)
    for (const line of driver) expect(line).toMatchObject({ level: 'warn', message: expect.stringContaining('LISTEN') })
    const refused = stderr.filter((line) => line.message === 'request' && line.status === 503)
    expect(refused.length).toBeGreaterThan(0)
    for (const line of refused) expect(line.level).toBe('error')
    // The health checks, asked every quarter of a second and refused meanwhile, are not logged at the default level.
    expect(stderr.some((line) => line.path === '/healthz' || line.path === '/readyz')).toBe(false)
    expect(messages(stderr).slice(-2)).toEqual(['draining', 'stopped'])
  }, 60_000)
})
