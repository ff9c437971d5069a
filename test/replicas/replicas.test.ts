/**
 * Several compiled executables over one PostgreSQL database, as a user runs replicas behind a load balancer: the
 * harness starts its own PostgreSQL (test/support/postgres.ts), and each test starts the executables it needs on a
 * database of its own (an emptied one, or a brand-new one where who migrates it is the point) and talks HTTP to them. Nothing may stay per process: the schema, the seed, ids, accounts and
 * tokens, the login limits and the reset point are the database's.
 */
import { afterEach, describe, expect, test } from 'bun:test'
import { SQL } from 'bun'
import { type RunningBinary, runBinary, startBinary } from '../support/binary.ts'
import { skipWithoutPostgres, type TestPostgres, testPostgres } from '../support/postgres.ts'

const skip = skipWithoutPostgres()
const KEY = 'replica-test-key'
const asService = { 'x-api-key': KEY, 'content-type': 'application/json' }
const SEEDED_ARTISTS = 32

let postgres: TestPostgres
const running: RunningBinary[] = []

// The replicas stopped after their test; its database is emptied for the next test once they have (`emptyDatabase`).
afterEach(async () => {
  await Promise.all(running.splice(0).map((replica) => replica.stop().catch(() => 0)))
})

/**
 * A database and its URL (over the unix socket): by default one with the schema and no rows, as a replica that
 * migrated an empty database leaves it (`emptyDatabase`), which costs PostgreSQL far less than a new copy its replicas
 * then migrate. `{ empty: true }`: a brand-new database without the schema, for the test of who migrates it.
 */
async function database({ empty = false } = {}) {
  postgres ??= await testPostgres()
  const name = empty ? await postgres.freshDatabase() : await postgres.emptyDatabase()
  return { name, url: postgres.url(name) }
}

/** Starts `count` executables at once over `url`, each with `args`, on free ports. */
async function replicas(url: string, count: number, args: string[] = []) {
  const started = await Promise.all(
    Array.from({ length: count }, () =>
      startBinary(['--data', url, '--port', '0', '--api-key', KEY, '--log', 'off', ...args]),
    ),
  )
  running.push(...started)
  return started
}

// biome-ignore lint/suspicious/noExplicitAny: tests read whatever JSON a response holds, field by field
const json = async (response: Response) => ({ status: response.status, body: (await response.json()) as any })
const total = async (replica: RunningBinary) =>
  (await json(await fetch(`${replica.url}/api/v1/artists?limit=1`))).body.meta.total as number

const signUp = (replica: RunningBinary, email: string) =>
  fetch(`${replica.url}/api/v1/user/signup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Carlos', email, password: 'i-love-rock' }),
  })

const logIn = (replica: RunningBinary, email: string, password = 'i-love-rock') =>
  fetch(`${replica.url}/api/v1/user/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password }),
  })

const create = (replica: RunningBinary, name: string, headers: Record<string, string> = asService) =>
  fetch(`${replica.url}/api/v1/artists`, { method: 'POST', headers, body: JSON.stringify({ name }) })

