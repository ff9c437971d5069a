import { afterAll, afterEach, beforeAll, describe, expect, test } from 'bun:test'
import { chmodSync, copyFileSync } from 'node:fs'
import { join } from 'node:path'
import { sse } from '../events/sse.ts'
import {
  AS_NOBODY,
  canDropPrivileges,
  ensureBinary,
  type RunningBinary,
  removeDir,
  runBinary,
  startBinary,
  tempDir,
} from '../support/binary.ts'
import {
  keepConnection,
  makeCa,
  opensslMissing,
  placeLeaf,
  servedSerial,
  type TestLeaf,
} from '../support/certificates.ts'

// HTTPS from certificate files, as an operator runs the executable: flags and variables, SIGHUP and renewals on
// disk, the healthcheck command, and the refusals at start.
const KEY = 'tls-binary-key'

const dir = tempDir('rock-legends-tls-binary-')
// Readable by anyone, as /etc is: one test runs the executable as nobody.
chmodSync(dir, 0o755)
afterAll(() => removeDir(dir))
const ca = makeCa(dir)
const trusted = () => ({ tls: { ca: ca.pem } })

let running: RunningBinary[] = []
beforeAll(() => ensureBinary(), 120_000)
afterEach(async () => {
  await Promise.all(running.map((server) => server.stop('SIGKILL')))
  running = []
})

const placed = (leaf: TestLeaf) => placeLeaf(dir, leaf)

async function start(at: { cert: string; key: string }, args: string[] = []) {
  const server = await startBinary([
    '--port',
    '0',
    '--data',
    ':memory:',
    '--api-key',
    KEY,
    '--tls-cert',
    at.cert,
    '--tls-key',
    at.key,
    ...args,
  ])
  running.push(server)
  return server
}

/** Resolves once a new connection to `url` is served the certificate `serial`, or rejects after `ms`. */
async function servedSoon(url: string, serial: string, ms = 5000) {
  const deadline = Date.now() + ms
  let served = ''
  while (Date.now() < deadline) {
    // A connection that arrives just as the old listening socket closes may be reset (net.ipv4.tcp_migrate_req 0).
    served = await servedSerial(url, ca.pem).catch(() => served)
    if (served === serial) return
    await Bun.sleep(100)
  }
  throw new Error(`still served ${served} after ${ms} ms, not ${serial}`)
}

const createArtist = (url: string, name: string) =>
  fetch(`${url}/api/v1/artists`, {
    ...trusted(),
    method: 'POST',
    headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
    body: JSON.stringify({ name }),
  })

