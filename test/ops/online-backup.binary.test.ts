/**
 * Backups of a running server, against the compiled executable: `rock-legends backup FILE --data db.json` while a
 * server owns the file goes through that server (`GET /__admin/backup`), which keeps serving; under a write load, every
 * write acknowledged before the backup began is in it, on a JSON data file and on PostgreSQL (where the command reads
 * the database in one consistent transaction while replicas serve it). The route itself needs a service key.
 */
import { describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { decodeBackup } from '../../src/ops/backup-format.ts'
import { binaryFixtures, type RunningBinary, runBinary } from '../support/binary.ts'
import { skipWithoutPostgres, type TestPostgres, testPostgres } from '../support/postgres.ts'

const KEY = 'online-backup-service-key'
const { directory, serve } = binaryFixtures('rock-legends-online-backup-', KEY)

/**
 * Creates artists on `servers` (in turn) until `stop` is called, recording each id as its 201 arrives: the writes a
 * backup must hold are those acknowledged before it began.
 */
function writeLoad(servers: RunningBinary[]) {
  const acknowledged: number[] = []
  let going = true
  const writers = servers.flatMap((server, s) =>
    [0, 1, 2].map(async (w) => {
      for (let i = 0; going; i++) {
        const response = await fetch(`${server.url}/api/v1/artists`, {
          method: 'POST',
          headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
          body: JSON.stringify({ name: `Written ${s}.${w}.${i}` }),
        })
        expect(response.status).toBe(201)
        acknowledged.push(((await response.json()) as { id: number }).id)
      }
    }),
  )
  return {
    acknowledged,
    stop: async () => {
      going = false
      await Promise.all(writers)
    },
  }
}

const idsOf = (file: string) => {
  const { backup, problems } = decodeBackup(readFileSync(file, 'utf8'))
  expect(problems).toEqual([])
  return new Set((backup?.content.artists ?? []).map((artist) => artist.id as number))
}

describe('a backup of a running server', () => {
  test('of a data file it owns goes through it, while it serves writes: nothing acknowledged before is missing', async () => {
    const dir = directory()
    const data = join(dir, 'db.json')
    const server = await serve(data, ['--seed'])
    const load = writeLoad([server])
    while (load.acknowledged.length < 50) await Bun.sleep(10)
    const before = [...load.acknowledged]
    const file = join(dir, 'online.json')
    const taken = await runBinary(['backup', file, '--data', data])
    const after = load.acknowledged.length
    await load.stop()
    expect(taken.code).toBe(0)
    expect(taken.stdout).toContain('through the server at')
    expect(taken.stdout).toContain('which kept serving')
    // The server kept answering writes while the backup was taken.
    expect(after).toBeGreaterThan(before.length)
    const ids = idsOf(file)
    expect(before.filter((id) => !ids.has(id))).toEqual([])
    expect(ids.size).toBeGreaterThanOrEqual(32 + before.length)
    expect((await runBinary(['verify', file])).code).toBe(0)
    // The server still owns the file and serves.
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200)
  }, 60_000)

  test('GET /__admin/backup needs a service key: none is 401, a user’s token 403', async () => {
    const dir = directory()
    const server = await serve(join(dir, 'db.json'), ['--seed'])
    expect((await fetch(`${server.url}/__admin/backup`)).status).toBe(401)
    const account = { name: 'U', email: 'u@rock-legends.com', password: 'i-love-rock' }
    await fetch(`${server.url}/api/v1/user/signup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(account),
    })
    const login = await fetch(`${server.url}/api/v1/user/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: account.email, password: account.password }),
    })
    const { token } = (await login.json()) as { token: string }
    const refused = await fetch(`${server.url}/__admin/backup`, { headers: { authorization: `Bearer ${token}` } })
    expect(refused.status).toBe(403)
    const answered = await fetch(`${server.url}/__admin/backup`, { headers: { 'x-api-key': KEY } })
    expect(answered.status).toBe(200)
    expect(answered.headers.get('content-disposition')).toMatch(
      /^attachment; filename="rock-legends-\d{8}T\d{6}Z\.json"$/,
    )
    const { backup, problems } = decodeBackup(await answered.text())
    expect(problems).toEqual([])
    expect(backup?.content.users).toHaveLength(1)
  }, 60_000)
})

describe.skipIf(skipWithoutPostgres())('a backup of a database that replicas serve', () => {
  let postgres: TestPostgres
  test('is one consistent read under writes on two replicas: nothing acknowledged before is missing', async () => {
    postgres ??= await testPostgres()
    // With the schema and no rows: the same start as a new copy the replicas migrate, for less of PostgreSQL's work;
    // emptied for a later test once the replicas over it have stopped (after the test's afterEach).
    const database = await postgres.emptyDatabase()
    const url = postgres.url(database)
    const a = await serve(url, ['--seed'])
    const b = await serve(url)
    const load = writeLoad([a, b])
    while (load.acknowledged.length < 50) await Bun.sleep(10)
    const before = [...load.acknowledged]
    const file = join(directory(), 'db.json.backup')
    const taken = await runBinary(['backup', file, '--data', url])
    await load.stop()
    expect(taken.code).toBe(0)
    const ids = idsOf(file)
    expect(before.filter((id) => !ids.has(id))).toEqual([])
    expect((await runBinary(['verify', file])).code).toBe(0)
  }, 60_000)
})
