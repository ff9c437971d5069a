/**
 * While another replica writes, a replica's write batcher waits, between two of its commits, for the callers it has
 * just answered to send their next creates (writes.ts, `Gathering`), so that its batches are as large as one replica's.
 * Alone it never waits, and a create that finds its replica idle goes at once. The windows here are a minute long: a
 * create that waited for one would fail the test by its timeout, so nothing below measures time.
 */
import { describe, expect, test } from 'bun:test'
import { SQL } from 'bun'
import type { Artist } from '../../../src/model/artist.ts'
import { openSqlStore, type SqlStore, type SqlStoreOptions } from '../../../src/store/sql/sql-store.ts'
import { WriteBatcher } from '../../../src/store/sql/writes.ts'
import { sqlTestFile, type TestPostgres } from '../../support/postgres.ts'

let pg: TestPostgres
const { skip, opened, pools, emptyDatabase } = sqlTestFile((server) => {
  pg = server
})

/** Longer than any test may run: a create that waited for the window would time the test out. */
const A_MINUTE = 60_000

/** A replica over `database` whose batcher would wait up to `gatherMs`; credential uses never flushed by the timer. */
async function replica(database: string, gatherMs = A_MINUTE, options: SqlStoreOptions = {}): Promise<SqlStore> {
  const store = await openSqlStore(pg.url(database), {
    pool: 4,
    waitMs: 5000,
    gatherMs,
    saveUsesEveryMs: 3_600_000,
    ...options,
  })
  opened.push(store)
  return store
}

/** Resolves once `ready()` holds, asking every 10 ms (for at most 10 s). */
async function until(ready: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 1000; i++) {
    if (ready()) return
    await Bun.sleep(10)
  }
  throw new Error(`never: ${what}`)
}

/** Creates on `store`, one after another, until `stop` is called: another replica writing. */
function keepWriting(store: SqlStore) {
  let stopped = false
  const done = (async () => {
    for (let i = 0; !stopped; i++) {
      await store.artists.insert({ name: `Elsewhere ${i}` })
      await Bun.sleep(20)
    }
  })()
  return async () => {
    stopped = true
    await done
  }
}

const names = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => ({ name: `${prefix} ${i}` }))

/** Ids increase in the order creates were acknowledged (one batch at a time), and none repeats. */
function expectIncreasing(artists: readonly Artist[]) {
  const ids = artists.map((artist) => artist.id)
  expect(ids).toEqual([...ids].sort((x, y) => x - y))
  expect(new Set(ids).size).toBe(ids.length)
}

