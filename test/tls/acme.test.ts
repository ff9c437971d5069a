import { afterEach, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { connect, type TLSSocket } from 'node:tls'
import type { Server } from 'bun'
import { type AcmeOptions, type AcmeOutcome, obtainCertificates } from '../../src/tls/acme.ts'
import { AcmeError } from '../../src/tls/acme-order.ts'
import { fileCertificateStore } from '../../src/tls/certificate-store.ts'
import type { CertificateSource } from '../../src/tls/certificates.ts'
import { HttpChallenges } from '../../src/tls/http-challenges.ts'
import { freePort, removeDir, tempDir } from '../support/binary.ts'
import { type PebbleOptions, skipPebble, startPebble } from '../support/pebble.ts'

// Certificates obtained from Pebble, Let's Encrypt's test CA, which validates each HTTP-01 challenge by asking this
// process's challenge server under a name its DNS resolves to 127.0.0.1: the path a real CA takes, on loopback.

// An order takes Pebble and this process a few hundred milliseconds, more on a machine busy with the other tests;
// the renewals wait for certificates of a few seconds to reach two thirds of their lifetime.
setDefaultTimeout(45_000)

const cleanups: (() => unknown)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

/** A Pebble, the challenge server it validates against, a directory for ACME's files, and what ACME logged. */
async function setUp(pebbleOptions: Omit<PebbleOptions, 'httpPort'> = {}) {
  const challenges = new HttpChallenges()
  const httpPort = freePort()
  const challengeServer = Bun.serve({
    hostname: '127.0.0.1',
    port: httpPort,
    fetch: (request) => challenges.answer(request) ?? new Response('not a challenge', { status: 404 }),
  })
  cleanups.push(() => challengeServer.stop(true))
  const pebble = await startPebble({ httpPort, ...pebbleOptions })
  cleanups.push(() => pebble.close())
  const dir = tempDir('rock-legends-acme-')
  cleanups.push(() => removeDir(dir))
  const lines: { level: string; message: string; error?: unknown }[] = []
  const outcomes: AcmeOutcome[] = []
  const domain = `shop-${Math.random().toString(36).slice(2, 8)}.rock-legends.test`
  const options = (more: Partial<AcmeOptions> = {}): AcmeOptions => ({
    domains: [domain],
    directoryUrl: pebble.directoryUrl,
    email: 'ops@rock-legends.test',
    dir,
    challenges,
    caRoots: pebble.listenerRoot,
    log: {
      info: (message) => lines.push({ level: 'info', message }),
      warn: (message) => lines.push({ level: 'warn', message }),
      error: (message, error) => lines.push({ level: 'error', message, error }),
    },
    count: (outcome) => outcomes.push(outcome),
    ...more,
  })
  const obtain = async (more: Partial<AcmeOptions> = {}) => {
    const source = await obtainCertificates(options(more))
    cleanups.push(() => source.close())
    return source
  }
  return { pebble, dir, domain, lines, outcomes, obtain }
}

/**
 * Serves `source` over HTTPS as the server would in Bun 1.4.5, whose `server.reload()` ignores `tls`: a changed
 * certificate gets a second listener on the same port (`reusePort`), then the first stops, finishing what it has in
 * flight. `/slow` answers only once `release` is called.
 */
function serveHttps(source: CertificateSource) {
  let release = () => {}
  const released = new Promise<void>((resolve) => {
    release = resolve
  })
  const listen = (port: number) =>
    Bun.serve({
      hostname: '127.0.0.1',
      port,
      reusePort: true,
      // `/slow` waits for a renewal, which a loaded machine can take longer than Bun's default 10 s to order.
      idleTimeout: 120,
      tls: source.current(),
      fetch: async (request) => {
        if (new URL(request.url).pathname === '/slow') await released
        return new Response(`hello from ${new URL(request.url).pathname}`)
      },
    })
  let server: Server<undefined> = listen(0)
  const port = server.port as number
  let swaps = 0
  source.onChange(() => {
    const old = server
    server = listen(port)
    swaps++
    void old.stop()
  })
  cleanups.push(() => server.stop(true))
  return { port, release, swaps: () => swaps }
}

/** A TLS connection to 127.0.0.1:`port` as `domain`, verified against `ca`; rejects if verification fails. */
function connectTls(port: number, domain: string, ca: string): Promise<TLSSocket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, servername: domain, ca }, () => resolve(socket))
    socket.once('error', reject)
    cleanups.push(() => socket.destroy())
  })
}

