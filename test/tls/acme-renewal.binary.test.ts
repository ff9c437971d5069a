import { afterEach, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { connect, type TLSSocket } from 'node:tls'
import { ensureBinary, freePort, type RunningBinary, removeDir, startBinary, tempDir } from '../support/binary.ts'
import { type Pebble, skipPebble, startPebble } from '../support/pebble.ts'

// The executable with `--https` renews its certificate by itself, Pebble issuing certificates that last seconds: a
// client idle on a keep-alive connection and a client asking in a loop see no failed request across the renewal, and
// a renewal that finds the CA away is logged and counted while the valid certificate is served, then made once the CA
// is back.

setDefaultTimeout(90_000)
beforeAll(() => ensureBinary(), 120_000)

const cleanups: (() => unknown)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

async function setUp(validitySeconds: number) {
  const httpPort = freePort()
  const pebble: Pebble = await startPebble({ httpPort, validitySeconds })
  cleanups.push(() => pebble.close())
  const dir = tempDir('rock-legends-acme-renewal-')
  cleanups.push(() => removeDir(dir))
  const roots = join(dir, 'pebble-listener.pem')
  writeFileSync(roots, pebble.listenerRoot)
  const domain = `renew-${Math.random().toString(36).slice(2, 8)}.rock-legends.test`
  const metricsPort = freePort()
  const server: RunningBinary = await startBinary(
    [
      '--https',
      domain,
      '--acme-directory',
      pebble.directoryUrl,
      '--http-port',
      String(httpPort),
      '--port',
      String(freePort()),
      '--data',
      join(dir, 'db.json'),
      '--seed',
      '--allow-new-data',
      '--metrics',
      `127.0.0.1:${metricsPort}`,
      '--log',
      'json',
    ],
    { env: { NODE_EXTRA_CA_CERTS: roots } },
  )
  cleanups.push(() => server.stop('SIGKILL'))
  const port = Number(new URL(server.url).port)
  const metrics = async () => (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text()
  /** The certificates served since the start: the first is 0, a renewal served makes it 1. */
  const reloads = async () =>
    Number(/^rock_legends_tls_certificate_reloads_total (\d+)/m.exec(await metrics())?.[1] ?? Number.NaN)
  return { pebble, domain, server, port, metrics, reloads }
}

/** The serial number and expiry of the certificate a new connection to `port` is served (not verified). */
const servedAt = (port: number, domain: string) =>
  new Promise<{ serial: string; notAfter: Date }>((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, servername: domain, rejectUnauthorized: false }, () => {
      const certificate = socket.getPeerCertificate()
      resolve({ serial: certificate.serialNumber, notAfter: new Date(certificate.valid_to) })
      socket.destroy()
    })
    socket.once('error', reject)
  })

/**
 * A client that keeps one keep-alive connection and asks on it now and then, idle in between, as a browser or an SDK
 * does: it opens another connection only when an answer says `Connection: close`. A connection the server closes
 * without saying so, or a request without its answer, is counted as a failure: a real client could have sent its next
 * request on that connection just as it closed.
 */
function keepAliveClient(port: number, domain: string, pauseMs: number) {
  let running = true
  const seen = { answered: 0, connections: 0, failures: [] as string[] }
  const open = () =>
    new Promise<TLSSocket>((resolve, reject) => {
      const socket = connect({ host: '127.0.0.1', port, servername: domain, rejectUnauthorized: false }, () =>
        resolve(socket),
      )
      socket.once('error', reject)
    })
  const loop = async () => {
    while (running) {
      let socket: TLSSocket
      try {
        socket = await open()
      } catch (error) {
        seen.failures.push(`connect: ${error}`)
        await Bun.sleep(pauseMs)
        continue
      }
      seen.connections++
      let buffer = ''
      let told = false
      let closed = false
      let wake: (() => void) | undefined
      /** Waits `ms`, or less if data comes or the connection closes. */
      const pause = (ms: number) =>
        new Promise<void>((resolve) => {
          wake = resolve
          setTimeout(resolve, ms)
        })
      socket.on('data', (chunk: Buffer) => {
        buffer += chunk.toString('latin1')
        wake?.()
      })
      socket.on('error', () => undefined)
      socket.on('close', () => {
        closed = true
        wake?.()
      })
      while (running && !told && !closed) {
        socket.write(`GET /api/v1/artists/1 HTTP/1.1\r\nHost: ${domain}\r\n\r\n`)
        const deadline = Date.now() + 5000
        let answer: string | undefined
        while (answer === undefined && !closed && Date.now() < deadline) {
          const end = buffer.indexOf('\r\n\r\n')
          const length = end < 0 ? -1 : Number(/\r\ncontent-length: *(\d+)/i.exec(buffer.slice(0, end))?.[1] ?? 0)
          if (end >= 0 && buffer.length >= end + 4 + length) {
            answer = buffer.slice(0, end + 4 + length)
            buffer = buffer.slice(end + 4 + length)
          } else await pause(100)
        }
        if (answer === undefined) {
          seen.failures.push(closed ? 'the connection closed before an answer' : 'no answer in 5 s')
          break
        }
        if (!answer.startsWith('HTTP/1.1 200')) seen.failures.push(answer.split('\r\n')[0] as string)
        seen.answered++
        told = /\r\nconnection: *close/i.test(answer)
        if (!told) await pause(pauseMs)
      }
      if (running && closed && !told) seen.failures.push('the connection was closed while idle, without a word')
      socket.destroy()
    }
  }
  const done = loop()
  return {
    seen,
    async stop() {
      running = false
      await done
      return seen
    },
  }
}

