/**
 * The database goes away while two replicas serve under load, then comes back: every request is answered within a
 * few seconds (503 `database-unavailable` with `Retry-After` while it is away), `/healthz` says why, no replica
 * exits, service resumes by itself, and every write that was acknowledged is there afterwards, none half-made.
 */
import { afterAll, describe, expect, test } from 'bun:test'
import { type RunningBinary, startBinary } from '../support/binary.ts'
import { ownPostgres, skipWithoutPostgres } from '../support/postgres.ts'

const skip = skipWithoutPostgres()
const KEY = 'outage-test-key'
const running: RunningBinary[] = []

afterAll(async () => {
  await Promise.all(running.map((replica) => replica.stop().catch(() => 0)))
})

interface Outcome {
  status: number
  ms: number
  id?: number
  name?: string
  retryAfter: string | null
  type?: string
}

/** Sends one request and records what came back and how long it took (a network failure is status 0). */
async function timed(url: string, init?: RequestInit): Promise<Outcome> {
  const started = performance.now()
  try {
    const response = await fetch(url, { ...init, signal: AbortSignal.timeout(20_000) })
    const body = (await response.json().catch(() => ({}))) as { id?: number; name?: string; type?: string }
    return {
      status: response.status,
      ms: performance.now() - started,
      id: body.id,
      name: body.name,
      type: body.type,
      retryAfter: response.headers.get('retry-after'),
    }
  } catch {
    return { status: 0, ms: performance.now() - started, retryAfter: null }
  }
}

/** Resolves once `condition` holds, asked again after each turn of the clients' requests; throws after 15 s. */
async function until(condition: () => boolean) {
  const deadline = Date.now() + 15_000
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('the load made no progress within 15 s')
    await Bun.sleep(10)
  }
}

describe.skipIf(skip)('the database stops and starts again under load', () => {
  test('answers within seconds throughout, 503 while it is away, then serves again; nothing acknowledged is lost', async () => {
    const postgres = await ownPostgres()
    const url = postgres.url(await postgres.freshDatabase())
    for (let i = 0; i < 2; i++)
      running.push(await startBinary(['--data', url, '--port', '0', '--api-key', KEY, '--log', 'off', '--seed']))
    const outcomes: Outcome[] = []
    let stop = false
    let sent = 0
    // Four clients, reading and writing in turn on both replicas, until told to stop. After a 503 a client sends its
    // next request 20 ms later, as a client retrying does: back to back, the four sent about 8,700 requests in the four
    // seconds of the outage, each answered at once, which checked no more than the hundreds they send now.
    const clients = Array.from({ length: 4 }, async (_, client) => {
      while (!stop) {
        const replica = running[(client + sent) % 2] as RunningBinary
        sent += 1
        const write = sent % 2 === 0
        const outcome = await timed(
          `${replica.url}/api/v1/artists${write ? '' : '/1'}`,
          write
            ? {
                method: 'POST',
                headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
                body: JSON.stringify({ name: `Load ${client}-${sent}` }),
              }
            : undefined,
        )
        outcomes.push(outcome)
        if (outcome.status === 503) await Bun.sleep(20)
      }
    })
    // Under load, with writes acknowledged on the way, before the database goes away for four seconds.
    await until(() => outcomes.filter((outcome) => outcome.status === 201).length >= 4)
    postgres.stop('fast')
    await Bun.sleep(4000)
    const health = await Promise.all(running.map((replica) => timed(`${replica.url}/healthz`)))
    postgres.start()
    // Service resumes by itself: within a few seconds both replicas answer reads and writes again.
    const resumed = await Promise.all(
      running.map(async (replica) => {
        const deadline = Date.now() + 15_000
        while (Date.now() < deadline) {
          const answer = await timed(`${replica.url}/api/v1/artists/1`)
          if (answer.status === 200) return true
          await Bun.sleep(200)
        }
        return false
      }),
    )
    // And writes acknowledged again once it is back, before the load stops.
    const before = outcomes.length
    await until(() => outcomes.slice(before).filter((outcome) => outcome.status === 201).length >= 4)
    stop = true
    await Promise.all(clients)

    expect(resumed).toEqual([true, true])
    for (const answer of health) {
      expect(answer.status).toBe(503)
      expect(answer.type).toBe('/problems/database-unavailable')
    }
    // Every request was answered, and within a few seconds, while the database was away too.
    expect(outcomes.every((outcome) => outcome.status !== 0)).toBe(true)
    expect(Math.max(...outcomes.map((outcome) => outcome.ms))).toBeLessThan(8000)
    const refused = outcomes.filter((outcome) => outcome.status === 503)
    expect(refused.length).toBeGreaterThan(0)
    for (const outcome of refused) {
      expect(outcome.type).toBe('/problems/database-unavailable')
      expect(Number(outcome.retryAfter)).toBeGreaterThan(0)
    }
    expect(outcomes.every((outcome) => [200, 201, 503].includes(outcome.status))).toBe(true)
    // No replica exited.
    for (const replica of running) expect(replica.process.exitCode).toBeNull()
    // Every acknowledged write is there, with what was sent; ids were never given twice.
    const acknowledged = outcomes.filter((outcome) => outcome.status === 201)
    expect(acknowledged.length).toBeGreaterThan(0)
    expect(new Set(acknowledged.map((outcome) => outcome.id)).size).toBe(acknowledged.length)
    const [first] = running as [RunningBinary]
    for (const outcome of acknowledged) {
      const stored = await timed(`${first.url}/api/v1/artists/${outcome.id}`)
      expect(stored.status).toBe(200)
      expect(stored.name).toBe(outcome.name as string)
    }
    // The list's total agrees with the rows: no half-made write counted or stored.
    const list = (await (await fetch(`${first.url}/api/v1/artists?limit=100&offset=0`)).json()) as {
      meta: { total: number }
    }
    expect(list.meta.total).toBeGreaterThanOrEqual(32 + acknowledged.length)
    const lastPage = (await (
      await fetch(`${first.url}/api/v1/artists?limit=1&offset=${list.meta.total - 1}`)
    ).json()) as { data: { id: number }[] }
    expect(lastPage.data).toHaveLength(1)
  }, 60_000)
})