/** Sends one keep-alive GET on `socket` and reads its whole answer (a `Content-Length` body). */
function get(socket: TLSSocket, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = ''
    const onData = (chunk: Buffer) => {
      text += chunk.toString()
      const [head, body = ''] = text.split('\r\n\r\n')
      const length = Number(/content-length: (\d+)/i.exec(head ?? '')?.[1] ?? Number.NaN)
      if (body.length >= length) {
        socket.off('data', onData)
        resolve(text)
      }
    }
    socket.on('data', onData)
    socket.once('close', () => reject(new Error(`closed before answering ${path}: ${JSON.stringify(text)}`)))
    socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n`)
  })
}

const serialOf = (socket: TLSSocket) => socket.getPeerCertificate().serialNumber

/** Waits for `condition`, up to `ms`. */
async function eventually(condition: () => boolean, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await Bun.sleep(50)
  }
}

describe.skipIf(skipPebble)('certificates over ACME, from Pebble', () => {
  test('obtains one, serves it over HTTPS, and a restart reuses it with no new order', async () => {
    const { pebble, dir, domain, lines, outcomes, obtain } = await setUp()
    const first = await obtain()
    expect(pebble.orders()).toBe(1)
    expect(outcomes).toEqual(['obtained'])
    expect(lines.map((line) => line.message)).toEqual(['ACME certificate obtained'])

    const { port } = serveHttps(first)
    const root = await pebble.issuingRoot()
    const answer = await fetch(`https://127.0.0.1:${port}/artists`, { tls: { ca: root, serverName: domain } })
    expect(await answer.text()).toBe('hello from /artists')
    // Verified for real: the same request without Pebble's root is refused.
    await expect(fetch(`https://127.0.0.1:${port}/`, { tls: { serverName: domain } })).rejects.toThrow()

    // Kept to the owner: the directory 0700, its files 0600.
    const [caDir] = readdirSync(dir)
    expect(statSync(join(dir, caDir as string)).mode & 0o777).toBe(0o700)
    const files = readdirSync(join(dir, caDir as string)).sort()
    expect(files).toEqual(['account.key.pem', `${domain}.pem`])
    for (const file of files) expect(statSync(join(dir, caDir as string, file)).mode & 0o777).toBe(0o600)

    first.close()
    const again = await obtain()
    expect(pebble.orders()).toBe(1)
    expect(again.current()).toEqual(first.current())
    expect(lines.at(-1)?.message).toBe('ACME certificate reused')
    // Two thirds of Pebble's five years away, and no sooner.
    const lifetime = again.expiresAt().getTime() - Date.now()
    expect(again.renewsAt().getTime() - Date.now()).toBeGreaterThan(lifetime * 0.6)
  })

  test('a stored certificate that no longer covers the domains, or is damaged, is ordered again', async () => {
    const { pebble, dir, domain, obtain } = await setUp()
    ;(await obtain()).close()
    const both = await obtain({ domains: [domain, `www.${domain}`] })
    expect(pebble.orders()).toBe(2)
    both.close()
    const [caDir] = readdirSync(dir)
    writeFileSync(join(dir, caDir as string, `${domain}.pem`), 'half a file')
    const again = await obtain()
    expect(pebble.orders()).toBe(3)
    expect(readFileSync(join(dir, caDir as string, `${domain}.pem`), 'utf8')).toBe(
      `${again.current().key}${again.current().cert}`,
    )
  })

  test('instances sharing a store at once make one order: the others wait, then read it', async () => {
    const { pebble, dir, obtain, outcomes } = await setUp()
    const store = fileCertificateStore(join(dir, 'shared'))
    const sources = await Promise.all([obtain({ store }), obtain({ store }), obtain({ store })])
    expect(pebble.orders()).toBe(1)
    expect(outcomes).toEqual(['obtained'])
    for (const source of sources) expect(source.current()).toEqual((sources[0] as CertificateSource).current())
  })

  test('a domain the CA refuses is named, with the CA problem', async () => {
    const { pebble, domain, obtain, outcomes } = await setUp({ blocklist: ['blocked.rock-legends.test'] })
    const refused = obtain({ domains: [domain, 'blocked.rock-legends.test'] })
    await expect(refused).rejects.toBeInstanceOf(AcmeError)
    const error = (await refused.catch((caught) => caught)) as AcmeError
    expect(error.message).toContain(
      `the ACME CA ${pebble.directoryUrl} refused a certificate for blocked.rock-legends.test`,
    )
    expect(error.message).not.toContain(domain)
    expect(error.message).toContain('(rejectedIdentifier)')
    expect(error.transient).toBe(false)
    expect(outcomes).toEqual([])
  })

  test('renews at two thirds of the lifetime, and the swap finishes a request in flight', async () => {
    const { pebble, domain, obtain, outcomes } = await setUp({ validitySeconds: 15 })
    const source = await obtain()
    const { port, release, swaps } = serveHttps(source)
    const root = await pebble.issuingRoot()
    const before = await connectTls(port, domain, root)
    expect(await get(before, '/first')).toContain('hello from /first')
    const oldSerial = serialOf(before)

    // Asked before the renewal, answered after the new listener took the port.
    const inFlight = get(before, '/slow')
    let changes = 0
    source.onChange(() => changes++)
    await eventually(() => changes === 1, 20_000, 'the renewal')
    expect(outcomes).toEqual(['obtained', 'renewed'])
    expect(swaps()).toBe(1)
    release()
    expect(await inFlight).toContain('hello from /slow')

    const after = await connectTls(port, domain, root)
    expect(serialOf(after)).not.toBe(oldSerial)
    expect(await get(after, '/next')).toContain('hello from /next')
    expect(pebble.orders()).toBe(2)
  })

  test('the CA away at renewal: logged, counted, the old certificate served, then renewed on a retry', async () => {
    // Renewed early in a longer lifetime, so that the old certificate is still valid for the checks that follow.
    const { pebble, domain, lines, obtain, outcomes } = await setUp({ validitySeconds: 30 })
    const source = await obtain({ renewAt: 0.3, retryFirstMs: 1000, retryMaxMs: 1000 })
    const { port } = serveHttps(source)
    const oldRoot = await pebble.issuingRoot()
    await pebble.stop()
    await eventually(() => outcomes.includes('failed'), 20_000, 'a failed renewal')

    const failure = lines.find((line) => line.level === 'error')
    expect(failure?.message).toMatch(
      /^ACME renewal failed \(1 in a row\); the current certificate, valid until .* is still served; next try in 1 s$/,
    )
    expect(String(failure?.error)).toContain(
      `could not order a certificate for ${domain} from the ACME CA ${pebble.directoryUrl}: ECONNREFUSED`,
    )
    const still = await connectTls(port, domain, oldRoot)
    expect(await get(still, '/')).toContain('hello from /')

    await pebble.start()
    let changes = 0
    source.onChange(() => changes++)
    await eventually(() => changes === 1, 15_000, 'a renewal once the CA is back')
    expect(outcomes.at(-1)).toBe('renewed')
    const renewed = await connectTls(port, domain, await pebble.issuingRoot())
    expect(await get(renewed, '/')).toContain('hello from /')
  })
})
