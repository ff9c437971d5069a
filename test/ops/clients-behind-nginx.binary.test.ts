import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { EVENT_STREAM_LIMITS } from '../../src/events/streams.ts'
import {
  ensureBinary,
  freePort,
  type RunningBinary,
  removeDir,
  runBinary,
  startBinary,
  tempDir,
} from '../support/binary.ts'
import { blocks, makeCertificate, nginxConfig, PROGRAMS, run, skipProxies } from '../support/proxies.ts'

// Many clients, each on its own address, reach the executable through nginx with TLS, configured as
// docs/operations.md says (`--trust-proxy 127.0.0.1`), as visitors reach a small VPS. All of it runs in a network
// namespace of its own, whose loopback answers for every address of 198.18.0.0/24 (a range set aside for tests), so
// curl can send from any of them (`--interface`) and the machine's own network is left as it was. The namespace
// needs root (CAP_NET_ADMIN); without it the tests skip and say so, except under CI=true.

const NAMESPACE = `rock-legends-${process.pid}`
/** How network namespaces are made here: as root, or through sudo without a password (a CI runner's user). */
const asRoot = process.getuid?.() === 0 ? [] : ['sudo', '-n']
const canUseNamespaces = (() => {
  if (skipProxies || process.platform !== 'linux') return false
  const made = run([...asRoot, 'ip', 'netns', 'add', NAMESPACE])
  if (made.code !== 0) return false
  run([...asRoot, 'ip', 'netns', 'delete', NAMESPACE])
  return true
})()
if (!canUseNamespaces && !skipProxies && process.env.CI === 'true')
  throw new Error('the clients-behind-nginx tests must run in CI, but `ip netns add` failed: run them as root')
if (!canUseNamespaces && !skipProxies)
  console.warn('\n!!! SKIPPING the clients-behind-nginx tests: `ip netns add` needs root (CAP_NET_ADMIN)\n')
const skip = !canUseNamespaces

/** Runs `command` inside the namespace. */
const inside = (command: string[]) => [...asRoot, 'ip', 'netns', 'exec', NAMESPACE, ...command]

const KEY = 'rl_clients_behind_nginx_key_0123456789'
const PROXY = '198.18.0.1'
/** The address of client `n` (2 to 254). */
const client = (n: number) => `198.18.0.${n}`
const limit = 100

let dir: string
let data: string
let server: RunningBinary | undefined
let nginx: ReturnType<typeof Bun.spawn> | undefined
let base: string
let resolve: string

beforeAll(async () => {
  if (skip) return
  await ensureBinary()
  dir = tempDir('rock-legends-clients-')
  data = join(dir, 'db.json')
  const { cert, key } = makeCertificate(dir)
  for (const command of [
    [...asRoot, 'ip', 'netns', 'add', NAMESPACE],
    inside(['ip', 'link', 'set', 'lo', 'up']),
    // Every address of the range is this namespace's own: a client may send from any of them.
    inside(['ip', 'route', 'add', 'local', '198.18.0.0/24', 'dev', 'lo']),
  ]) {
    expect({ command, ...run(command) }).toMatchObject({ command, code: 0 })
  }
  server = await startBinary(
    ['--port', '0', '--data', data, '--api-key', KEY, '--trust-proxy', '127.0.0.1', '--log', 'off'],
    { wrapper: inside([]) },
  )
  const listen = freePort()
  const file = join(dir, 'nginx.conf')
  const upstream = { 3000: Number(new URL(server.url).port) }
  writeFileSync(file, nginxConfig({ dir, cert, key }, blocks('nginx')[0] as string, listen, upstream, PROXY))
  nginx = Bun.spawn(inside([PROGRAMS.nginx, '-p', dir, '-c', file, '-g', 'daemon off;']), { stderr: 'pipe' })
  base = `https://api.example.com:${listen}`
  resolve = `api.example.com:${listen}:${PROXY}`
  const deadline = Date.now() + 10_000
  while (Date.now() < deadline && (await curl(client(2), ['/livez'])).statuses[0] !== 200) await Bun.sleep(50)
}, 60_000)

afterAll(async () => {
  nginx?.kill('SIGKILL')
  await nginx?.exited
  await server?.stop()
  if (!skip) run([...asRoot, 'ip', 'netns', 'delete', NAMESPACE])
  if (dir) removeDir(dir)
})

/**
 * curl from `from` through nginx: `paths` in turn over one connection, with `options` (headers, method, body); the
 * status of each, in order, and what the last one answered.
 */
async function curl(from: string, paths: string[], options: string[] = []) {
  const child = Bun.spawn(
    inside([
      'curl',
      '--silent',
      '--insecure',
      '--interface',
      from,
      '--resolve',
      resolve,
      '--write-out',
      '\n%{http_code}\n',
      ...options,
      ...paths.map((path) => `${base}${path}`),
    ]),
    { stdout: 'pipe', stderr: 'pipe' },
  )
  const output = await new Response(child.stdout).text()
  await child.exited
  const lines = output.trimEnd().split('\n')
  const statuses = lines.filter((line) => /^\d{3}$/.test(line)).map(Number)
  return { statuses, body: lines.slice(-2, -1)[0] ?? '' }
}