describe.skipIf(skip)('SqlStore: batches gathered while another replica writes', () => {
  test('alone, a replica never waits for more creates, its own wake-ups notwithstanding', async () => {
    const database = await emptyDatabase()
    const alone = await replica(database)
    // The replica's own wake-ups come back to it (every listening connection gets a NOTIFY): wait until one has.
    const raw = new SQL({ url: pg.url(database), max: 1 })
    pools.push(raw)
    let heard = 0
    const listening = await raw.listen('rl_events', () => {
      heard += 1
    })
    try {
      const first = await Promise.all(names('Burst', 8).map((fields) => alone.artists.insert(fields)))
      await until(() => heard > 0, 'the replica woke the others up')
      // A burst, then a lone create: had the replica counted its own wake-ups as another's writes, the lone create
      // would wait a minute for as many creates as the burst held.
      const second = await Promise.all(names('Again', 8).map((fields) => alone.artists.insert(fields)))
      const lone = await alone.artists.insert({ name: 'Lone' })
      expect(alone.changes.othersWriting()).toBe(false)
      expect(alone.batchGathers).toBe(0)
      expectIncreasing([...first, ...second, lone])
      expect((await alone.artists.list({ limit: 1, offset: 0 })).total).toBe(17)
    } finally {
      await listening.unlisten()
    }
  })

  test('while another replica writes: a create on an idle replica goes at once, and a wait ends when as many are queued as were committed', async () => {
    const database = await emptyDatabase()
    const [a, b] = [await replica(database), await replica(database)]
    const stop = keepWriting(b)
    try {
      await until(() => a.changes.othersWriting(), 'replica A learnt that B writes')
      expect(b.changes.othersWriting()).toBe(false)
      // Idle: the first create goes at once, though the window is a minute; then the batcher waits for one more.
      const lone = await a.artists.insert({ name: 'Lone' })
      await until(() => a.batchGathers === 1, 'a wait began after the first commit')
      // Each next create is what the wait after the last commit (of one) waits for: it goes as soon as it comes.
      const serial: Artist[] = []
      for (const fields of names('One by one', 5)) {
        serial.push(await a.artists.insert(fields))
        await until(() => a.batchGathers === serial.length + 1, 'a wait began after the commit')
      }
      // A burst arriving during a wait for one goes whole in the next batch, then the wait is for eight.
      const before = a.batchTransactions
      const burst = await Promise.all(names('Burst', 8).map((fields) => a.artists.insert(fields)))
      expect(a.batchTransactions - before).toBe(1)
      await until(() => a.batchGathers === 7, 'a wait began after the burst')
      // The next eight end that wait and go together: one transaction.
      const next = await Promise.all(names('Next', 8).map((fields) => a.artists.insert(fields)))
      expect(a.batchTransactions - before).toBe(2)
      expectIncreasing([lone, ...serial, ...burst, ...next])
      await stop()
      // Closing ends the wait in progress (a minute long): it saves what is pending now.
      await a.close()
      const fromB = (await b.artists.list({ limit: 1, offset: 0 })).total
      const rows = new SQL({ url: pg.url(database), max: 1 })
      pools.push(rows)
      const [{ n }] = await rows`SELECT count(*)::int AS n FROM rl_artists`
      expect(fromB).toBe(n)
      expect(n).toBeGreaterThanOrEqual(1 + 5 + 8 + 8 + 1)
    } finally {
      await stop()
    }
  })

  test('a create on a replica that has stopped waiting goes at once, however large its last batch', async () => {
    // The store's own batcher over a migrated database, gathering as if another replica always wrote; a flush (which
    // the store runs every few seconds, and on close) ends its minute-long wait.
    const database = await emptyDatabase()
    await replica(database)
    const sql = new SQL({ url: pg.url(database), max: 2 })
    pools.push(sql)
    const batcher = new WriteBatcher(
      (work) => sql.begin((tx) => work(tx as unknown as SQL)),
      (work) => work(sql),
      (error) => error,
      { pays: () => true, ms: A_MINUTE },
    )
    const burst = await Promise.all(names('Burst', 8).map((fields) => batcher.insertArtist(fields)))
    await until(() => batcher.waiting, 'a wait for eight began after the burst')
    await batcher.flush()
    expect(batcher.waiting).toBe(false)
    // Idle again: one create, fewer than the last batch held, does not wait for more.
    const before = batcher.transactions
    const lone = await batcher.insertArtist({ name: 'Lone' })
    expect(batcher.transactions - before).toBe(1)
    expectIncreasing([...burst, lone])
    await batcher.flush()
  })

  test('the wait is bounded: fewer creates than the batch before still go once the window ends', async () => {
    const database = await emptyDatabase()
    const [a, b] = [await replica(database, 50), await replica(database)]
    const stop = keepWriting(b)
    try {
      await until(() => a.changes.othersWriting(), 'replica A learnt that B writes')
      const burst = await Promise.all(names('Burst', 8).map((fields) => a.artists.insert(fields)))
      await until(() => a.batchGathers === 1, 'a wait for eight began after the burst')
      // Two come: the wait for eight ends with the window, and they go together.
      const before = a.batchTransactions
      const few = await Promise.all(names('Few', 2).map((fields) => a.artists.insert(fields)))
      expect(few.map((artist) => artist.name)).toEqual(['Few 0', 'Few 1'])
      expect(a.batchTransactions - before).toBe(1)
      expectIncreasing([...burst, ...few])
    } finally {
      await stop()
    }
  })
})
