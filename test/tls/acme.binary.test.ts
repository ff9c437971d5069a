import { afterEach, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { writeFileSync } from 'node:fs'
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
import { type Pebble, skipPebble, startPebble } from '../support/pebble.ts'

// The executable with `--https`, its certificate from Pebble (Let's Encrypt's test CA, which validates HTTP-01 by
// asking the executable's plain-HTTP port under a name its DNS resolves to 127.0.0.1). Pebble's own HTTPS is trusted
// through NODE_EXTRA_CA_CERTS, which Bun honours for the ACME client's requests: what an operator of a private CA does.

setDefaultTimeout(60_000)
beforeAll(() => ensureBinary(), 120_000)

const cleanups: (() => unknown)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

async function setUp(pebbleOptions: { blocklist?: string[] } = {}) {
  const httpPort = freePort()
  const pebble: Pebble = await startPebble({ httpPort, ...pebbleOptions })
  cleanups.push(() => pebble.close())
  const dir = tempDir('rock-legends-acme-binary-')
  cleanups.push(() => removeDir(dir))
  const roots = join(dir, 'pebble-listener.pem')
  writeFileSync(roots, pebble.listenerRoot)
  const domain = `vps-${Math.random().toString(36).slice(2, 8)}.rock-legends.test`
  const args = (names = domain) => [
    '--https',
    names,
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
    '--log',
    'json',
  ]
  const env = { NODE_EXTRA_CA_CERTS: roots }
  const start = async (names?: string) => {
    const server: RunningBinary = await startBinary(args(names), { env })
    cleanups.push(() => server.stop('SIGKILL'))
    return server
  }
  const run = (names: string) => runBinary(args(names), { env })
  return { pebble, dir, domain, httpPort, start, run }
}

describe.skipIf(skipPebble)('the executable with --https, over Pebble', () => {
  test('obtains a certificate, serves HTTPS, redirects HTTP, and reuses the certificate after a restart', async () => {
    const { pebble, domain, httpPort, start } = await setUp()
    const server = await start()
    expect(server.url).toStartWith('https://127.0.0.1:')
    expect(pebble.orders()).toBe(1)
    const root = await pebble.issuingRoot()
    const answer = await fetch(`${server.url}/api/v1/artists/1`, { tls: { ca: root, serverName: domain } })
    expect(answer.status).toBe(200)
    expect(((await answer.json()) as { name: string }).name).toBeString()
    await expect(fetch(`${server.url}/healthz`, { tls: { serverName: domain } })).rejects.toThrow()

    const redirected = await fetch(`http://127.0.0.1:${httpPort}/api/v1/artists/1`, { redirect: 'manual' })
    expect(redirected.status).toBe(308)
    expect(redirected.headers.get('location')).toBe(`https://${domain}:${new URL(server.url).port}/api/v1/artists/1`)

    expect(await server.stop()).toBe(0)
    expect(await server.stderr()).toContain('"message":"ACME certificate obtained"')
    const again = await start()
    expect(pebble.orders()).toBe(1)
    expect((await fetch(`${again.url}/healthz`, { tls: { ca: root, serverName: domain } })).status).toBe(200)
    expect(await again.stop()).toBe(0)
    expect(await again.stderr()).toContain('"message":"ACME certificate reused"')
  })

  test('a name the CA refuses stops the start with exit 2 and the CA problem named', async () => {
    const { domain, run } = await setUp({ blocklist: ['blocked.rock-legends.test'] })
    const { code, stderr } = await run(`${domain},blocked.rock-legends.test`)
    expect(code).toBe(2)
    const line = JSON.parse(stderr.trim().split('\n').at(-1) as string) as { message: string; exitCode: number }
    expect(line.exitCode).toBe(2)
    expect(line.message).toContain('refused a certificate for blocked.rock-legends.test')
  })
})
