/**
 * A replica killed (SIGKILL) at the moment its keyed create is committed in PostgreSQL, before it could answer. A relay
 * between that replica and the database (test/support/slow-link.ts) holds the database's answers back half a second;
 * the test sees the artist committed and kills the replica within that half second, so the replica never learns that
 * its transaction committed and no answer leaves it. The retry, on another replica, must get the first answer at once
 * (not 409 until the claim's 60-second lease runs out), with one artist: sent by the client itself, and sent by HAProxy,
 * which retries the POST on its own when the killed replica closes without answering (`retry-on empty-response`).
 */
import { afterEach, describe, expect, test } from 'bun:test'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { SQL, type Subprocess } from 'bun'
import { freePort, type RunningBinary, removeDir, startBinary, tempDir } from '../support/binary.ts'
import { skipWithoutPostgres, type TestPostgres, testPostgres } from '../support/postgres.ts'
import { PROGRAMS, skipProxies } from '../support/proxies.ts'
import { slowLink } from '../support/slow-link.ts'

const skip = skipWithoutPostgres()
const KEY = 'killed-replica-key'
/** How late the doomed replica hears from its database once the create is sent: the time the test has to kill it. */
const HELD_MS = 500
const running: RunningBinary[] = []
const cleanUps: (() => unknown)[] = []
let postgres: TestPostgres

afterEach(async () => {
  await Promise.all(running.splice(0).map((replica) => replica.stop().catch(() => 0)))
  for (const cleanUp of cleanUps.splice(0)) await cleanUp()
})

const start = async (data: string) => {
  const replica = await startBinary(['--data', data, '--port', '0', '--api-key', KEY, '--log', 'off'])
  running.push(replica)
  return replica
}

/** The POST of Pappo with an Idempotency-Key to `origin`. */
const post = (origin: string) =>
  fetch(`${origin}/api/v1/artists`, {
    method: 'POST',
    headers: { 'x-api-key': KEY, 'content-type': 'application/json', 'idempotency-key': 'lost-answer' },
    body: JSON.stringify({ name: 'Pappo', band: 'Pappo’s Blues' }),
  })

/**
 * Two replicas over one new database: `doomed`, whose database answers can be held back, and `other`; `artists`
 * counts the rows of `rl_artists`, straight from the database.
 */
async function replicas() {
  postgres ??= await testPostgres()
  const database = await postgres.emptyDatabase()
  const link = await slowLink(postgres.port)
  const sql = new SQL({ url: postgres.url(database), max: 1 })
  cleanUps.push(
    () => link.stop(),
    () => sql.close(),
  )
  const viaLink = postgres.tcpUrl(database).replace(`:${postgres.port}/`, `:${link.port}/`)
  const [doomed, other] = [await start(viaLink), await start(postgres.url(database))]
  const artists = async () => (await sql`SELECT count(*)::int AS n FROM rl_artists`)[0].n as number
  /** From now on the doomed replica hears from its database late; once the artist is committed, it is killed. */
  const killOnCommit = async () => {
    link.delayMs = HELD_MS
    const deadline = performance.now() + 20_000
    while ((await artists()) === 0) {
      if (performance.now() > deadline) throw new Error('the create was never committed')
      await Bun.sleep(2)
    }
    await doomed.stop('SIGKILL')
  }
  return { doomed, other, artists, killOnCommit }
}

/** What the retry must be: the first answer, replayed, as the stored artist says it. */
async function expectFirstAnswer(retry: Response, replica: RunningBinary) {
  expect(retry.status).toBe(201)
  expect(retry.headers.get('idempotent-replayed')).toBe('true')
  expect(retry.headers.get('location')).toBe('/api/v1/artists/1')
  const stored = await fetch(`${replica.url}/api/v1/artists/1`)
  expect(retry.headers.get('etag')).toBe(stored.headers.get('etag'))
  expect(await retry.text()).toBe(await stored.text())
}

describe.skipIf(skip)('a replica killed once its keyed create is committed, before it answered', () => {
  test('the client retries on another replica: the first answer at once, one artist', async () => {
    const { doomed, other, artists, killOnCommit } = await replicas()
    const first = post(doomed.url).then(
      (response) => response.status,
      () => 'no answer',
    )
    await killOnCommit()
    expect(await first).toBe('no answer')
    const started = performance.now()
    await expectFirstAnswer(await post(other.url), other)
    expect(performance.now() - started).toBeLessThan(2000)
    expect(await artists()).toBe(1)
  }, 60_000)

  test.skipIf(skipProxies)(
    'HAProxy with `retry-on empty-response` retries it on the other replica: the client gets the first answer',
    async () => {
      const { doomed, other, artists, killOnCommit } = await replicas()
      const dir = tempDir('rl-haproxy-retry-')
      const listen = freePort()
      // `balance first`: the doomed replica gets the request; `redispatch` sends the retry to the other one.
      const config = `defaults
  mode http
  timeout connect 2s
  timeout client 30s
  timeout server 30s
  retries 3
  option redispatch 1
  retry-on empty-response conn-failure

frontend api
  bind 127.0.0.1:${listen}
  default_backend replicas

backend replicas
  balance first
  server doomed 127.0.0.1:${new URL(doomed.url).port}
  server other 127.0.0.1:${new URL(other.url).port}
`
      const file = join(dir, 'haproxy.cfg')
      writeFileSync(file, config)
      const haproxy: Subprocess = Bun.spawn([PROGRAMS.haproxy, '-db', '-f', file], { stdout: 'pipe', stderr: 'pipe' })
      cleanUps.push(
        () => haproxy.kill('SIGTERM'),
        () => removeDir(dir),
      )
      const origin = `http://127.0.0.1:${listen}`
      for (let tries = 0; (await fetch(`${origin}/healthz`).catch(() => undefined))?.status !== 200; tries++) {
        if (tries > 100) throw new Error('HAProxy did not start')
        await Bun.sleep(50)
      }
      const started = performance.now()
      const answer = post(origin)
      await killOnCommit()
      await expectFirstAnswer(await answer, other)
      // The kill comes half a second at most after the commit; the retry itself is one round trip.
      expect(performance.now() - started).toBeLessThan(15_000)
      expect(await artists()).toBe(1)
    },
    60_000,
  )
})
