import { afterEach, describe, expect, test } from 'bun:test'
import { open } from 'node:fs/promises'
import { join } from 'node:path'
import { ACCOUNT_LIMITS } from '../../src/accounts/service.ts'
import { createApp } from '../../src/app.ts'
import { requestLog } from '../../src/http/request-log.ts'
import { LATENCY_BUCKETS } from '../../src/metrics/http-metrics.ts'
import { Metrics } from '../../src/metrics/metrics.ts'
import { answerScrape } from '../../src/metrics/serve-metrics.ts'
import { openStore } from '../../src/store/open-store.ts'
import type { Store } from '../../src/store/store.ts'
import { removeDir, tempDir } from '../support/binary.ts'
import { cheapPasswords } from '../support/passwords.ts'
import { skipWithoutPostgres, testPostgres } from '../support/postgres.ts'

// In-process: the counters move as requests are made through the whole app (`app.handle`), over a data file so that
// the journal's metrics move too. The text format itself is checked by a real parser against the executable
// (scrape.binary.test.ts); here a sample is found by its exact line.

const KEY = 'metrics-test-key'
const cleanups: (() => Promise<void> | void)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

/** The value of the sample `name{labels}` in `text` (labels in the order rendered), or undefined. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  const entries = Object.entries(labels)
  const prefix = `${name}${entries.length > 0 ? `{${entries.map(([k, v]) => `${k}="${v}"`).join(',')}}` : ''} `
  const line = text.split('\n').find((each) => each.startsWith(prefix))
  return line === undefined ? undefined : Number(line.slice(prefix.length))
}

async function instrumentedApp(options: { limit?: number } = {}) {
  const dir = tempDir()
  const store = await openStore(join(dir, 'db.json'))
  cleanups.push(
    () => removeDir(dir),
    () => store.close(),
  )
  const metrics = new Metrics()
  store.instrument?.(metrics.store)
  const limits = options.limit
    ? { ...ACCOUNT_LIMITS, credentialFailuresPerClient: { limit: options.limit, windowMs: 60_000 } }
    : undefined
  const app = createApp({ store, apiKeys: [KEY], metrics, passwords: cheapPasswords, limits, report: () => {} })
  const call = (path: string, init: RequestInit = {}) => app.handle(new Request(`http://localhost${path}`, init))
  const create = (name: string) =>
    call('/api/v1/artists', {
      method: 'POST',
      headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
      body: JSON.stringify({ name }),
    })
  return { app, store, metrics, call, create }
}

const GET_ARTIST = { method: 'GET', route: '/api/v1/artists/:artistId' }

describe('metrics in-process', () => {
  test('requests are counted by route template and status, never by raw path', async () => {
    const { metrics, call, create } = await instrumentedApp()
    expect((await create('Charly García')).status).toBe(201)
    for (const path of ['/api/v1/artists/1', '/api/v1/artists/1', '/api/v1/artists/999', '/api/v1/artists/x'])
      await call(path)
    await call('/no/such/path')
    await call('/another/unknown/path')
    const text = metrics.render()
    expect(sample(text, 'rock_legends_http_requests_total', { ...GET_ARTIST, status: '200' })).toBe(2)
    expect(sample(text, 'rock_legends_http_requests_total', { ...GET_ARTIST, status: '404' })).toBe(1)
    expect(sample(text, 'rock_legends_http_requests_total', { ...GET_ARTIST, status: '400' })).toBe(1)
    expect(
      sample(text, 'rock_legends_http_requests_total', { method: 'POST', route: '/api/v1/artists', status: '201' }),
    ).toBe(1)
    // Unknown paths share one label, whatever they are.
    expect(sample(text, 'rock_legends_http_requests_total', { method: 'GET', route: 'unmatched', status: '404' })).toBe(
      2,
    )
    expect(text).not.toContain('/api/v1/artists/1"')
    expect(text).not.toContain('/no/such/path')
    // Latency by status class: the two reads found apart from the two refused.
    const duration = 'rock_legends_http_request_duration_seconds'
    expect(sample(text, `${duration}_count`, { ...GET_ARTIST, code: '2xx' })).toBe(2)
    expect(sample(text, `${duration}_count`, { ...GET_ARTIST, code: '4xx' })).toBe(2)
    expect(sample(text, `${duration}_bucket`, { ...GET_ARTIST, code: '2xx', le: '+Inf' })).toBe(2)
    expect(sample(text, `${duration}_count`, { method: 'POST', route: '/api/v1/artists', code: '2xx' })).toBe(1)
    expect(sample(text, `${duration}_count`, { ...GET_ARTIST, code: '5xx' })).toBeUndefined()
  })

  test('latency buckets resolve from 50 µs to 10 s, 1–2.5–5 in every decade', () => {
    expect(LATENCY_BUCKETS).toEqual([
      0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
    ])
    // Each observation lands in the first bucket that holds it: a 70 µs read is not a 0.5 ms one.
    const metrics = new Metrics()
    for (const seconds of [0.00003, 0.00007, 0.0003, 0.0009, 0.02, 7, 20])
      metrics.http.record('GET', '/x', 200, seconds)
    const text = metrics.render()
    const bucket = (le: string) =>
      sample(text, 'rock_legends_http_request_duration_seconds_bucket', { method: 'GET', route: '/x', code: '2xx', le })
    expect(['0.00005', '0.0001', '0.00025', '0.0005', '0.001', '0.01', '0.025', '5', '10', '+Inf'].map(bucket)).toEqual(
      [1, 2, 2, 3, 4, 4, 5, 5, 6, 7],
    )
  })

  test('the status class covers every status, and no other value', () => {
    const metrics = new Metrics()
    for (const status of [101, 200, 204, 304, 308, 404, 429, 500, 503]) metrics.http.record('GET', '/x', status, 0.001)
    const text = metrics.render()
    const codes = new Set(
      text
        .split('\n')
        .filter((line) => line.startsWith('rock_legends_http_request_duration_seconds_count'))
        .map((line) => /code="([^"]*)"/.exec(line)?.[1]),
    )
    expect([...codes].sort()).toEqual(['1xx', '2xx', '3xx', '4xx', '5xx'])
    const count = (code: string) =>
      sample(text, 'rock_legends_http_request_duration_seconds_count', { method: 'GET', route: '/x', code })
    expect(['1xx', '2xx', '3xx', '4xx', '5xx'].map(count)).toEqual([1, 2, 2, 2, 2])
  })

  test('the store counts its commits, batch sizes, fsyncs and journal size', async () => {
    const { metrics, create } = await instrumentedApp()
    const before = metrics.render()
    expect(sample(before, 'rock_legends_store_commits_total')).toBe(0)
    expect(sample(before, 'rock_legends_journal_bytes')).toBe(0)
    // Ten creates at once share group commits: fewer commits than changes.
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => create(`Artist ${i}`)))
    expect(answers.map((answer) => answer.status)).toEqual(Array(10).fill(201))
    const after = metrics.render()
    const commits = sample(after, 'rock_legends_store_commits_total') as number
    expect(commits).toBeGreaterThanOrEqual(1)
    expect(commits).toBeLessThan(10)
    expect(sample(after, 'rock_legends_store_commit_changes_sum')).toBe(10)
    expect(sample(after, 'rock_legends_store_commit_changes_count')).toBe(commits)
    expect(sample(after, 'rock_legends_journal_fsync_seconds_count')).toBe(commits)
    expect(sample(after, 'rock_legends_journal_bytes')).toBeGreaterThan(0)
    expect(sample(after, 'rock_legends_data_file_bytes')).toBeGreaterThan(0)
    expect(sample(after, 'rock_legends_journal_compactions_total')).toBe(0)
  })

  test('refusals with 429 are counted by route', async () => {
    const { metrics, call } = await instrumentedApp({ limit: 2 })
    const statuses: number[] = []
    for (let i = 0; i < 4; i++)
      statuses.push((await call('/api/v1/artists', { method: 'POST', headers: { 'x-api-key': 'wrong' } })).status)
    expect(statuses).toEqual([401, 401, 429, 429])
    const text = metrics.render()
    expect(sample(text, 'rock_legends_rate_limit_refusals_total', { method: 'POST', route: '/api/v1/artists' })).toBe(2)
  })

  test('backups are counted through the hook the backup code calls, and start at 0', () => {
    const metrics = new Metrics()
    expect(sample(metrics.render(), 'rock_legends_backups_total')).toBe(0)
    expect(sample(metrics.render(), 'rock_legends_backup_failures_total')).toBe(0)
    expect(sample(metrics.render(), 'rock_legends_last_backup_timestamp_seconds')).toBeUndefined()
    metrics.backups.taken(1_700_000_000_000)
    metrics.backups.failed()
    expect(sample(metrics.render(), 'rock_legends_backups_total')).toBe(1)
    expect(sample(metrics.render(), 'rock_legends_backup_failures_total')).toBe(1)
    expect(sample(metrics.render(), 'rock_legends_last_backup_timestamp_seconds')).toBe(1_700_000_000)
  })

  test('the standard process metrics, under their standard names, with sane values', async () => {
    const metrics = new Metrics()
    const first = metrics.render()
    const before = Date.now() / 1000
    // 50 ms of this process's CPU (however long that takes on a busy machine), and 20 files held open, between two
    // scrapes.
    const dir = tempDir()
    cleanups.push(() => removeDir(dir))
    const spent = () => {
      const { user, system } = process.cpuUsage()
      return (user + system) / 1e6
    }
    const from = spent()
    let spin = 0
    while (spent() - from < 0.05 && Date.now() / 1000 - before < 10) spin += Math.sqrt(spin + 1)
    for (let i = 0; i < 20; i++) {
      const handle = await open(join(dir, `held-${i}`), 'w')
      cleanups.push(() => handle.close())
    }
    const second = metrics.render()
    const cpu = sample(second, 'process_cpu_seconds_total') as number
    expect(cpu).toBeGreaterThan(0)
    expect(cpu - (sample(first, 'process_cpu_seconds_total') as number)).toBeGreaterThanOrEqual(0.05)
    expect(second).toContain('# TYPE process_cpu_seconds_total counter')
    expect(sample(second, 'process_resident_memory_bytes')).toBeGreaterThan(1_000_000)
    expect(sample(second, 'process_resident_memory_bytes')).toBeLessThan(
      sample(second, 'process_virtual_memory_bytes') as number,
    )
    const openFds = sample(second, 'process_open_fds') as number
    expect(openFds).toBeGreaterThanOrEqual(23)
    // Other work of this process may open or close a few meanwhile.
    expect(openFds - (sample(first, 'process_open_fds') as number)).toBeGreaterThanOrEqual(15)
    expect(openFds).toBeLessThanOrEqual(sample(second, 'process_max_fds') as number)
    // As the kernel has it: the process started before this test, not long before (a test file starts a process).
    const started = sample(second, 'process_start_time_seconds') as number
    expect(started).toBeLessThan(before + 1)
    expect(started).toBeGreaterThan(before - 3600)
    expect(Math.abs(started - performance.timeOrigin / 1000)).toBeLessThan(5)
    for (const name of ['resident_memory_bytes', 'virtual_memory_bytes', 'open_fds', 'max_fds', 'start_time_seconds'])
      expect(second).toContain(`# TYPE process_${name} gauge`)
    // The engine's own figures keep the server's prefix; the standard ones are not doubled under it.
    expect(sample(second, 'rock_legends_process_heap_used_bytes')).toBeGreaterThan(0)
    expect(second).not.toContain('rock_legends_process_resident_memory_bytes')
    expect(second).not.toContain('rock_legends_process_start_time_seconds')
    expect(spin).toBeGreaterThan(0)
  })

  test('the listener answers GET /metrics only', async () => {
    const metrics = new Metrics()
    const scrape = await answerScrape(metrics, new Request('http://127.0.0.1:9464/metrics'))
    expect(scrape.status).toBe(200)
    expect(scrape.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8')
    expect(await scrape.text()).toContain('# TYPE rock_legends_http_requests_total counter')
    expect((await answerScrape(metrics, new Request('http://127.0.0.1:9464/'))).status).toBe(404)
    expect((await answerScrape(metrics, new Request('http://127.0.0.1:9464/metrics/x'))).status).toBe(404)
    const post = await answerScrape(metrics, new Request('http://127.0.0.1:9464/metrics', { method: 'POST' }))
    expect(post.status).toBe(405)
  })
})

describe('metrics off', () => {
  test('nothing is hooked: without a log and metrics, the request log adds no hook at all', () => {
    const { hooks } = requestLog(undefined, () => 'in-process', undefined)
    const events = hooks.event as Record<string, unknown[] | undefined>
    expect(Object.values(events).filter((list) => (list?.length ?? 0) > 0)).toEqual([])
  })

  test('routes do not even read their template when metrics are off; they do when on', async () => {
    const dir = tempDir()
    cleanups.push(() => removeDir(dir))
    for (const metrics of [undefined, new Metrics()]) {
      const store = await openStore(':memory:')
      const app = createApp({ store, metrics })
      const route = app.routes.find((each) => each.method === 'GET' && each.path === '/api/v1/artists/:artistId')
      const compiled = String((route as unknown as { compile(): unknown }).compile())
      expect(compiled.includes('c.route='), `metrics ${metrics ? 'on' : 'off'}`).toBe(metrics !== undefined)
      await store.close()
    }
  })
})

describe('metrics over PostgreSQL', () => {
  const skip = skipWithoutPostgres()
  test.skipIf(skip)('commits and the pool in use and waiting are counted', async () => {
    const postgres = await testPostgres()
    // An empty database with the schema, one an earlier test emptied if there is one (no new copy of the template),
    // emptied again once the store is closed (after the cleanups).
    const store: Store = await openStore(postgres.url(await postgres.emptyDatabase()), { pool: 2, waitMs: 5000 })
    cleanups.push(() => store.close())
    const metrics = new Metrics()
    store.instrument?.(metrics.store)
    const idle = metrics.render()
    expect(sample(idle, 'rock_legends_db_pool_connections_max')).toBe(2)
    expect(sample(idle, 'rock_legends_db_pool_connections_in_use')).toBe(0)
    expect(sample(idle, 'rock_legends_db_pool_operations_waiting')).toBe(0)
    expect(idle).not.toContain('rock_legends_journal_bytes')
    // Six reads at once on a pool of two: two run, four wait.
    const reads = Array.from({ length: 6 }, () => store.artists.list({ limit: 5, offset: 0 }))
    const busy = metrics.render()
    expect(sample(busy, 'rock_legends_db_pool_connections_in_use')).toBe(2)
    expect(sample(busy, 'rock_legends_db_pool_operations_waiting')).toBe(4)
    await Promise.all(reads)
    await Promise.all([store.artists.insert({ name: 'Spinetta' }), store.artists.insert({ name: 'Fito' })])
    await store.users.insert({
      email: 'metrics@example.com',
      name: 'M',
      passwordHash: 'x',
      createdAt: new Date().toISOString(),
      disabledAt: null,
    })
    const after = metrics.render()
    expect(sample(after, 'rock_legends_db_pool_connections_in_use')).toBe(0)
    expect(sample(after, 'rock_legends_store_commits_total')).toBeGreaterThanOrEqual(2)
    expect(sample(after, 'rock_legends_store_commit_changes_sum')).toBe(3)
  })
})