describe.skipIf(opensslMissing)('HTTPS from certificate files (compiled executable)', () => {
  test('serves HTTPS from the variables too, says https:// and answers the healthcheck command', async () => {
    const at = placed(ca.leaf('binary-hello'))
    const server = await startBinary(['--port', '0', '--data', ':memory:', '--log', 'off'], {
      env: { ROCK_LEGENDS_TLS_CERT: at.cert, ROCK_LEGENDS_TLS_KEY: at.key },
    })
    running.push(server)
    expect(server.url).toStartWith('https://127.0.0.1:')
    const health = await fetch(`${server.url}/healthz`, trusted())
    expect(health.status).toBe(200)
    expect(health.headers.get('strict-transport-security')).toBe('max-age=31536000')
    const byUrl = await runBinary(['healthcheck', '--url', server.url])
    expect(byUrl).toMatchObject({ code: 0, stderr: '' })
    expect(byUrl.stdout).toContain(`healthy: ${server.url}/healthz`)
    // As a container's HEALTHCHECK runs it: from the server's own environment, https:// because of the certificate.
    const port = new URL(server.url).port
    const byEnv = await runBinary(['healthcheck'], { env: { PORT: port, ROCK_LEGENDS_TLS_CERT: at.cert } })
    expect(byEnv).toMatchObject({ code: 0, stderr: '' })
    // Plain HTTP to the HTTPS port is no health.
    const plain = await runBinary(['healthcheck', '--url', `http://127.0.0.1:${port}`])
    expect(plain.code).toBe(1)
  })

  test('SIGHUP serves the renewed pair on new connections; an event stream opened before goes on', async () => {
    const first = ca.leaf('hup-first')
    const at = placed(first)
    const server = await start(at, ['--log', 'json'])
    const events = sse(await fetch(`${server.url}/api/v1/events`, trusted()))
    expect((await events.nextEvent()).event).toBe('ready')
    const kept = await keepConnection(server.url, ca.pem)
    expect(kept.serial).toBe(first.serial)

    const second = ca.leaf('hup-second')
    copyFileSync(second.cert, at.cert)
    copyFileSync(second.key, at.key)
    server.process.kill('SIGHUP')
    await servedSoon(server.url, second.serial)
    expect((await createArtist(server.url, 'After the hangup')).status).toBe(201)
    expect((await events.nextEvent()).data).toContain('After the hangup')
    await events.close()
    // The server went on: a hangup is a reload here, not a stop.
    expect(server.process.exitCode).toBeNull()
    expect(await server.stop()).toBe(0)
    const log = (await server.stderr()).split('\n').filter(Boolean)
    const served = log.map((line) => JSON.parse(line)).find((line) => line.message.startsWith('serving the new'))
    expect(served).toMatchObject({ level: 'info', names: 'DNS:localhost, IP Address:127.0.0.1' })
  })

  test('a renewal written to the files is served once they settle; a bad pair is logged and the old one kept', async () => {
    const first = ca.leaf('watch-first')
    const at = placed(first)
    const server = await start(at, ['--metrics', '0'])
    const other = ca.leaf('watch-other')
    // The key of another certificate: logged, counted, and the old pair served on.
    copyFileSync(other.key, at.key)
    server.process.kill('SIGHUP')
    await Bun.sleep(1500)
    expect(await servedSerial(server.url, ca.pem)).toBe(first.serial)
    copyFileSync(other.cert, at.cert)
    await servedSoon(server.url, other.serial)
    expect(await server.stop()).toBe(0)
    const stderr = await server.stderr()
    expect(stderr).toContain(`error: ${at.key} is not the key of the certificate in ${at.cert}`)
    expect(stderr).toContain('the certificate loaded before is served on')
  })

  test('a client that does its handshake and says nothing does not hold the stop off', async () => {
    const server = await start(placed(ca.leaf('silent')), ['--log', 'off'])
    const silent = await keepConnection(server.url, ca.pem)
    const began = performance.now()
    expect(await server.stop()).toBe(0)
    expect(performance.now() - began).toBeLessThan(2000)
    await silent.closed
  })

  test('a certificate close to its expiry is warned of at start', async () => {
    const server = await start(placed(ca.leaf('soon', { days: 3 })))
    expect(await server.stop()).toBe(0)
    expect(await server.stderr()).toMatch(/warning: the certificate in \S+ expires in 2 days/)
  })

  describe('a start is refused with exit code 2 and one line', () => {
    let goods = 0
    const good = () => placed(ca.leaf(`good-${++goods}`))
    const refusals: [string, () => string[], RegExp][] = [
      ['a missing file', () => ['--tls-cert', join(dir, 'none.pem'), '--tls-key', good().key], /no such file/],
      [
        'a key of another certificate',
        () => ['--tls-cert', good().cert, '--tls-key', good().key],
        /is not the key of the certificate in/,
      ],
      [
        'an expired certificate',
        () => {
          const at = placed(ca.leaf('old', { days: 0 }))
          return ['--tls-cert', at.cert, '--tls-key', at.key]
        },
        /the certificate in \S+ expired on /,
      ],
      [
        'a key others can read',
        () => {
          const at = good()
          chmodSync(at.key, 0o640)
          return ['--tls-cert', at.cert, '--tls-key', at.key]
        },
        /can be read or changed by other users \(mode 640\): make it its owner's alone with chmod 600 /,
      ],
      ['--tls-cert without --tls-key', () => ['--tls-cert', good().cert], /--tls-cert and --tls-key go together/],
      ['--hsts without HTTPS', () => ['--hsts', '30d'], /--hsts applies to HTTPS/],
    ]
    test.each(refusals)('%s', async (_, args, message) => {
      const result = await runBinary(['--port', '0', '--data', ':memory:', ...args()])
      expect(result.code).toBe(2)
      expect(result.stdout).toBe('')
      expect(result.stderr).toMatch(message)
      expect(result.stderr).toStartWith('rock-legends: ')
    })

    test.skipIf(!canDropPrivileges)('a key its user cannot read', async () => {
      const at = good()
      const result = await runBinary(
        ['--port', '0', '--data', ':memory:', '--tls-cert', at.cert, '--tls-key', at.key],
        {
          wrapper: AS_NOBODY,
        },
      )
      expect(result.code).toBe(2)
      expect(result.stderr).toContain(`rock-legends: cannot read the TLS key (--tls-key) ${at.key}: permission denied`)
    })
  })
})
