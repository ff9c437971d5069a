/**
 * A create retried with its `Idempotency-Key` where retries really land: on another replica over the same PostgreSQL,
 * on a replica restarted since, and on an executable over a data file that was killed (SIGKILL) after answering.
 * Each time: one artist, and the same answer to every copy of the request.
 */
import { afterEach, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { SQL } from 'bun'
import { type RunningBinary, removeDir, startBinary, tempDir } from '../support/binary.ts'
import { skipWithoutPostgres, type TestPostgres, testPostgres } from '../support/postgres.ts'

const skip = skipWithoutPostgres()
const KEY = 'replica-test-key'
const running: RunningBinary[] = []
const dirs: string[] = []
let postgres: TestPostgres

afterEach(async () => {
  await Promise.all(running.splice(0).map((replica) => replica.stop().catch(() => 0)))
  for (const dir of dirs.splice(0)) removeDir(dir)
})

const start = async (data: string) => {
  const replica = await startBinary(['--data', data, '--port', '0', '--api-key', KEY, '--log', 'off'])
  running.push(replica)
  return replica
}

/** The POST of Pappo with `key`, sent to `replica`; again after `Retry-After` while the first copy is in flight. */
async function create(replica: RunningBinary, key: string) {
  for (;;) {
    const response = await fetch(`${replica.url}/api/v1/artists`, {
      method: 'POST',
      headers: { 'x-api-key': KEY, 'content-type': 'application/json', 'idempotency-key': key },
      body: JSON.stringify({ name: 'Pappo', band: 'Pappo’s Blues' }),
    })
    if (response.status !== 409) {
      const { status, headers } = response
      return {
        status,
        location: headers.get('location'),
        replayed: headers.get('idempotent-replayed'),
        body: await response.text(),
      }
    }
    await Bun.sleep(Number(response.headers.get('retry-after')) * 1000)
  }
}

const pappos = async (replica: RunningBinary) =>
  ((await (await fetch(`${replica.url}/api/v1/artists?q=pappo&limit=100`)).json()) as { meta: { total: number } }).meta
    .total

describe.skipIf(skip)('a retried create through two replicas over one PostgreSQL', () => {
  test('the same POST with the same key sent to both at once, ten times: one artist each time, one answer', async () => {
    postgres ??= await testPostgres()
    const url = postgres.url(await postgres.emptyDatabase())
    const [one, two] = [await start(url), await start(url)]
    if (!one || !two) throw new Error('not started')
    for (let round = 0; round < 10; round++) {
      const [a, b] = await Promise.all([create(one, `round-${round}`), create(two, `round-${round}`)])
      expect([a.status, b.status]).toEqual([201, 201])
      expect(b.body).toBe(a.body)
      expect(b.location).toBe(a.location)
      // Exactly one of the two made it; the other got its answer again.
      expect([a.replayed, b.replayed].sort()).toEqual([null, 'true'].sort())
    }
    expect(await pappos(one)).toBe(10)
    // One replica answered, then both stopped; a new one, over the same database, replays it.
    const first = await create(two, 'round-0')
    await Promise.all(running.splice(0).map((replica) => replica.stop()))
    const three = await start(url)
    const again = await create(three, 'round-0')
    expect(again).toEqual(first)
    expect(again.replayed).toBe('true')
    const sql = new SQL({ url, max: 1 })
    try {
      expect((await sql`SELECT count(*)::int AS n FROM rl_artists`)[0].n).toBe(10)
      expect((await sql`SELECT count(*)::int AS n FROM rl_idempotency WHERE claim IS NULL`)[0].n).toBe(10)
    } finally {
      await sql.close()
    }
  }, 60_000)
})

describe('a retried create after the executable over a data file was killed', () => {
  test('SIGKILL right after the answer: the restarted executable replays it, and adds nothing', async () => {
    const dir = tempDir('rl-retried-')
    dirs.push(dir)
    const file = join(dir, 'db.json')
    const before = await start(file)
    const first = await create(before, 'killed')
    expect(first.status).toBe(201)
    // No close, no compaction: what holds the answer is the journal line written before it was sent.
    await before.stop('SIGKILL')
    const after = await start(file)
    const again = await create(after, 'killed')
    expect(again.replayed).toBe('true')
    expect({ ...again, replayed: first.replayed }).toEqual(first)
    expect(await pappos(after)).toBe(1)
  }, 30_000)
})