describe.skipIf(skipPebble)('the executable renews its ACME certificate by itself', () => {
  test('without a failed request, on one idle keep-alive connection or on many', async () => {
    // Certificates of 15 s: renewed at two thirds, after 10.
    const { pebble, domain, server, port, metrics, reloads } = await setUp(15)
    const first = await servedAt(port, domain)
    const idle = keepAliveClient(port, domain, 1000)
    let loopFailures = 0
    let loopAnswers = 0
    const root = await pebble.issuingRoot()
    // The renewal is watched in the metrics: a new connection opened just as the listening socket is replaced may be
    // reset where net.ipv4.tcp_migrate_req is 0 (the default), and these clients keep theirs.
    while ((await reloads()) === 0) {
      const answer = await fetch(`https://127.0.0.1:${port}/api/v1/artists/1`, {
        tls: { ca: root, serverName: domain },
      }).catch(() => undefined)
      if (answer?.status === 200) loopAnswers++
      else loopFailures++
      await Bun.sleep(50)
    }
    // The idle client asks a few more times on the new certificate.
    await Bun.sleep(3000)
    const seen = await idle.stop()
    expect(loopFailures).toBe(0)
    expect(loopAnswers).toBeGreaterThan(20)
    expect(seen.failures).toEqual([])
    expect(seen.answered).toBeGreaterThan(5)
    // Its one connection until the renewal, then one on the new certificate: told to move on, never cut.
    expect(seen.connections).toBe(2)
    const renewedAt = await servedAt(port, domain)
    expect(renewedAt.serial).not.toBe(first.serial)
    expect(renewedAt.notAfter.getTime()).toBeGreaterThan(first.notAfter.getTime())
    expect(pebble.orders()).toBe(2)
    const scraped = await metrics()
    expect(scraped).toContain('rock_legends_acme_orders_total{outcome="renewed"} 1')
    expect(scraped).toContain('rock_legends_tls_certificate_reloads_total 1')
    expect(await server.stop()).toBe(0)
    expect(await server.stderr()).toContain('"message":"ACME certificate renewed"')
  })

  test('the CA away at renewal: logged, counted, the valid certificate served, renewed once the CA is back', async () => {
    // Certificates of 30 s: renewed after 20, and tried again at least every quarter of what is left.
    const { pebble, domain, server, port, metrics, reloads } = await setUp(30)
    const first = await servedAt(port, domain)
    await pebble.stop()
    const failedCount = async () =>
      Number(/rock_legends_acme_orders_total\{outcome="failed"\} (\d+)/.exec(await metrics())?.[1] ?? 0)
    while ((await failedCount()) === 0) {
      expect(Date.now()).toBeLessThan(first.notAfter.getTime())
      await Bun.sleep(250)
    }
    // The renewal failed; the certificate, still valid, is served, and HTTPS answers.
    const during = await servedAt(port, domain)
    expect(during.serial).toBe(first.serial)
    expect(during.notAfter.getTime()).toBeGreaterThan(Date.now())
    expect(
      (await fetch(`https://127.0.0.1:${port}/healthz`, { tls: { rejectUnauthorized: false, serverName: domain } }))
        .status,
    ).toBe(200)

    await pebble.start()
    while ((await reloads()) === 0) await Bun.sleep(250)
    expect((await servedAt(port, domain)).serial).not.toBe(first.serial)
    // Renewed before the first certificate expired, from a CA that only now came back.
    expect(Date.now()).toBeLessThan(first.notAfter.getTime())
    const root = await pebble.issuingRoot()
    expect((await fetch(`https://127.0.0.1:${port}/healthz`, { tls: { ca: root, serverName: domain } })).status).toBe(
      200,
    )
    const scraped = await metrics()
    expect(scraped).toContain('rock_legends_acme_orders_total{outcome="renewed"} 1')
    expect(await server.stop()).toBe(0)
    const log = await server.stderr()
    expect(log).toContain('ACME renewal failed (1 in a row); the current certificate')
    expect(log).toContain('"message":"ACME certificate renewed"')
  })
})
