import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { ensureBinary, freePort, type RunningBinary, removeDir, startBinary, tempDir } from '../support/binary.ts'
import { blocks, makeCertificate, nginxConfig, PROGRAMS, run, skipProxies } from '../support/proxies.ts'

// The proxy configurations of docs/operations.md, as written there, loaded by the real programs from Debian (nginx,
// HAProxy, Caddy) with only the certificate paths and ports replaced; then nginx with TLS and HAProxy in front of the
// executable, as an operator runs them. Without those programs the tests skip and say so, except under CI=true.

const KEY = 'rl_behind_proxies_test_key_0123456789'
let dir: string
let cert: string
let key: string
const servers: RunningBinary[] = []
const proxies: ReturnType<typeof Bun.spawn>[] = []

beforeAll(async () => {
  if (skipProxies) return
  await ensureBinary()
  dir = tempDir('rock-legends-proxies-')
  ;({ cert, key } = makeCertificate(dir))
}, 60_000)

afterAll(async () => {
  for (const proxy of proxies) proxy.kill('SIGKILL')
  await Promise.all(servers.map((server) => server.stop()))
  if (dir) removeDir(dir)
})

describe.skipIf(skipProxies)('the configurations of docs/operations.md', () => {
  test('every nginx snippet loads in nginx -t', () => {
    const snippets = blocks('nginx')
    expect(snippets.length).toBeGreaterThanOrEqual(2)
    for (const [i, snippet] of snippets.entries()) {
      const file = join(dir, `check-${i}.conf`)
      writeFileSync(file, nginxConfig({ dir, cert, key }, snippet, freePort(), {}))
      const checked = run([PROGRAMS.nginx, '-t', '-p', dir, '-c', file])
      expect({ snippet: i, code: checked.code, output: checked.output }).toMatchObject({ snippet: i, code: 0 })
    }
  })

  test('every HAProxy snippet loads in haproxy -c', () => {
    const snippets = blocks('haproxy')
    expect(snippets.length).toBeGreaterThanOrEqual(1)
    for (const [i, snippet] of snippets.entries()) {
      const file = join(dir, `check-${i}.haproxy`)
      writeFileSync(file, snippet.replaceAll('/etc/haproxy/certs/api.example.com.pem', join(dir, 'haproxy.pem')))
      const checked = run([PROGRAMS.haproxy, '-c', '-f', file])
      expect({ snippet: i, code: checked.code, output: checked.output }).toMatchObject({ snippet: i, code: 0 })
    }
  })

  test('every Caddyfile validates in caddy validate', () => {
    const snippets = blocks('caddy')
    expect(snippets.length).toBeGreaterThanOrEqual(1)
    for (const [i, snippet] of snippets.entries()) {
      const file = join(dir, `Caddyfile-${i}`)
      writeFileSync(file, snippet)
      const checked = run([PROGRAMS.caddy, 'validate', '--config', file, '--adapter', 'caddyfile'], {
        HOME: dir,
        XDG_DATA_HOME: join(dir, 'caddy-data'),
        XDG_CONFIG_HOME: join(dir, 'caddy-config'),
      })
      expect({ snippet: i, code: checked.code, output: checked.output }).toMatchObject({ snippet: i, code: 0 })
    }
  })
})

