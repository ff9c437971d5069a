/**
 * Replicas over a PostgreSQL reached through a connection pooler, as a managed PostgreSQL hands one out: Debian's
 * PgBouncer (test/support/pgbouncer.ts) in front of the harness's server, in session and in transaction mode. Two
 * compiled executables start through one PgBouncer, see each other's writes and each other's changes on their event
 * streams: in transaction mode with `?prepare=false` and no direct URL (the feed polls), or with `--data-direct` (the
 * feed LISTENs there). And the store's time limits hold through the pooler, where no connection setting does.
 */
import { afterEach, describe, expect, test } from 'bun:test'
import { SQL } from 'bun'
import { connectStorePool, openSqlStore } from '../../src/store/sql/sql-store.ts'
import { DatabaseUnavailableError } from '../../src/store/store.ts'
import { dataOf, type SseReader, sse } from '../events/sse.ts'
import { type RunningBinary, startBinary } from '../support/binary.ts'
import { type PoolMode, skipWithoutPgbouncer, startPgbouncer, type TestPgbouncer } from '../support/pgbouncer.ts'
import { skipWithoutPostgres, type TestPostgres, testPostgres } from '../support/postgres.ts'

const skip = skipWithoutPostgres() || skipWithoutPgbouncer()
const KEY = 'pooler-key'
const asService = { 'x-api-key': KEY, 'content-type': 'application/json' }

let postgres: TestPostgres
const bouncers = new Map<PoolMode, Promise<TestPgbouncer>>()
const running: RunningBinary[] = []
const streams: SseReader[] = []
const closing: { close(): Promise<unknown> }[] = []

afterEach(async () => {
  await Promise.all(streams.splice(0).map((stream) => stream.close()))
  await Promise.all(running.splice(0).map((replica) => replica.stop().catch(() => 0)))
  await Promise.all(closing.splice(0).map((each) => each.close().catch(() => {})))
})

/** A database of the test's own (schema, no rows), and this file's PgBouncer in `mode` in front of the server. */
async function through(mode: PoolMode) {
  postgres ??= await testPostgres()
  let bouncer = bouncers.get(mode)
  if (!bouncer) {
    bouncer = startPgbouncer(postgres, mode)
    bouncers.set(mode, bouncer)
  }
  const database = await postgres.emptyDatabase()
  return { database, pooled: (await bouncer).url(database) }
}

async function replicas(count: number, args: string[]) {
  const started = await Promise.all(
    Array.from({ length: count }, () => startBinary([...args, '--port', '0', '--api-key', KEY, '--log', 'off'])),
  )
  running.push(...started)
  return started
}

async function open(replica: RunningBinary) {
  const response = await fetch(`${replica.url}/api/v1/events`)
  expect(response.status).toBe(200)
  const stream = sse(response)
  streams.push(stream)
  expect((await stream.nextEvent()).event).toBe('ready')
  return stream
}

const post = (replica: RunningBinary, path: string, body: object) =>
  fetch(`${replica.url}${path}`, { method: 'POST', headers: asService, body: JSON.stringify(body) })

/** Two replicas: a create on each is read on the other, and reaches the other's stream. */
async function shareWritesAndEvents([a, b]: RunningBinary[]) {
  if (!a || !b) throw new Error('two replicas')
  const onA = await open(a)
  const onB = await open(b)
  const created = await post(b, '/api/v1/artists', { name: 'Charly García' })
  expect(created.status).toBe(201)
  const artist = (await created.json()) as { id: number }
  expect(await (await fetch(`${a.url}/api/v1/artists/${artist.id}`)).json()).toEqual(artist)
  const album = await post(a, `/api/v1/artists/${artist.id}/albums`, { name: 'Clics modernos', year: 1983 })
  expect(album.status).toBe(201)
  const albumBody = await album.json()
  const listed = (await (await fetch(`${b.url}/api/v1/artists/${artist.id}/albums`)).json()) as { data: unknown[] }
  expect(listed.data).toEqual([albumBody])
  for (const stream of [onA, onB]) {
    const first = await stream.nextEvent(5000)
    expect(first.event).toBe('artist-created')
    expect(dataOf(first).artist).toEqual(artist)
    const second = await stream.nextEvent(5000)
    expect(second.event).toBe('album-created')
    expect(dataOf(second).album).toEqual(albumBody)
  }
}

