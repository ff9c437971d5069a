/**
 * Replicas behind a load balancer serve HTTPS from certificate files the operator gives each of them (`--tls-cert`,
 * `--tls-key`), not with `--https`: the CA's HTTP-01 request may reach any replica, and each replica ordering alone
 * runs into the CA's duplicate-certificate limits (docs/operations.md, "HTTPS without a proxy"). Two executables over
 * one PostgreSQL with the same files: both serve HTTPS verified against the test CA, and a write on one is read on
 * the other.
 */
import { afterEach, describe, expect, test } from 'bun:test'
import { type RunningBinary, removeDir, startBinary, tempDir } from '../support/binary.ts'
import { makeCa, opensslMissing } from '../support/certificates.ts'
import { skipWithoutPostgres, type TestPostgres, testPostgres } from '../support/postgres.ts'

const skip = skipWithoutPostgres() || opensslMissing
const KEY = 'shared-certificate-key'
const running: RunningBinary[] = []
const dirs: string[] = []
let postgres: TestPostgres

afterEach(async () => {
  await Promise.all(running.splice(0).map((replica) => replica.stop().catch(() => 0)))
  for (const dir of dirs.splice(0)) removeDir(dir)
})

describe.skipIf(skip)('replicas with the same certificate files', () => {
  test('both serve HTTPS verified against the CA, over one database', async () => {
    postgres ??= await testPostgres()
    const database = await postgres.emptyDatabase()
    const dir = tempDir('rock-legends-replica-tls-')
    dirs.push(dir)
    const ca = makeCa(dir)
    const leaf = ca.leaf('localhost')
    const start = async () => {
      const replica = await startBinary([
        '--data',
        postgres.url(database),
        '--port',
        '0',
        '--api-key',
        KEY,
        '--log',
        'off',
        '--tls-cert',
        leaf.cert,
        '--tls-key',
        leaf.key,
      ])
      running.push(replica)
      return replica
    }
    const [one, two] = [await start(), await start()]
    const tls = { ca: ca.pem }
    expect(one.url).toStartWith('https://')
    const created = await fetch(`${one.url}/api/v1/artists`, {
      method: 'POST',
      headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Luca Prodan' }),
      tls,
    })
    expect(created.status).toBe(201)
    const { id } = (await created.json()) as { id: number }
    const read = await fetch(`${two.url}/api/v1/artists/${id}`, { tls })
    expect(read.status).toBe(200)
    expect(((await read.json()) as { name: string }).name).toBe('Luca Prodan')
    // Verified for real: without the CA, the second replica's certificate is refused too.
    await expect(fetch(`${two.url}/healthz`)).rejects.toThrow()
  })
})
