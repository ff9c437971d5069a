import { afterEach, beforeAll, describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { ensureBinary, freePort, type RunningBinary, removeDir, startBinary, tempDir } from '../support/binary.ts'
import { RULES, type RunningPrometheus, skipWithoutPrometheus, startPrometheus } from './prometheus-server.ts'

// The executable with --metrics, scraped by a real Prometheus configured as docs/operations.md shows (its
// prometheus.yml block, with this test's ports and a one-second interval), the alert rules of docs/prometheus/ loaded:
// Prometheus's own HTTP API then answers what the server said, the requests this test made, and that every rule
// evaluates.

const KEY = 'prometheus-binary-key'
const skip = skipWithoutPrometheus('the executable scraped by a real Prometheus')
const dirs: string[] = []
const running: { stop(): Promise<unknown> }[] = []
beforeAll(() => ensureBinary(), 120_000)
afterEach(async () => {
  await Promise.all(running.splice(0).map((each) => each.stop()))
  for (const dir of dirs.splice(0)) removeDir(dir)
})

/** A vector query's results: labels and value. */
type Vector = { metric: Record<string, string>; value: [number, string] }[]

/** Asks `query` until `accept` takes its answer, for at most 20 s; the last answer. */
async function queried(prometheus: RunningPrometheus, query: string, accept: (vector: Vector) => boolean) {
  const deadline = Date.now() + 20_000
  for (;;) {
    const { result } = await prometheus.api<{ result: Vector }>('query', { query })
    if (accept(result) || Date.now() > deadline) return result
    await Bun.sleep(250)
  }
}

/** The prometheus.yml of docs/operations.md, scraping `target` every second, with the rules of this repository. */
function documentedConfig(target: string): string {
  const page = readFileSync(join(import.meta.dir, '../../docs/operations.md'), 'utf8')
  const documented = /^```yaml\n([\s\S]*?)^```$/m.exec(page)?.[1] ?? ''
  expect(documented).toContain("targets: ['127.0.0.1:9464']")
  expect(documented).toContain('- rock-legends-alerts.yml')
  return documented
    .replaceAll('15s', '1s')
    .replace('127.0.0.1:9464', target)
    .replace('- rock-legends-alerts.yml', `- ${RULES}`)
}

describe.skipIf(skip)('a real Prometheus scraping the executable', () => {
  test('sees the store up and the requests made, and evaluates every alert rule without error', async () => {
    const dir = tempDir()
    dirs.push(dir)
    const port = freePort()
    const server: RunningBinary = await startBinary([
      ...['--port', '0', '--data', join(dir, 'db.json'), '--seed', '--log', 'off', '--api-key', KEY],
      ...['--metrics', `127.0.0.1:${port}`],
    ])
    running.push(server)
    for (let i = 0; i < 3; i++) await (await fetch(`${server.url}/api/v1/artists/1`)).arrayBuffer()
    await (await fetch(`${server.url}/api/v1/artists/99999`)).arrayBuffer()

    const prometheus = await startPrometheus(dir, documentedConfig(`127.0.0.1:${port}`))
    running.push(prometheus)
    const instance = { instance: `127.0.0.1:${port}`, job: 'rock-legends' }

    const up = await queried(prometheus, 'rock_legends_store_up', (vector) => vector.length > 0)
    expect(up.map(({ metric, value }) => ({ metric, value: value[1] }))).toEqual([
      { metric: { __name__: 'rock_legends_store_up', ...instance }, value: '1' },
    ])
    const reads = await queried(
      prometheus,
      'rock_legends_http_requests_total{route="/api/v1/artists/:artistId"}',
      (vector) => vector.length === 2,
    )
    expect(Object.fromEntries(reads.map(({ metric, value }) => [metric.status, value[1]]))).toEqual({
      '200': '3',
      '404': '1',
    })
    // The latency of those reads by status class, and the standard process metrics, as Prometheus stored them.
    const byCode = await queried(
      prometheus,
      'sum by (code) (rock_legends_http_request_duration_seconds_count{route="/api/v1/artists/:artistId"})',
      (vector) => vector.length === 2,
    )
    expect(Object.fromEntries(byCode.map(({ metric, value }) => [metric.code, value[1]]))).toEqual({
      '2xx': '3',
      '4xx': '1',
    })
    const cpu = await queried(prometheus, 'process_cpu_seconds_total', (vector) => vector.length > 0)
    expect(Number(cpu[0]?.value[1])).toBeGreaterThan(0)
    const target = await prometheus.api<{ activeTargets: { health: string; lastError: string }[] }>('targets')
    expect(target.activeTargets.map(({ health, lastError }) => ({ health, lastError }))).toEqual([
      { health: 'up', lastError: '' },
    ])

    // The rules are loaded, each has been evaluated, none failed; and nothing fires on a healthy server.
    type Rule = { name: string; health: string; lastError?: string }
    let rules: Rule[] = []
    const deadline = Date.now() + 20_000
    while (Date.now() < deadline) {
      const { groups } = await prometheus.api<{ groups: { name: string; rules: Rule[] }[] }>('rules')
      rules = groups.flatMap((group) => group.rules)
      if (rules.length > 0 && rules.every((rule) => rule.health !== 'unknown')) break
      await Bun.sleep(250)
    }
    expect(rules.length).toBeGreaterThanOrEqual(9)
    for (const { name, health, lastError } of rules)
      expect({ name, health, lastError: lastError ?? '' }).toEqual({ name, health: 'ok', lastError: '' })
    const { alerts } = await prometheus.api<{ alerts: { labels: { alertname: string } }[] }>('alerts')
    expect(alerts.map((alert) => alert.labels.alertname)).toEqual([])
  }, 60_000)
})
