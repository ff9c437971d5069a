import { afterEach, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { statSync } from 'node:fs'
import { join } from 'node:path'
import { connect } from 'node:tls'
import { type RunningServer, type StartOptions, startServer } from '../../src/server.ts'
import { freePort, removeDir, tempDir } from '../support/binary.ts'
import { type Pebble, skipPebble, startPebble } from '../support/pebble.ts'

// `startServer` with `httpsDomains`: the plain-HTTP port answers Pebble's HTTP-01 challenges and redirects the rest,
// the certificate Pebble issues is served on the HTTPS port, and a renewal moves new connections to the new one.

setDefaultTimeout(60_000)

const cleanups: (() => unknown)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

async function setUp(validitySeconds?: number) {
  const httpPort = freePort()
  const pebble = await startPebble({ httpPort, validitySeconds })
  cleanups.push(() => pebble.close())
  const dir = tempDir('rock-legends-acme-https-')
  cleanups.push(() => removeDir(dir))
  const domain = `api-${Math.random().toString(36).slice(2, 8)}.rock-legends.test`
  const start = async (more: StartOptions = {}) => {
    const server = await startServer({
      httpsDomains: [domain],
      acmeDirectory: pebble.directoryUrl,
      acmeCaRoots: pebble.listenerRoot,
      acmeDir: join(dir, 'acme'),
      httpPort,
      seed: true,
      metrics: '127.0.0.1:0',
      log: process.env.DEBUG_ACME ? 'pretty' : 'off',
      ...more,
    })
    cleanups.push(() => server.stop())
    return server
  }
  return { pebble, dir, domain, httpPort, start }
}

const get = async (server: RunningServer, pebble: Pebble, domain: string, path: string, init: RequestInit = {}) =>
  fetch(`https://127.0.0.1:${server.port}${path}`, {
    ...init,
    tls: { ca: await pebble.issuingRoot(), serverName: domain },
  })

/** The serial number of the certificate a new connection to `port` is served. */
const serialAt = (port: number, domain: string) =>
  new Promise<string>((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, servername: domain, rejectUnauthorized: false }, () => {
      resolve(socket.getPeerCertificate().serialNumber)
      socket.destroy()
    })
    socket.once('error', reject)
  })

const metricsOf = async (server: RunningServer) => (await fetch(server.metricsUrl as string)).text()

describe.skipIf(skipPebble)('--https, over Pebble', () => {
  test('obtains a certificate, serves the API over HTTPS, redirects plain HTTP, and reuses it after a restart', async () => {
    const { pebble, dir, domain, httpPort, start } = await setUp()
    const server = await start()
    expect(server.url).toStartWith('https://')
    expect(pebble.orders()).toBe(1)

    const artist = await get(server, pebble, domain, '/api/v1/artists/1')
    expect(artist.status).toBe(200)
    expect(artist.headers.get('strict-transport-security')).toBe('max-age=31536000')
    const openapi = (await (await get(server, pebble, domain, '/openapi.json')).json()) as {
      servers: { url: string }[]
    }
    expect(openapi.servers[0]?.url).toBe(`https://127.0.0.1:${server.port}`)
    // Verified for real: without Pebble's root the certificate is refused.
    await expect(fetch(`https://127.0.0.1:${server.port}/healthz`, { tls: { serverName: domain } })).rejects.toThrow()

    // The plain-HTTP port: 308 to the same path over HTTPS, for a POST too (method and body are kept), on the
    // certificate's domain: a host the visitor names (here 127.0.0.1) is never redirected to.
    for (const method of ['GET', 'POST']) {
      const redirected = await fetch(`http://127.0.0.1:${httpPort}/api/v1/artists?q=soda`, {
        method,
        redirect: 'manual',
      })
      expect(redirected.status).toBe(308)
      expect(redirected.headers.get('location')).toBe(`https://${domain}:${server.port}/api/v1/artists?q=soda`)
    }
    // A challenge it is not waiting for is not found, rather than redirected.
    expect((await fetch(`http://127.0.0.1:${httpPort}/.well-known/acme-challenge/nope`)).status).toBe(404)

    const metrics = await metricsOf(server)
    expect(metrics).toContain('rock_legends_acme_orders_total{outcome="obtained"} 1')
    expect(metrics).toContain('rock_legends_acme_orders_total{outcome="failed"} 0')
    expect(metrics).toMatch(/rock_legends_tls_certificate_expiry_timestamp_seconds \d+/)
    // The account key and certificates in a directory of their own, only for the owner.
    expect(statSync(join(dir, 'acme')).mode & 0o777).toBe(0o700)

    const serial = await serialAt(server.port, domain)
    await server.stop()
    const again = await start()
    expect(pebble.orders()).toBe(1)
    expect(await serialAt(again.port, domain)).toBe(serial)
    expect((await get(again, pebble, domain, '/healthz')).status).toBe(200)
    expect(await metricsOf(again)).toContain('rock_legends_acme_orders_total{outcome="obtained"} 0')
  })

  test('a renewal is served on new connections, with no failed request', async () => {
    // Pebble's certificates last 15 s: renewed at two thirds, after 10.
    const { pebble, domain, start } = await setUp(15)
    const server = await start()
    const first = await serialAt(server.port, domain)
    let failed = 0
    let renewed = false
    while (!renewed) {
      const answer = await get(server, pebble, domain, '/api/v1/artists/1').catch(() => undefined)
      if (answer?.status !== 200) failed++
      // A new connection that arrives just as the old listening socket closes may be reset (tcp_migrate_req 0).
      renewed = (await serialAt(server.port, domain).catch(() => first)) !== first
      await Bun.sleep(200)
    }
    expect(failed).toBe(0)
    expect(pebble.orders()).toBe(2)
    const metrics = await metricsOf(server)
    expect(metrics).toContain('rock_legends_acme_orders_total{outcome="renewed"} 1')
    expect(metrics).toContain('rock_legends_tls_certificate_reloads_total 1')
  })
})
