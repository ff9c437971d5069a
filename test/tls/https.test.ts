import { afterAll, afterEach, describe, expect, test } from 'bun:test'
import { chmodSync, copyFileSync } from 'node:fs'
import { join } from 'node:path'
import { type RunningServer, type StartOptions, startServer } from '../../src/server.ts'
import { MAX_LINGERING } from '../../src/tls/listeners.ts'
import { sse } from '../events/sse.ts'
import { removeDir, tempDir } from '../support/binary.ts'
import {
  keepConnection,
  makeCa,
  opensslMissing,
  placeLeaf,
  servedSerial,
  type TestLeaf,
} from '../support/certificates.ts'

// HTTPS from certificate files, in-process: real certificates made by openssl, a client that trusts their CA alone.
const KEY = 'tls-key'

const dir = tempDir('rock-legends-tls-')
afterAll(() => removeDir(dir))
const ca = makeCa(dir)
const trusted = () => ({ tls: { ca: ca.pem } })

let running: RunningServer[] = []
afterEach(async () => {
  await Promise.all(running.map((server) => server.stop()))
  running = []
})

const placed = (leaf: TestLeaf) => placeLeaf(dir, leaf)

/** Puts `leaf` where `at` is served from, as a renewal does. */
function renew(at: { cert: string; key: string }, leaf: TestLeaf) {
  copyFileSync(leaf.cert, at.cert)
  copyFileSync(leaf.key, at.key)
}

async function start(leaf: TestLeaf, options: StartOptions = {}) {
  const at = placed(leaf)
  const server = await startServer({ apiKeys: [KEY], tlsCert: at.cert, tlsKey: at.key, ...options })
  running.push(server)
  return { server, at }
}