describe.skipIf(skipProxies)('behind nginx with TLS, as documented', () => {
  let base: string
  const tls = { rejectUnauthorized: false }
  const host = { host: 'api.example.com' }

  beforeAll(async () => {
    const server = await startBinary([
      '--port',
      '0',
      '--data',
      ':memory:',
      '--api-key',
      KEY,
      '--trust-proxy',
      '127.0.0.1',
      '--log',
      'off',
    ])
    servers.push(server)
    const listen = freePort()
    const file = join(dir, 'nginx.conf')
    writeFileSync(
      file,
      nginxConfig({ dir, cert, key }, blocks('nginx')[0] as string, listen, { 3000: Number(new URL(server.url).port) }),
    )
    const nginx = Bun.spawn([PROGRAMS.nginx, '-p', dir, '-c', file, '-g', 'daemon off;'], { stderr: 'pipe' })
    proxies.push(nginx)
    base = `https://127.0.0.1:${listen}`
    const deadline = Date.now() + 10_000
    while (Date.now() < deadline) {
      const up = await fetch(`${base}/livez`, { tls }).then(
        (response) => response.ok,
        () => false,
      )
      if (up) break
      await Bun.sleep(50)
    }
  }, 30_000)

  test('/openapi.json names https:// and the host the client used', async () => {
    const response = await fetch(`${base}/openapi.json`, { tls, headers: host })
    expect(response.status).toBe(200)
    const document = (await response.json()) as { servers: { url: string }[] }
    expect(document.servers[0]?.url).toBe('https://api.example.com')
  })

  test('an event arrives through the proxy as soon as it happens', async () => {
    const controller = new AbortController()
    try {
      const stream = await fetch(`${base}/api/v1/events`, { tls, headers: host, signal: controller.signal })
      expect(stream.status).toBe(200)
      const reader = (stream.body as ReadableStream<Uint8Array>).getReader()
      const created = await fetch(`${base}/api/v1/artists`, {
        tls,
        method: 'POST',
        headers: { ...host, 'content-type': 'application/json', 'x-api-key': KEY },
        body: JSON.stringify({ name: 'Pedro Aznar' }),
      })
      expect(created.status).toBe(201)
      let text = ''
      const decoder = new TextDecoder()
      const deadline = Date.now() + 5000
      while (!text.includes('event: artist-created') && Date.now() < deadline) {
        const { value, done } = await reader.read()
        if (done) break
        text += decoder.decode(value)
      }
      expect(text).toContain('event: artist-created')
      expect(text).toContain('Pedro Aznar')
    } finally {
      controller.abort()
    }
  })

  test("/, the document and /docs' bundle arrive compressed as the server made them; small files as they are", async () => {
    for (const [path, coding] of [
      ['/', 'zstd'],
      ['/openapi.json', 'zstd'],
      ['/docs/assets/docs.js', null],
      ['/favicon.svg', null],
    ] as const) {
      const response = await fetch(`${base}${path}`, {
        tls,
        headers: { ...host, 'accept-encoding': 'gzip, deflate, br, zstd' },
        decompress: false,
      })
      expect({ path, status: response.status, coding: response.headers.get('content-encoding') }).toEqual({
        path,
        status: 200,
        coding,
      })
      await response.arrayBuffer()
    }
    const bundle = (await fetch(`${base}/docs`, { tls, headers: host }).then((page) => page.text())).match(
      /\/docs\/assets\/scalar-[^"]+\.js/,
    )?.[0]
    const compressed = await fetch(`${base}${bundle}`, {
      tls,
      headers: { ...host, 'accept-encoding': 'gzip, br' },
      decompress: false,
    })
    expect(compressed.headers.get('content-encoding')).toBe('br')
    expect(compressed.headers.get('vary')).toBe('Accept-Encoding')
    expect((await compressed.arrayBuffer()).byteLength).toBeLessThan(1_000_000)
  })

  test('the client the proxy names is the one the server counts', async () => {
    // nginx appends the address it saw; from this machine that is loopback, itself a trusted proxy here, so the
    // address before it (what the client wrote) names the client, as a proxy in front of nginx would.
    const guesser = '203.0.113.7'
    for (let i = 0; i < 100; i++) {
      const wrong = await fetch(`${base}/api/v1/artists`, {
        tls,
        method: 'POST',
        headers: { ...host, 'content-type': 'application/json', 'x-api-key': `wrong-${i}`, 'x-forwarded-for': guesser },
        body: '{"name":"x"}',
      })
      expect(wrong.status).toBe(401)
    }
    const write = (client: string) =>
      fetch(`${base}/api/v1/artists`, {
        tls,
        method: 'POST',
        headers: { ...host, 'content-type': 'application/json', 'x-api-key': KEY, 'x-forwarded-for': client },
        body: JSON.stringify({ name: 'Rinaldo Rafanelli' }),
      })
    expect((await write(guesser)).status).toBe(429)
    expect((await write('198.51.100.9')).status).toBe(201)
  })
})

describe.skipIf(skipProxies)('behind HAProxy, as documented: its health checks pass', () => {
  // The documented check, and the one most HAProxy guides write; both are HTTP/1.0 without `Host`.
  for (const check of ['option httpchk GET /readyz', 'option httpchk GET /healthz'])
    test(`both replicas stay up through two rounds of \`${check}\`, and answer through it`, async () => {
      const replicas = await Promise.all(
        [0, 1].map(() =>
          startBinary(['--port', '0', '--data', ':memory:', '--trust-proxy', '127.0.0.1', '--log', 'off']),
        ),
      )
      servers.push(...replicas)
      const listen = freePort()
      const [first, second] = replicas.map((replica) => new URL(replica.url).port)
      const documented = blocks('haproxy')[0] as string
      expect(documented).toContain('option httpchk GET /readyz')
      const config = documented
        .replace('option httpchk GET /readyz', check)
        .replaceAll('/etc/haproxy/certs/api.example.com.pem', join(dir, 'haproxy.pem'))
        .replace('bind :443', `bind 127.0.0.1:${listen}`)
        .replace('127.0.0.1:3001', `127.0.0.1:${first}`)
        .replace('127.0.0.1:3002', `127.0.0.1:${second}`)
        .replace(/inter 2s/g, 'inter 300ms')
      const file = join(dir, `haproxy-${listen}.cfg`)
      writeFileSync(file, config)
      const haproxy = Bun.spawn([PROGRAMS.haproxy, '-db', '-f', file], { stdout: 'pipe', stderr: 'pipe' })
      proxies.push(haproxy)
      // `fall 2` at 300 ms: a replica that failed its checks would be down within a second.
      await Bun.sleep(1500)
      const answers = await Promise.all(
        Array.from({ length: 4 }, () =>
          fetch(`https://127.0.0.1:${listen}/api/v1/artists?limit=1`, { tls: { rejectUnauthorized: false } }),
        ),
      )
      expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200])
      haproxy.kill('SIGTERM')
      const log = await new Response(haproxy.stdout).text()
      expect(log).not.toMatch(/is DOWN/)
    }, 30_000)
})
