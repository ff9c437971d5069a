import { afterEach, beforeAll, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { ensureBinary, freePort, type RunningBinary, removeDir, startBinary, tempDir } from '../support/binary.ts'
import { type ParsedFamily, parsePrometheusText, skipWithoutPrometheusParser } from './prometheus-parser.ts'

// The compiled executable with --metrics: scraped over HTTP on its own port, and the text read by the official
// Python client's parser. Checks the naming conventions, HELP and TYPE of every family, the histograms' buckets, the
// route label (a template, never a raw path) and that the API's port does not serve /metrics.

const KEY = 'metrics-binary-key'
const skip = skipWithoutPrometheusParser('the scrape of the executable with a Prometheus parser')
const dirs: string[] = []
const running: RunningBinary[] = []
beforeAll(() => ensureBinary(), 120_000)
afterEach(async () => {
  await Promise.all(running.splice(0).map((server) => server.stop('SIGKILL')))
  for (const dir of dirs.splice(0)) removeDir(dir)
})

async function start(metrics: string, extra: (dir: string) => string[] = () => []) {
  const dir = tempDir()
  dirs.push(dir)
  const args = ['--port', '0', '--data', join(dir, 'db.json'), '--seed', '--log', 'off', '--api-key', KEY]
  const server = await startBinary([...args, '--metrics', metrics, ...extra(dir)])
  running.push(server)
  return server
}

const family = (families: ParsedFamily[], name: string) => families.find((each) => each.name === name)

describe.skipIf(skip)('/metrics of the executable', () => {
  test('parses as Prometheus text, with the conventions, and counts by route template', async () => {
    const port = freePort()
    const server = await start(String(port))
    for (const path of ['/api/v1/artists/1', '/api/v1/artists/1', '/api/v1/artists/2', '/api/v1/artists/99999'])
      await (await fetch(`${server.url}${path}`)).arrayBuffer()
    await (await fetch(`${server.url}/no/such/path`)).arrayBuffer()
    const created = await fetch(`${server.url}/api/v1/artists`, {
      method: 'POST',
      headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Pappo' }),
    })
    expect(created.status).toBe(201)

    // The API's port does not serve the metrics; their own port does, on loopback.
    expect((await fetch(`${server.url}/metrics`)).status).toBe(404)
    const scrape = await fetch(`http://127.0.0.1:${port}/metrics`)
    expect(scrape.status).toBe(200)
    expect(scrape.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8')
    const text = await scrape.text()
    const families = parsePrometheusText(text)

    // Names: the prefix (or the standard process metrics' own), snake case, base units; counters end in _total; every
    // family has HELP and TYPE.
    expect(families.length).toBeGreaterThan(15)
    for (const each of families) {
      expect(each.name).toMatch(/^(rock_legends|process)_[a-z][a-z0-9_]*$/)
      expect(each.name).not.toMatch(/_(ms|milliseconds|kb|mb|kib|mib|minutes|hours)(_|$)/)
      expect(each.help, each.name).not.toBe('')
      expect(['counter', 'gauge', 'histogram'], each.name).toContain(each.type)
      expect(text, each.name).toContain(`# HELP ${each.name}`)
      expect(text, each.name).toContain(`# TYPE ${each.name}${each.type === 'counter' ? '_total' : ''} ${each.type}`)
      for (const sample of each.samples) {
        if (each.type === 'counter') expect(sample.name).toBe(`${each.name}_total`)
        if (each.type === 'gauge') expect(sample.name).not.toEndWith('_total')
        if (/duration|fsync|seconds|time/.test(each.name)) expect(each.name).toMatch(/_seconds$/)
      }
    }
    expect(text).toEndWith('\n')

    // Histograms: buckets cumulative, the last `+Inf` and equal to `_count`.
    const histograms = families.filter((each) => each.type === 'histogram')
    expect(histograms.map((each) => each.name)).toContain('rock_legends_http_request_duration_seconds')
    for (const histogram of histograms) {
      const series = new Map<string, { les: string[]; counts: number[]; count?: number }>()
      for (const sample of histogram.samples) {
        const { le, ...rest } = sample.labels
        const key = JSON.stringify(rest)
        const entry = series.get(key) ?? { les: [], counts: [] }
        series.set(key, entry)
        if (sample.name.endsWith('_bucket')) {
          entry.les.push(le as string)
          entry.counts.push(sample.value)
        } else if (sample.name.endsWith('_count')) entry.count = sample.value
      }
      for (const [key, { les, counts, count }] of series) {
        expect(les.at(-1), `${histogram.name} ${key}`).toBe('+Inf')
        expect(counts.at(-1), `${histogram.name} ${key}`).toBe(count as number)
        const bounds = les.slice(0, -1).map(Number)
        expect(bounds, histogram.name).toEqual([...bounds].sort((a, b) => a - b))
        for (let i = 1; i < counts.length; i++)
          expect(counts[i] as number, histogram.name).toBeGreaterThanOrEqual(counts[i - 1] as number)
      }
    }

    // Requests by route template and status; raw paths never become labels.
    const requests = family(families, 'rock_legends_http_requests')
    const count = (labels: Record<string, string>) =>
      requests?.samples.find((sample) => JSON.stringify(sample.labels) === JSON.stringify(labels))?.value
    expect(count({ method: 'GET', route: '/api/v1/artists/:artistId', status: '200' })).toBe(3)
    expect(count({ method: 'GET', route: '/api/v1/artists/:artistId', status: '404' })).toBe(1)
    expect(count({ method: 'GET', route: 'unmatched', status: '404' })).toBe(2)
    expect(count({ method: 'POST', route: '/api/v1/artists', status: '201' })).toBe(1)
    const routes = new Set(requests?.samples.map((sample) => sample.labels.route))
    for (const route of routes) expect(route === 'unmatched' || /^\/[^\s]*$/.test(route as string), route).toBe(true)
    expect([...routes].filter((route) => /\/\d+(\/|$)/.test(route as string))).toEqual([])

    // The store, the journal, backups, memory: all there, moved where they should have.
    const value = (name: string) => family(families, name)?.samples[0]?.value
    expect(value('rock_legends_store_commits')).toBeGreaterThanOrEqual(1)
    expect(value('rock_legends_journal_bytes')).toBeGreaterThan(0)
    expect(value('rock_legends_backups')).toBe(0)
    expect(value('rock_legends_backup_failures')).toBe(0)
    // No schedule: neither its interval nor a last backup.
    expect(family(families, 'rock_legends_backup_interval_seconds')?.samples).toEqual([])
    expect(value('rock_legends_store_up')).toBe(1)
    expect(value('rock_legends_store_unavailable')).toBe(0)
    expect(family(families, 'rock_legends_journal_fsync_seconds')?.type).toBe('histogram')
    // The latency histogram's status class; the standard process metrics, typed as the official clients type them.
    const codes = family(families, 'rock_legends_http_request_duration_seconds')?.samples.map(
      (each) => each.labels.code,
    )
    expect([...new Set(codes)].sort()).toEqual(['2xx', '4xx'])
    expect(family(families, 'process_cpu_seconds')?.type).toBe('counter')
    expect(value('process_cpu_seconds')).toBeGreaterThan(0)
    expect(value('process_resident_memory_bytes')).toBeGreaterThan(1_000_000)
    expect(value('process_open_fds')).toBeLessThanOrEqual(value('process_max_fds') as number)
    expect(Math.abs((value('process_start_time_seconds') as number) - Date.now() / 1000)).toBeLessThan(120)
  })

  test('scheduled backups are counted as they are written', async () => {
    const port = freePort()
    await start(String(port), (dir) => ['--backup-every', '1s', '--backup-dir', join(dir, 'backups')])
    const scrape = async (name: string) =>
      family(parsePrometheusText(await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()), name)?.samples[0]
        ?.value
    for (let i = 0; i < 100 && !((await scrape('rock_legends_backups')) ?? 0); i++) await Bun.sleep(100)
    expect(await scrape('rock_legends_backups')).toBeGreaterThanOrEqual(1)
    expect(await scrape('rock_legends_backup_failures')).toBe(0)
    expect(await scrape('rock_legends_backup_interval_seconds')).toBe(1)
    const last = (await scrape('rock_legends_last_backup_timestamp_seconds')) as number
    expect(Math.abs(last - Date.now() / 1000)).toBeLessThan(60)
  }, 30_000)

  test('the namespaces of --fixtures are counted, with what they hold and their budget', async () => {
    const port = freePort()
    const server = await start(String(port), () => ['--fixtures', '--fixtures-memory', '32'])
    const scrape = async (name: string) =>
      family(parsePrometheusText(await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()), name)?.samples[0]
        ?.value
    expect(await scrape('rock_legends_fixtures_namespaces')).toBe(0)
    expect(await scrape('rock_legends_fixtures_budget_bytes')).toBe(32 * 2 ** 20)
    for (const ns of ['one', 'two'])
      await fetch(`${server.url}/api/v1/artists`, {
        method: 'POST',
        headers: { 'x-api-key': KEY, 'content-type': 'application/json', 'rock-legends-namespace': ns },
        body: JSON.stringify({ name: 'Charly García', description: 'x'.repeat(5000) }),
      })
    expect(await scrape('rock_legends_fixtures_namespaces')).toBe(2)
    expect(await scrape('rock_legends_fixtures_bytes')).toBeGreaterThan(2 * 2 * 5000)
  })

  test('a port alone is on loopback, and the listener answers nothing but /metrics', async () => {
    const port = freePort()
    await start(String(port))
    expect((await fetch(`http://127.0.0.1:${port}/metrics`)).status).toBe(200)
    expect((await fetch(`http://127.0.0.1:${port}/`)).status).toBe(404)
    expect((await fetch(`http://127.0.0.1:${port}/api/v1/artists`)).status).toBe(404)
    expect((await fetch(`http://127.0.0.1:${port}/metrics`, { method: 'POST' })).status).toBe(405)
  })
})