/** `count` requests with wrong keys from `from`, its `X-Forwarded-For` set to `forged` when given. */
const guess = (from: string, count: number, forged?: string) =>
  curl(from, Array(count).fill('/__admin/users'), [
    '--header',
    'x-api-key: not-the-key',
    ...(forged ? ['--header', `x-forwarded-for: ${forged}`] : []),
  ])

/** A create with the right service key from `from`. */
const create = async (from: string, name: string) =>
  (
    await curl(
      from,
      ['/api/v1/artists'],
      ['--header', `x-api-key: ${KEY}`, '--json', JSON.stringify({ name }), '--request', 'POST'],
    )
  ).statuses[0]

describe.skipIf(skip)('behind nginx, clients on their own addresses', () => {
  test(`${limit * 2} wrong keys from one client leave another client's key and login working`, async () => {
    const signup = await curl(
      client(3),
      ['/api/v1/user/signup'],
      ['--json', JSON.stringify({ name: 'Ana', email: 'ana@rock-legends.com', password: 'i-love-rock' })],
    )
    expect(signup.statuses).toEqual([201])
    const guesses = await guess(client(2), limit * 2)
    expect(guesses.statuses).toEqual([...Array(limit).fill(401), ...Array(limit).fill(429)])
    // The guesser's own address is braked, the right key included: a service key may be weak.
    expect(await create(client(2), 'Pappo')).toBe(429)
    // Another client's right key, and its login, are untouched.
    expect(await create(client(3), 'Pappo')).toBe(201)
    const login = await curl(
      client(3),
      ['/api/v1/user/login'],
      ['--json', JSON.stringify({ email: 'ana@rock-legends.com', password: 'i-love-rock' })],
    )
    expect(login.statuses).toEqual([200])
    expect(JSON.parse(login.body).token).toStartWith('rl_tok_')
  })

  test('a client cannot choose its address by writing X-Forwarded-For: nginx appends the one it saw', async () => {
    // Client 4 names client 5 in its own header: its guesses still count against client 4.
    const guesses = await guess(client(4), limit + 1, client(5))
    expect(guesses.statuses.at(-1)).toBe(429)
    expect(await create(client(5), 'Luca Prodan')).toBe(201)
    expect(await create(client(4), 'Luca Prodan')).toBe(429)
  })

  test('`rock-legends users list` works during a flood of wrong keys from loopback', async () => {
    // Through nginx from the proxy's own machine: every such request is loopback's, braked together.
    const flood = await curl('127.0.0.1', Array(limit + 1).fill('/__admin/users'), ['--header', 'x-api-key: wrong'])
    expect(flood.statuses.at(-1)).toBe(429)
    const listed = await runBinary(['users', 'list', '--data', data, '--json'], { wrapper: inside([]) })
    expect({ code: listed.code, stderr: listed.stderr }).toMatchObject({ code: 0 })
    expect(JSON.parse(listed.stdout).data).toMatchObject([{ email: 'ana@rock-legends.com' }])
  })

  test(`${EVENT_STREAM_LIMITS.perClient + 1} event streams from as many clients are all served, and see a change`, async () => {
    const count = EVENT_STREAM_LIMITS.perClient + 1
    const streams = Array.from({ length: count }, (_, i) =>
      Bun.spawn(
        inside([
          'curl',
          '--silent',
          '--insecure',
          '--no-buffer',
          '--max-time',
          '10',
          '--interface',
          client(10 + i),
          '--resolve',
          resolve,
          '--include',
          `${base}/api/v1/events`,
        ]),
        { stdout: 'pipe', stderr: 'pipe' },
      ),
    )
    try {
      const readers = streams.map((stream) => ({ reader: stream.stdout.getReader(), text: '' }))
      const decoder = new TextDecoder()
      /** Reads every stream until each holds `expected`, or 8 seconds pass. */
      const until = async (expected: string) => {
        const deadline = Date.now() + 8000
        await Promise.all(
          readers.map(async (stream) => {
            while (!stream.text.includes(expected) && Date.now() < deadline) {
              const { value, done } = await stream.reader.read()
              if (done) break
              stream.text += decoder.decode(value, { stream: true })
            }
          }),
        )
      }
      await until('event: ready')
      // curl speaks HTTP/2 to nginx, as browsers do: many streams, one connection each here.
      const statuses = readers.map((stream) => /^HTTP\/[\d.]+ (\d{3})/.exec(stream.text)?.[1])
      expect(statuses).toEqual(readers.map(() => '200'))
      expect(await create(client(3), 'Claudia Puyó')).toBe(201)
      await until('Claudia Puyó')
      for (const stream of readers) expect(stream.text).toContain('event: artist-created')
      // The limit is real: one more stream from a client that holds its share is refused.
      const more = await Promise.all(
        Array.from({ length: EVENT_STREAM_LIMITS.perClient + 1 }, () =>
          curl(client(40), ['/api/v1/events'], ['--max-time', '2']),
        ),
      )
      expect(more.map(({ statuses }) => statuses[0]).filter((status) => status === 429)).toHaveLength(1)
    } finally {
      for (const stream of streams) stream.kill()
    }
  }, 30_000)
})