describe.skipIf(skip)('replicas through PgBouncer', () => {
  test('session mode: two executables start through one PgBouncer and share writes and events', async () => {
    const { pooled } = await through('session')
    await shareWritesAndEvents(await replicas(2, ['--data', pooled]))
  })

  test('transaction mode, ?prepare=false and no direct URL: they start, share writes, and events arrive by polling', async () => {
    const { pooled } = await through('transaction')
    await shareWritesAndEvents(await replicas(2, ['--data', `${pooled}?prepare=false`]))
  })

  test('transaction mode with --data-direct: prepared statements off by themselves, the feed LISTENs on the direct URL', async () => {
    const { database, pooled } = await through('transaction')
    const direct = postgres.tcpUrl(database)
    const started = await replicas(2, ['--data', pooled, '--data-direct', direct])
    await shareWritesAndEvents(started)
    // Both replicas' listening connections are the direct ones: TCP to the server, not PgBouncer's unix socket.
    const admin = new SQL({ url: postgres.url(database), max: 1 })
    closing.push(admin)
    const [listening] = await admin`
      SELECT count(*)::int AS count FROM pg_stat_activity
      WHERE datname = current_database() AND client_addr IS NOT NULL AND query ILIKE 'LISTEN%'`
    expect(listening.count).toBe(2)
  })

  test('a --data-direct that is not a database URL is refused at start', async () => {
    const { pooled } = await through('transaction')
    const error = await replicas(1, ['--data', pooled, '--data-direct', './db.json']).catch((caught: Error) => caught)
    expect(String(error)).toContain('--data-direct names a database')
  })
})

describe.skipIf(skip)('time limits through PgBouncer in transaction mode', () => {
  test('each transaction sets its limits; a statement outside one is cancelled past its time', async () => {
    const { pooled } = await through('transaction')
    const sql = await connectStorePool(`${pooled}?prepare=false`, { pool: 2, statementTimeoutMs: 300 })
    closing.push(sql)
    const [inside] = await sql.begin(
      (tx) => tx`SELECT current_setting('statement_timeout') AS statement,
        current_setting('idle_in_transaction_session_timeout') AS idle`,
    )
    expect(inside).toEqual({ statement: '300ms', idle: '10s' })
    // Nothing is set on the connection itself: the next transaction on it, anyone's, starts with the server's own.
    const [outside] = await sql`SELECT current_setting('statement_timeout') AS statement`
    expect(outside.statement).toBe('0')
    const started = Date.now()
    const error = await sql`SELECT pg_sleep(3)`.catch((caught: unknown) => caught)
    expect(Date.now() - started).toBeLessThan(2000)
    expect((error as { errno?: string }).errno).toBe('57014')
    expect((error as Error).message).toContain('statement timeout (300 ms, cancelled by the client)')
    // The pool goes on serving.
    expect((await sql`SELECT 1 AS one`)[0].one).toBe(1)
  })

  test('a store through the pooler: a write held by a lock fails in time, in a transaction or alone', async () => {
    const { database, pooled } = await through('transaction')
    const store = await openSqlStore(`${pooled}?prepare=false`, { pool: 2, statementTimeoutMs: 300 })
    closing.push(store)
    const kept = await store.artists.insert({ name: 'Spinetta' })
    const holder = new SQL({ url: postgres.url(database), max: 1 })
    closing.push(holder)
    const errors = await holder.begin(async (tx) => {
      // Holds every stripe of the artists' tally, as a stuck reset elsewhere would.
      await tx`SELECT stripe FROM rl_tallies FOR UPDATE`
      const started = Date.now()
      const caught = await Promise.all([
        // A batch of one insert: one statement alone, cancelled by the client.
        store.artists.insert({ name: 'Esperando' }).catch((reason: unknown) => reason),
        // A replace: a transaction, stopped by its own SET LOCAL statement_timeout.
        store.artists.replace({ ...kept, name: 'Luis Alberto Spinetta' }).catch((reason: unknown) => reason),
      ])
      expect(Date.now() - started).toBeLessThan(3000)
      return caught
    })
    for (const error of errors) {
      expect(error).toBeInstanceOf(DatabaseUnavailableError)
      expect((error as Error).message).toContain('statement timeout')
    }
    expect(await store.artists.get(kept.id)).toEqual(kept)
    expect((await store.artists.list({ limit: 10, offset: 0 })).total).toBe(1)
  })
})