describe.skipIf(skip)('replicas over one PostgreSQL database', () => {
  test('four replicas started at once on an empty database: one migrates, one seeds, all serve the same 32', async () => {
    const { url } = await database({ empty: true })
    const all = await replicas(url, 4, ['--seed'])
    for (const replica of all) expect(await total(replica)).toBe(SEEDED_ARTISTS)
    const sql = new SQL({ url, max: 1 })
    try {
      const migrations = await sql`SELECT version, count(*)::int AS times FROM rl_migrations GROUP BY version`
      expect(migrations.every((row: { times: number }) => row.times === 1)).toBe(true)
      expect((await sql`SELECT count(*)::int AS n FROM rl_artists`)[0].n).toBe(SEEDED_ARTISTS)
    } finally {
      await sql.close()
    }
  })

  test('creates on two replicas at once never share an id, and both count them all', async () => {
    const { url } = await database()
    const [a, b] = (await replicas(url, 2, ['--seed'])) as [RunningBinary, RunningBinary]
    const answers = await Promise.all(
      Array.from({ length: 60 }, (_, i) => create(i % 2 === 0 ? a : b, `Replica artist ${i}`).then(json)),
    )
    expect(answers.every((answer) => answer.status === 201)).toBe(true)
    const ids = answers.map((answer) => answer.body.id as number)
    expect(new Set(ids).size).toBe(60)
    expect(Math.min(...ids)).toBe(SEEDED_ARTISTS + 1)
    expect(Math.max(...ids)).toBe(SEEDED_ARTISTS + 60)
    expect(await total(a)).toBe(SEEDED_ARTISTS + 60)
    expect(await total(b)).toBe(SEEDED_ARTISTS + 60)
    // What one replica acknowledged, the other serves.
    const [first] = answers
    expect((await json(await fetch(`${b.url}/api/v1/artists/${first?.body.id}`))).body.name).toBe('Replica artist 0')
  })

  test('an account made on one replica logs in on another; a logout there is refused everywhere at once', async () => {
    const { url } = await database()
    const [a, b] = (await replicas(url, 2)) as [RunningBinary, RunningBinary]
    expect((await signUp(a, 'carlos@rock-legends.com')).status).toBe(201)
    expect((await signUp(b, 'CARLOS@rock-legends.com')).status).toBe(409)
    const login = await json(await logIn(b, 'carlos@rock-legends.com'))
    expect(login.status).toBe(200)
    const bearer = { authorization: `Bearer ${login.body.token}`, 'content-type': 'application/json' }
    expect((await create(a, 'Written with a token from B', bearer)).status).toBe(201)
    const token = { authorization: bearer.authorization }
    expect((await fetch(`${a.url}/api/v1/user/me`, { headers: token })).status).toBe(200)
    expect((await fetch(`${a.url}/api/v1/user/logout`, { method: 'POST', headers: token })).status).toBe(204)
    expect((await fetch(`${b.url}/api/v1/user/me`, { headers: token })).status).toBe(401)
    expect((await create(b, 'After logout', bearer)).status).toBe(401)
  })

  test('the login limit per email holds across replicas together, not per replica', async () => {
    const { url } = await database()
    const [a, b] = (await replicas(url, 2)) as [RunningBinary, RunningBinary]
    expect((await signUp(a, 'pappo@rock-legends.com')).status).toBe(201)
    // Five wrong passwords per email from one address, whichever replica hears them.
    const statuses: number[] = []
    for (let i = 0; i < 8; i++)
      statuses.push((await logIn(i % 2 === 0 ? a : b, 'pappo@rock-legends.com', 'wrong!!!')).status)
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429, 429])
    const refused = await logIn(b, 'pappo@rock-legends.com')
    expect(refused.status).toBe(429)
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0)
  })

  test('a reset on one replica is what every replica then serves', async () => {
    const { url } = await database()
    const [a, b] = (await replicas(url, 2, ['--seed', '--allow-reset'])) as [RunningBinary, RunningBinary]
    expect((await create(a, 'Gone after the reset')).status).toBe(201)
    expect(await total(b)).toBe(SEEDED_ARTISTS + 1)
    expect((await fetch(`${b.url}/__admin/reset`, { method: 'POST', headers: { 'x-api-key': KEY } })).status).toBe(204)
    expect(await total(a)).toBe(SEEDED_ARTISTS)
    expect(await total(b)).toBe(SEEDED_ARTISTS)
    // Ids restart where the reset point left them, on both.
    expect((await json(await create(b, 'First after the reset'))).body.id).toBe(SEEDED_ARTISTS + 1)
  })

  test('a database that cannot be reached at start: one line naming where and why, no password, exit non-zero', async () => {
    const closed = `postgres://rl:s3cret@127.0.0.1:9/catalogue`
    const started = Date.now()
    const { code, stderr } = await runBinary(['--data', closed, '--db-wait', '1s', '--port', '0'])
    expect(code).not.toBe(0)
    expect(Date.now() - started).toBeLessThan(15_000)
    const lines = stderr.trim().split('\n')
    expect(lines).toHaveLength(1)
    expect(lines[0]).toContain('127.0.0.1:9')
    expect(stderr).not.toContain('s3cret')
  })
})
