import { afterEach, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { ACCOUNT_LIMITS } from '../../src/accounts/service.ts'
import { createApp } from '../../src/app.ts'
import { requestLog } from '../../src/http/request-log.ts'
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
    expect(sample(text, 'rock_legends_http_request_duration_seconds_count', GET_ARTIST)).toBe(4)
    expect(sample(text, 'rock_legends_http_request_duration_seconds_bucket', { ...GET_ARTIST, le: '+Inf' })).toBe(4)
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

  test('process memory is reported', () => {
    const text = new Metrics().render()
    expect(sample(text, 'rock_legends_process_resident_memory_bytes')).toBeGreaterThan(1_000_000)
    expect(sample(text, 'rock_legends_process_heap_used_bytes')).toBeGreaterThan(0)
  })

  test('the listener answers GET /metrics only', async () => {
    const metrics = new Metrics()
    const scrape = answerScrape(metrics, new Request('http://127.0.0.1:9464/metrics'))
    expect(scrape.status).toBe(200)
    expect(scrape.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8')
    expect(await scrape.text()).toContain('# TYPE rock_legends_http_requests_total counter')
    expect(answerScrape(metrics, new Request('http://127.0.0.1:9464/')).status).toBe(404)
    expect(answerScrape(metrics, new Request('http://127.0.0.1:9464/metrics/x')).status).toBe(404)
    expect(answerScrape(metrics, new Request('http://127.0.0.1:9464/metrics', { method: 'POST' })).status).toBe(405)
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
