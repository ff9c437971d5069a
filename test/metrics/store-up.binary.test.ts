import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { ensureBinary, freePort, type RunningBinary, startBinary } from '../support/binary.ts'
import { ownPostgres, skipWithoutPostgres, type TestPostgres } from '../support/postgres.ts'

// Two executables over one PostgreSQL, one with --metrics and one without, while the database stops and starts again:
// each logs the outage's two ends, one line each however many requests it refused, and finds the database back by
// itself, with no request to tell it; the one with metrics says the same in rock_legends_store_up and counts every
// refusal.

const skip = skipWithoutPostgres()
const KEY = 'store-up-binary-key'
const running: RunningBinary[] = []
let stopped: TestPostgres | undefined
beforeAll(() => ensureBinary(), 120_000)
afterAll(async () => {
  stopped?.start()
  await Promise.all(running.map((server) => server.stop().catch(() => 0)))
})

/** The lines of a `--log json` stderr whose message starts with `start`. */
const lines = (stderr: string, start: string) =>
  stderr
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { level: string; message: string })
    .filter((line) => line.message.startsWith(start))

/** The value of the unlabelled sample `name` at `url`. */
async function scraped(url: string, name: string): Promise<number | undefined> {
  const text = await (await fetch(url)).text()
  const line = text.split('\n').find((each) => each.startsWith(`${name} `))
  return line === undefined ? undefined : Number(line.slice(name.length + 1))
}

describe.skipIf(skip)('the store away and back, in the log and the metrics of the executable', () => {
  test('one line as the database goes, one as it comes back by itself; store_up and refusals agree', async () => {
    const postgres = await ownPostgres()
    const url = postgres.url(await postgres.freshDatabase())
    const metricsPort = freePort()
    const args = ['--data', url, '--port', '0', '--api-key', KEY, '--log', 'json']
    const measured = await startBinary([...args, '--seed', '--metrics', `127.0.0.1:${metricsPort}`])
    running.push(measured)
    const plain = await startBinary(args)
    running.push(plain)
    const metrics = `http://127.0.0.1:${metricsPort}/metrics`
    expect(await scraped(metrics, 'rock_legends_store_up')).toBe(1)

    postgres.stop('fast')
    stopped = postgres
    const statuses: number[] = []
    for (const server of [measured, plain, measured, plain, measured])
      for (const path of ['/api/v1/artists/1', '/healthz'])
        statuses.push((await fetch(`${server.url}${path}`, { signal: AbortSignal.timeout(15_000) })).status)
    expect(statuses).toEqual(Array(10).fill(503))
    expect(await scraped(metrics, 'rock_legends_store_up')).toBe(0)
    expect(await scraped(metrics, 'rock_legends_store_unavailable_total')).toBe(6)

    postgres.start()
    stopped = undefined
    // No request to either: each finds the database back within its probe's 5 s. The one with metrics is not scraped
    // meanwhile either (a scrape asks the database too).
    await Bun.sleep(8000)
    expect(await scraped(metrics, 'rock_legends_store_up')).toBe(1)
    expect((await fetch(`${plain.url}/api/v1/artists/1`)).status).toBe(200)

    running.splice(0)
    expect(await Promise.all([measured.stop(), plain.stop()])).toEqual([0, 0])
    for (const server of [measured, plain]) {
      const stderr = await server.stderr()
      const away = lines(stderr, 'the store is away')
      const back = lines(stderr, 'the store is back')
      expect(away.map((line) => line.level)).toEqual(['error'])
      expect(away[0]?.message).toMatch(/^the store is away: the database at .*; requests that need it are refused/)
      expect(back.map((line) => line.level)).toEqual(['info'])
      expect(back[0]?.message).toMatch(/^the store is back after \d+\.\d s away$/)
      // The line came before the request after the restart: the probe found the database back, no request did.
      const backAt = stderr.indexOf('the store is back')
      const requestAfter = stderr.lastIndexOf('"path":"/api/v1/artists/1","status":200')
      if (server === plain) expect(backAt).toBeLessThan(requestAfter)
    }
  }, 60_000)
})
