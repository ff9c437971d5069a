import { afterAll, afterEach, describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { createApp } from '../../src/app.ts'
import { Metrics } from '../../src/metrics/metrics.ts'
import { StoreAvailability } from '../../src/store/availability.ts'
import { openJsonFileStore } from '../../src/store/json-file/json-file.ts'
import { openSqlStore, type SqlStore } from '../../src/store/sql/sql-store.ts'
import type { Store } from '../../src/store/store.ts'
import { faultyFileSystem } from '../disk/failing-fs.ts'
import { removeDir, tempDir } from '../support/binary.ts'
import { cheapPasswords } from '../support/passwords.ts'
import { ownPostgres, skipWithoutPostgres, type TestPostgres } from '../support/postgres.ts'

// `rock_legends_store_up`, the requests refused because the store is away, and the transitions the log is told of:
// over a data file whose disk refuses the journal (a fault injected at the store's file-system seam), and over a real
// PostgreSQL stopped and started again. In-process, through the whole app; the executable's log lines and a real
// Prometheus are in store-up.binary.test.ts and prometheus.binary.test.ts.

const KEY = 'store-up-key'
const cleanups: (() => Promise<unknown> | unknown)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

/** The value of the unlabelled sample `name` in `text`, or undefined. */
const sample = (text: string, name: string) => {
  const line = text.split('\n').find((each) => each.startsWith(`${name} `))
  return line === undefined ? undefined : Number(line.slice(name.length + 1))
}

/** What the store's availability told its watcher, in order. */
function watched(store: Store) {
  const events: string[] = []
  store.availability?.watch({
    away: (error) => events.push(`away: ${(error as Error).message}`),
    back: () => events.push('back'),
  })
  return events
}

/** An app over `store`, counted into new metrics; `send` answers with the status. */
function instrumented(store: Store) {
  const metrics = new Metrics()
  store.instrument?.(metrics.store)
  const app = createApp({ store, apiKeys: [KEY], metrics, passwords: cheapPasswords, report: () => {} })
  const send = async (method: string, path: string, body?: unknown) => {
    const response = await app.handle(
      new Request(`http://localhost${path}`, {
        method,
        headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
        ...(body !== undefined && { body: JSON.stringify(body) }),
      }),
    )
    await response.arrayBuffer()
    return response.status
  }
  return { metrics, send }
}

/** Waits until `condition` holds, for at most `ms`. */
async function until(condition: () => boolean, ms: number) {
  const deadline = Date.now() + ms
  while (!condition() && Date.now() < deadline) await Bun.sleep(20)
  return condition()
}

describe('the availability of a store', () => {
  test('away at the first failure, back at the first success; outcomes of an earlier state are not news', async () => {
    let answers = false
    const probes: number[] = []
    const availability = new StoreAvailability(async () => {
      probes.push(Date.now())
      if (!answers) throw new Error('still away')
    }, 30)
    cleanups.push(() => availability.close())
    const events: string[] = []
    availability.watch({ away: (error) => events.push(`away ${error}`), back: () => events.push('back') })
    expect(availability.up).toBe(true)
    // An operation that began while the store served succeeds late: no news.
    const early = availability.turn
    availability.succeeded(early)
    expect(events).toEqual([])
    availability.failed('first', early)
    availability.failed('second', availability.turn)
    expect({ up: availability.up, events }).toEqual({ up: false, events: ['away first'] })
    // A success of an operation that began before the outage does not end it.
    availability.succeeded(early)
    expect(availability.up).toBe(false)
    // While away, the probe runs every 30 ms, one at a time, until it succeeds.
    expect(await until(() => probes.length >= 3, 2000)).toBe(true)
    const during = availability.turn
    answers = true
    expect(await until(() => availability.up, 2000)).toBe(true)
    expect(events).toEqual(['away first', 'back'])
    // A failure of an operation that began during the outage, after it is over, does not start another.
    availability.failed('late', during)
    expect(availability.up).toBe(true)
    const probed = probes.length
    await Bun.sleep(100)
    expect(probes.length).toBe(probed)
    expect(events).toEqual(['away first', 'back'])
  })

  test('a closed store is never probed, nor sent away', async () => {
    let probes = 0
    const availability = new StoreAvailability(async () => {
      probes += 1
      throw new Error('away')
    }, 10)
    availability.failed('gone', availability.turn)
    availability.close()
    await Bun.sleep(60)
    expect(probes).toBe(0)
    const closed = new StoreAvailability(async () => {}, 10)
    closed.close()
    closed.failed('gone', closed.turn)
    expect(closed.up).toBe(true)
  })
})

describe('store_up over a data file', () => {
  test('0 while the disk refuses the journal, each 503 counted; back by itself once it takes a commit again', async () => {
    const dir = tempDir()
    cleanups.push(() => removeDir(dir))
    const file = join(dir, 'db.json')
    const disk = faultyFileSystem()
    const store = await openJsonFileStore(file, { fs: disk.fs, probeEveryMs: 50 })
    cleanups.push(() => store.close())
    const events = watched(store)
    const { metrics, send } = instrumented(store)
    expect(await send('POST', '/api/v1/artists', { name: 'Spinetta' })).toBe(201)
    let text = await metrics.scrape()
    expect(sample(text, 'rock_legends_store_up')).toBe(1)
    expect(sample(text, 'rock_legends_store_unavailable_total')).toBe(0)

    disk.arm({ step: 'sync', code: 'ENOSPC', target: 'journal' })
    const statuses = [
      await send('POST', '/api/v1/artists', { name: 'Pappo' }),
      await send('PUT', '/api/v1/artists/1', { name: 'Luis Alberto Spinetta' }),
      // Reads are served from memory meanwhile, and are no refusal.
      await send('GET', '/api/v1/artists/1'),
      await send('POST', '/api/v1/artists', { name: 'Fito' }),
    ]
    expect(statuses).toEqual([503, 503, 200, 503])
    text = await metrics.scrape()
    expect(sample(text, 'rock_legends_store_up')).toBe(0)
    expect(sample(text, 'rock_legends_store_unavailable_total')).toBe(3)
    expect(sample(text, 'rock_legends_store_commit_failures_total')).toBe(3)
    // One transition however many refusals, with the cause.
    expect(events).toHaveLength(1)
    expect(events[0]).toContain('away: the change could not be saved: ENOSPC')
    // The probe keeps trying while the disk is full: still away, still one event.
    const refused = disk.state.attempts
    expect(await until(() => disk.state.attempts >= refused + 2, 2000)).toBe(true)
    expect(store.availability?.up).toBe(false)
    // Its commits are nobody's writes: not counted as failed ones.
    expect(sample(metrics.render(), 'rock_legends_store_commit_failures_total')).toBe(3)
    const commits = sample(metrics.render(), 'rock_legends_store_commits_total')

    // The disk has room again: no request needed for the store to be found back.
    disk.clear()
    expect(await until(() => store.availability?.up === true, 2000)).toBe(true)
    expect(events.slice(1)).toEqual(['back'])
    text = await metrics.scrape()
    expect(sample(text, 'rock_legends_store_up')).toBe(1)
    expect(sample(text, 'rock_legends_store_commits_total')).toBe(commits)
    expect(await send('POST', '/api/v1/artists', { name: 'Pappo' })).toBe(201)
    // The probe's commit is a journal line of the counters alone, which changes nothing when replayed.
    const lines = readFileSync(`${file}.journal`, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
    expect(lines.some((line) => Object.keys(line).join() === 'counters')).toBe(true)
    await store.close()
    const reopened = await openJsonFileStore(file)
    cleanups.push(() => reopened.close())
    const page = await reopened.artists.list({ limit: 10, offset: 0 })
    expect(page.items.map((artist) => artist.name)).toEqual(['Spinetta', 'Pappo'])
    expect(await reopened.artists.insert({ name: 'Charly' })).toMatchObject({ id: 3 })
  })
})

describe('store_up over PostgreSQL', () => {
  const skip = skipWithoutPostgres()
  let stopped: TestPostgres | undefined
  // This process's own server: never leave it stopped for the next test.
  afterAll(() => stopped?.start())

  test.skipIf(skip)(
    'a scrape finds an idle database gone; every 503 is counted, failed commits too; back by itself',
    async () => {
      const postgres = await ownPostgres()
      const store: SqlStore = await openSqlStore(postgres.url(await postgres.freshDatabase()), {
        pool: 2,
        waitMs: 2000,
        probeEveryMs: 100,
      })
      cleanups.push(() => store.close())
      const events = watched(store)
      const { metrics, send } = instrumented(store)
      expect(await send('POST', '/api/v1/artists', { name: 'Spinetta' })).toBe(201)
      expect(sample(await metrics.scrape(), 'rock_legends_store_up')).toBe(1)

      postgres.stop('fast')
      stopped = postgres
      // No request: the scrape itself asks the database, and finds it gone.
      let text = await metrics.scrape()
      expect(sample(text, 'rock_legends_store_up')).toBe(0)
      expect(events).toHaveLength(1)
      expect(events[0]).toMatch(/^away: the database at .* (is unavailable|cannot serve)/)

      // Reads, writes, health checks: each refusal counted, whatever step met the outage.
      const requests: [string, string, unknown?][] = [
        ['GET', '/api/v1/artists'],
        ['GET', '/api/v1/artists/1'],
        ['POST', '/api/v1/artists', { name: 'Pappo' }],
        ['PUT', '/api/v1/artists/1', { name: 'Luis Alberto Spinetta' }],
        ['POST', '/api/v1/user/signup', { name: 'Ana', email: 'ana@rock-legends.com', password: 'long enough' }],
        ['GET', '/healthz'],
        ['GET', '/livez'],
      ]
      const statuses = []
      for (const [method, path, body] of requests) statuses.push(await send(method, path, body))
      expect(statuses).toEqual([503, 503, 503, 503, 503, 503, 200])
      // Writes that reach their commit while the database is away are failed commits. The requests above were
      // refused before theirs (a credential's brake is read first, the artist before its replacement): that is what
      // the refusals' counter is for. So to the store directly.
      await expect(store.artists.insert({ name: 'Fito' })).rejects.toThrow('unavailable')
      await expect(store.users.update(1, { disabledAt: new Date().toISOString() })).rejects.toThrow('unavailable')
      text = await metrics.scrape()
      expect(sample(text, 'rock_legends_store_up')).toBe(0)
      expect(sample(text, 'rock_legends_store_unavailable_total')).toBe(6)
      expect(sample(text, 'rock_legends_store_commit_failures_total')).toBe(2)
      expect(events).toHaveLength(1)

      postgres.start()
      stopped = undefined
      // Found back by the probe, with no request.
      expect(await until(() => store.availability.up, 10_000)).toBe(true)
      expect(events.slice(1)).toEqual(['back'])
      text = await metrics.scrape()
      expect(sample(text, 'rock_legends_store_up')).toBe(1)
      expect(await send('POST', '/api/v1/artists', { name: 'Pappo' })).toBe(201)
      expect(sample(metrics.render(), 'rock_legends_store_unavailable_total')).toBe(6)
    },
    60_000,
  )

  test.skipIf(skip)('a refusal the database answered is no failed commit, and no outage', async () => {
    const postgres = await ownPostgres()
    const store: SqlStore = await openSqlStore(postgres.url(await postgres.freshDatabase()), { pool: 2, waitMs: 2000 })
    cleanups.push(() => store.close())
    const events = watched(store)
    const { metrics, send } = instrumented(store)
    const ana = { name: 'Ana', email: 'ana@rock-legends.com', password: 'long enough' }
    expect(await send('POST', '/api/v1/user/signup', ana)).toBe(201)
    expect(await send('POST', '/api/v1/user/signup', ana)).toBe(409)
    expect(await send('POST', '/api/v1/artists', { name: 'Spinetta' })).toBe(201)
    const text = metrics.render()
    expect(sample(text, 'rock_legends_store_commit_failures_total')).toBe(0)
    expect(sample(text, 'rock_legends_store_up')).toBe(1)
    expect(events).toEqual([])
  })
})
