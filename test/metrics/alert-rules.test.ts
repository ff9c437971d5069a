import { afterAll, describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { createApp } from '../../src/app.ts'
import { Metrics } from '../../src/metrics/metrics.ts'
import { openJsonFileStore } from '../../src/store/json-file/json-file.ts'
import { removeDir, tempDir } from '../support/binary.ts'
import { promtool, RULE_TESTS, RULES, skipWithoutPrometheus } from './prometheus-server.ts'

// The alert rules of docs/prometheus/: checked by promtool, unit-tested by promtool against their test file, and that
// test file held to the server: every input series in it is named and labelled exactly as the server emits it (plus
// the instance and job labels Prometheus adds), and every metric the rules name is one the server emits. So the rules
// cannot drift from the metrics without a test failing.

const skip = skipWithoutPrometheus('the alert rules checked and unit-tested by promtool')
const dirs: string[] = []
afterAll(() => {
  for (const dir of dirs) removeDir(dir)
})

interface Rules {
  groups: { name: string; rules: { alert: string; expr: string }[] }[]
}
interface RuleTests {
  tests: {
    name: string
    input_series: { series: string }[]
    alert_rule_test: { alertname: string; exp_alerts: unknown[] }[]
  }[]
}

const rules = Bun.YAML.parse(readFileSync(RULES, 'utf8')) as Rules
const ruleTests = Bun.YAML.parse(readFileSync(RULE_TESTS, 'utf8')) as RuleTests
const alerts = rules.groups.flatMap((group) => group.rules.map((rule) => rule.alert))

/** A series as `name{label="value",…}`, in the text format or PromQL's series notation. */
interface Series {
  name: string
  labels: Record<string, string>
}

function parseSeries(text: string): Series {
  const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?$/.exec(text.trim())
  if (!match) throw new Error(`not a series: ${text}`)
  const labels: Record<string, string> = {}
  for (const [, name, value] of (match[2] ?? '').matchAll(/([a-zA-Z_]\w*)="((?:[^"\\]|\\.)*)"/g))
    labels[name as string] = value as string
  return { name: match[1] as string, labels }
}

/**
 * Every sample the server renders, from a data file store with requests made, backups scheduled, a pool and a
 * certificate.
 */
async function serverSamples(): Promise<{ samples: Series[]; families: Set<string>; routes: Set<string> }> {
  const dir = tempDir()
  dirs.push(dir)
  const store = await openJsonFileStore(join(dir, 'db.json'))
  const metrics = new Metrics()
  store.instrument?.(metrics.store)
  // What a database adds (its pool), and a schedule of backups with one written: every family has its series.
  metrics.store.poolOf(2)
  metrics.backups.scheduled(3_600_000)
  metrics.backups.taken()
  // And an HTTPS server's certificate.
  metrics.tls.served(new Date(Date.now() + 30 * 86_400_000))
  const app = createApp({ store, apiKeys: ['key'], metrics, report: () => {} })
  const created = await app.handle(
    new Request('http://localhost/api/v1/artists', {
      method: 'POST',
      headers: { 'x-api-key': 'key', 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Spinetta' }),
    }),
  )
  expect(created.status).toBe(201)
  const text = metrics.render()
  await store.close()
  const samples = text
    .split('\n')
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => parseSeries(line.slice(0, line.lastIndexOf(' '))))
  const families = new Set([...text.matchAll(/^# TYPE (\S+) /gm)].map((match) => match[1] as string))
  return { samples, families, routes: new Set(app.routes.map((route) => route.path)) }
}

/** The label names of `labels` but those Prometheus adds to every series of a target, sorted. */
const ownLabels = (labels: Record<string, string>) =>
  Object.keys(labels)
    .filter((name) => name !== 'instance' && name !== 'job')
    .sort()
    .join(',')

describe.skipIf(skip)('the alert rules of docs/prometheus/', () => {
  test('promtool finds them valid', () => {
    const { code, output } = promtool(['check', 'rules', RULES])
    expect({ code, output }).toEqual({
      code: 0,
      output: expect.stringContaining(`SUCCESS: ${alerts.length} rules found`),
    })
  })

  test("promtool's unit tests pass, and show every alert firing and quiet", () => {
    const { code, output } = promtool(['test', 'rules', RULE_TESTS])
    expect({ code, output }).toEqual({ code: 0, output: expect.stringContaining('SUCCESS') })
    const cases = ruleTests.tests.flatMap((each) => each.alert_rule_test)
    for (const alert of alerts) {
      const mine = cases.filter((each) => each.alertname === alert)
      expect({ alert, fires: mine.some((each) => each.exp_alerts.length > 0) }).toEqual({ alert, fires: true })
      expect({ alert, quiet: mine.some((each) => each.exp_alerts.length === 0) }).toEqual({ alert, quiet: true })
    }
  })

  test('the unit tests feed series named and labelled as the server emits them', async () => {
    const { samples, routes } = await serverSamples()
    const inputs = ruleTests.tests.flatMap((each) => each.input_series.map((input) => parseSeries(input.series)))
    expect(inputs.length).toBeGreaterThan(50)
    for (const input of inputs) {
      // Prometheus's own series of each target, as it scrapes it.
      if (input.name === 'up') continue
      expect(input.labels, input.name).toMatchObject({ instance: expect.any(String), job: 'rock-legends' })
      const emitted = samples.filter((sample) => sample.name === input.name)
      expect({ name: input.name, emitted: emitted.length > 0 }).toEqual({ name: input.name, emitted: true })
      const shapes = new Set(emitted.map((sample) => ownLabels(sample.labels)))
      expect({ name: input.name, labels: ownLabels(input.labels) }).toEqual({
        name: input.name,
        labels: [...shapes][0] as string,
      })
      const { method, route, status, code } = input.labels
      if (method !== undefined)
        expect(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'other']).toContain(method)
      if (route !== undefined) expect(routes.has(route) || route === 'unmatched', route).toBe(true)
      if (status !== undefined) expect(status).toMatch(/^[1-5]\d\d$/)
      if (code !== undefined) expect(['1xx', '2xx', '3xx', '4xx', '5xx']).toContain(code)
    }
    // A histogram's series carry every bucket the server has, the same bounds written the same way.
    const buckets = new Map<string, Set<string>>()
    for (const input of inputs.filter((each) => each.name.endsWith('_bucket'))) {
      const { le, ...rest } = input.labels
      const key = `${input.name}${JSON.stringify(rest)}`
      buckets.set(key, (buckets.get(key) ?? new Set()).add(le as string))
    }
    expect(buckets.size).toBeGreaterThan(0)
    for (const [key, les] of buckets) {
      const name = key.slice(0, key.indexOf('{'))
      const emitted = new Set(samples.filter((each) => each.name === name).map((each) => each.labels.le))
      expect({ key, les: [...les].sort() }).toEqual({ key, les: [...emitted].sort() as string[] })
    }
  })

  test('every metric the rules name is one the server emits', async () => {
    const { samples, families } = await serverSamples()
    // Their series, and the families the annotations point to.
    const names = new Set([...samples.map((sample) => sample.name), ...families])
    const named = new Set(readFileSync(RULES, 'utf8').match(/\b(?:rock_legends|process)_[a-z0-9_]+/g))
    expect(named.size).toBeGreaterThan(5)
    for (const name of named) expect({ name, emitted: names.has(name) }).toEqual({ name, emitted: true })
  })
})