describe.skipIf(opensslMissing)('HTTPS from certificate files', () => {
  test('serves HTTPS checked against its CA, says https:// and sends HSTS on every answer', async () => {
    const { server } = await start(ca.leaf('hello'), { seed: true })
    expect(server.url).toBe(`https://127.0.0.1:${server.port}`)
    const artist = await fetch(`${server.url}/api/v1/artists/1`, trusted())
    expect(artist.status).toBe(200)
    const answers = await Promise.all(
      [
        fetch(`${server.url}/api/v1/artists/1`, trusted()),
        fetch(`${server.url}/`, trusted()),
        fetch(`${server.url}/healthz`, trusted()),
        fetch(`${server.url}/no-such-page`, trusted()),
        fetch(`${server.url}/api/v1/artists`, { ...trusted(), method: 'POST', body: '{}' }),
      ].map(async (answer) => {
        const response = await answer
        return [response.status, response.headers.get('strict-transport-security')]
      }),
    )
    expect(answers).toEqual([
      [200, 'max-age=31536000'],
      [200, 'max-age=31536000'],
      [200, 'max-age=31536000'],
      [404, 'max-age=31536000'],
      [401, 'max-age=31536000'],
    ])
    const document = (await (await fetch(`${server.url}/openapi.json`, trusted())).json()) as {
      servers: { url: string }[]
    }
    expect(document.servers[0]?.url).toBe(server.url)
    // A client that does not trust the CA is refused the connection.
    expect(fetch(`${server.url}/healthz`)).rejects.toThrow()
  })

  test('--hsts sets the max-age, and off sends none; plain HTTP sends none', async () => {
    const { server: day } = await start(ca.leaf('day'), { hstsMs: 86_400_000 })
    expect((await fetch(`${day.url}/healthz`, trusted())).headers.get('strict-transport-security')).toBe(
      'max-age=86400',
    )
    const { server: off } = await start(ca.leaf('off'), { hstsMs: 0 })
    expect((await fetch(`${off.url}/healthz`, trusted())).headers.has('strict-transport-security')).toBe(false)
    const plain = await startServer({})
    running.push(plain)
    expect(plain.url.startsWith('http://')).toBe(true)
    expect((await fetch(`${plain.url}/healthz`)).headers.has('strict-transport-security')).toBe(false)
  })

  test('speaks TLS 1.3, and 1.2 with AEAD suites alone: TLS 1.1 and CBC suites are refused', async () => {
    const { server } = await start(ca.leaf('versions'))
    // openssl's own client, which still offers TLS 1.0 and 1.1 when told to; run aside, as the server is this process.
    const handshake = async (args: string[]) => {
      const connect = ['s_client', '-connect', `127.0.0.1:${server.port}`, '-servername', 'localhost', ...args]
      const child = Bun.spawn(['openssl', ...connect], { stdin: new Uint8Array(), stdout: 'pipe', stderr: 'pipe' })
      const [stdout, stderr] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text()])
      const output = `${stdout}${stderr}`
      if (/alert protocol version/.test(output)) return 'protocol version refused'
      if (/alert handshake failure/.test(output)) return 'no common cipher'
      return /New, (\S+), Cipher is (\S+)/.exec(output)?.slice(1).join(' ') ?? output
    }
    expect(await handshake(['-tls1_3'])).toStartWith('TLSv1.3 TLS_')
    expect(await handshake(['-tls1_2'])).toMatch(/^TLSv1\.2 ECDHE-ECDSA-(AES\d+-GCM|CHACHA20)/)
    expect(await handshake(['-tls1_2', '-cipher', 'ECDHE-ECDSA-AES128-SHA'])).toBe('no common cipher')
    expect(await handshake(['-tls1_1', '-cipher', 'DEFAULT@SECLEVEL=0'])).toBe('protocol version refused')
    expect(await handshake(['-tls1', '-cipher', 'DEFAULT@SECLEVEL=0'])).toBe('protocol version refused')
  })

  test('a new pair is served on new connections; what the old listener has under way is answered', async () => {
    const first = ca.leaf('first')
    const { server, at } = await start(first, { metrics: '0', delay: 0 })
    const kept = await keepConnection(server.url, ca.pem)
    expect(kept.serial).toBe(first.serial)
    expect(await kept.get('/healthz')).toStartWith('HTTP/1.1 200')
    const events = sse(await fetch(`${server.url}/api/v1/events`, trusted()))
    expect((await events.nextEvent()).event).toBe('ready')

    const second = ca.leaf('second')
    renew(at, second)
    const reloading = server.reloadCertificates()
    // While the old listener closes, a request on its keep-alive connection is answered, and told to move on.
    await Bun.sleep(50)
    const moving = await kept.get('/healthz')
    expect(moving).toStartWith('HTTP/1.1 200')
    expect(moving.toLowerCase()).toContain('connection: close')
    expect(await reloading).toBe(true)
    expect(await servedSerial(server.url, ca.pem)).toBe(second.serial)
    // The event stream opened on the old certificate goes on: a write made now reaches it.
    const created = await fetch(`${server.url}/api/v1/artists`, {
      ...trusted(),
      method: 'POST',
      headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Across the swap' }),
    })
    expect(created.status).toBe(201)
    const event = await events.nextEvent()
    expect(event.data).toContain('Across the swap')
    await events.close()
    // Nothing new: the same files again.
    expect(await server.reloadCertificates()).toBe(false)
    const metrics = await (await fetch(server.metricsUrl as string)).text()
    expect(metrics).toContain('rock_legends_tls_certificate_reloads_total 1')
    expect(metrics).toContain('rock_legends_tls_certificate_reload_failures_total 0')
    expect(metrics).toMatch(/rock_legends_tls_certificate_expiry_timestamp_seconds \d+/)
  })

  test('a keep-alive connection idle across a swap is kept until its next answer, which says to move on', async () => {
    const first = ca.leaf('idle-first')
    const { server, at } = await start(first)
    const idle = await keepConnection(server.url, ca.pem)
    expect(await idle.get('/healthz')).toStartWith('HTTP/1.1 200')
    const closed = idle.closed.then(() => 'closed')
    const second = ca.leaf('idle-second')
    renew(at, second)
    expect(await server.reloadCertificates()).toBe(true)
    // Every new connection goes to the new listener at once: the old one accepts nothing.
    for (let i = 0; i < 8; i++) expect(await servedSerial(server.url, ca.pem)).toBe(second.serial)
    expect(await Promise.race([closed, Bun.sleep(500).then(() => 'open')])).toBe('open')
    const moving = await idle.get('/healthz')
    expect(moving).toStartWith('HTTP/1.1 200')
    expect(moving.toLowerCase()).toContain('connection: close')
    expect(await closed).toBe('closed')
  })

  test('old listeners kept for their connections are bounded, and a stop closes them at once', async () => {
    const { server, at } = await start(ca.leaf('bounded-0'))
    const idle: Awaited<ReturnType<typeof keepConnection>>[] = []
    for (let swap = 1; swap <= MAX_LINGERING + 2; swap++) {
      idle.push(await keepConnection(server.url, ca.pem))
      renew(at, ca.leaf(`bounded-${swap}`))
      expect(await server.reloadCertificates()).toBe(true)
    }
    const states = () =>
      Promise.all(
        idle.map((connection) =>
          Promise.race([connection.closed.then(() => 'closed'), Bun.sleep(300).then(() => 'open')]),
        ),
      )
    // The oldest listeners beyond the bound were stopped, closing their idle connections; the newest kept theirs.
    expect(await states()).toEqual([...Array(2).fill('closed'), ...Array(MAX_LINGERING).fill('open')])
    const started = performance.now()
    await server.stop()
    expect(performance.now() - started).toBeLessThan(2000)
    expect(await states()).toEqual(Array(MAX_LINGERING + 2).fill('closed'))
  })

  test('a request in flight across the swap is answered on its connection', async () => {
    const { server, at } = await start(ca.leaf('slow'), { delay: 600 })
    const slow = fetch(`${server.url}/api/v1/artists`, trusted())
    await Bun.sleep(100)
    renew(at, ca.leaf('after-slow'))
    expect(await server.reloadCertificates()).toBe(true)
    expect((await slow).status).toBe(200)
  })

  test('files that change are read again once they settle', async () => {
    const { server, at } = await start(ca.leaf('watched'))
    const next = ca.leaf('watched-next')
    renew(at, next)
    const deadline = Date.now() + 5000
    let serial = ''
    while (Date.now() < deadline && serial !== next.serial) {
      await Bun.sleep(100)
      // A connection that arrives just as the old listening socket closes may be reset (net.ipv4.tcp_migrate_req 0).
      serial = await servedSerial(server.url, ca.pem).catch(() => serial)
    }
    expect(serial).toBe(next.serial)
  })

  test('a reload that finds a pair it cannot serve keeps the old one, and counts it', async () => {
    const kept = ca.leaf('kept')
    const { server, at } = await start(kept, { metrics: '0' })
    const other = ca.leaf('other')
    // A certificate with another certificate's key: as when a renewal has written one file and not yet the other.
    copyFileSync(other.key, at.key)
    expect(await server.reloadCertificates()).toBe(false)
    copyFileSync(kept.key, at.key)
    chmodSync(at.key, 0o644)
    expect(await server.reloadCertificates()).toBe(false)
    expect(await servedSerial(server.url, ca.pem)).toBe(kept.serial)
    const metrics = await (await fetch(server.metricsUrl as string)).text()
    expect(metrics).toContain('rock_legends_tls_certificate_reload_failures_total 2')
    expect(metrics).toContain('rock_legends_tls_certificate_reloads_total 0')
  })

  test('a certificate that cannot be served stops the start, saying why and how to fix it', async () => {
    const good = placed(ca.leaf('good'))
    const other = placed(ca.leaf('mismatch'))
    const expired = placed(ca.leaf('expired', { days: 0 }))
    const open = placed(ca.leaf('open'))
    chmodSync(open.key, 0o644)
    const cases: [StartOptions, RegExp][] = [
      [
        { tlsCert: join(dir, 'missing.pem'), tlsKey: good.key },
        /cannot read the TLS certificate .*missing\.pem: no such file/,
      ],
      [{ tlsCert: good.cert, tlsKey: other.key }, /is not the key of the certificate in/],
      [{ tlsCert: expired.cert, tlsKey: expired.key }, /expired on \d{4}-/],
      [{ tlsCert: open.cert, tlsKey: open.key }, /can be read or changed by other users \(mode 644\).*chmod 600/],
      [{ tlsCert: good.key, tlsKey: good.key }, /holds no PEM certificate/],
      [{ tlsCert: good.cert }, /--tls-cert and --tls-key go together/],
    ]
    for (const [options, message] of cases) expect(startServer(options)).rejects.toThrow(message)
  })
})
