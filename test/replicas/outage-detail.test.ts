/**
 * While PostgreSQL is away, what a client is told says only that the service is unavailable, and when to try again:
 * no host, port, database name or socket path, whichever route it asked, `/healthz` and `/readyz` included (`/livez`,
 * which never asks the database, stays 200). Where the database lives and why it failed go to the log, once when the
 * outage begins and at most once every 10 seconds after, with the count of requests refused meanwhile: a flood of
 * anonymous requests is not a flood of log lines.
 */
import { afterAll, describe, expect, test } from 'bun:test'
import { createApp } from '../../src/app.ts'
import { ownPostgres, skipWithoutPostgres, type TestPostgres } from '../support/postgres.ts'

const skip = skipWithoutPostgres()
/** At most one log line per outage in this many milliseconds (SECURITY.md; `OUTAGE_REPORT_EVERY_MS`). */
const REPORT_EVERY_MS = 10_000
let stopped: TestPostgres | undefined

// The harness's server is shared by every test file of this process: never leave it stopped.
afterAll(() => stopped?.start())

describe.skipIf(skip)('a 503 while the database is away', () => {
  test('names nothing of the database, says when to retry; the log has the cause, a few lines however many requests', async () => {
    const postgres = await ownPostgres()
    const database = await postgres.freshDatabase()
    const { openSqlStore } = await import('../../src/store/sql/sql-store.ts')
    // Over TCP, so that the host and port are there to leak; the socket directory is checked too.
    const store = await openSqlStore(postgres.tcpUrl(database), { pool: 2, waitMs: 2000 })
    const reports: { message: string; error: unknown }[] = []
    let clock = Date.parse('2026-11-25T12:00:00Z')
    const app = createApp({
      store,
      apiKeys: ['outage-detail-key'],
      report: (message, error) => reports.push({ message, error }),
      now: () => new Date(clock),
    })
    const send = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
      app.handle(
        new Request(`http://localhost${path}`, {
          method,
          headers: { 'content-type': 'application/json', accept: 'application/json', ...headers },
          ...(body !== undefined && { body: JSON.stringify(body) }),
        }),
      )
    expect((await send('GET', '/healthz')).status).toBe(200)
    expect(
      (
        await send('POST', '/api/v1/user/signup', {
          name: 'Ana',
          email: 'ana@rock-legends.com',
          password: 'long enough',
        })
      ).status,
    ).toBe(201)
    const login = await send('POST', '/api/v1/user/login', { email: 'ana@rock-legends.com', password: 'long enough' })
    const bearer = { authorization: `Bearer ${((await login.json()) as { token: string }).token}` }

    postgres.stop('fast')
    stopped = postgres
    const secrets = [database, String(postgres.port), '127.0.0.1', postgres.socketDir, 'localhost', '5432']
    // Anonymous requests above all, and writes with credentials, which are checked before the body is read: a
    // database lost then is a 503 too, not a body "that could not be parsed".
    const requests: [string, string, unknown?, Record<string, string>?][] = [
      ['GET', '/healthz'],
      ['GET', '/readyz'],
      ['GET', '/api/v1/artists'],
      ['GET', '/api/v1/artists/1'],
      ['GET', '/api/v1/artists/1/albums?q=x'],
      // A cover is an image: its Accept names one (Accept: application/json alone is 406, before the store is asked).
      ['GET', '/covers/artists/1.svg', undefined, { accept: 'image/svg+xml' }],
      ['POST', '/api/v1/user/login', { email: 'ana@rock-legends.com', password: 'long enough' }],
      ['POST', '/api/v1/user/signup', { name: 'Bea', email: 'bea@rock-legends.com', password: 'long enough' }],
      ['POST', '/api/v1/artists', { name: 'Charly' }, bearer],
      ['GET', '/api/v1/user/me', undefined, bearer],
      ['POST', '/api/v1/artists', { name: 'Charly' }, { 'x-api-key': 'outage-detail-key' }],
    ]
    let sent = 0
    for (let round = 0; round < 3; round++)
      for (const [method, path, body, credentials] of requests) {
        const response = await send(method, path, body, credentials)
        sent += 1
        const text = await response.text()
        const headers = [...response.headers].map(([name, value]) => `${name}: ${value}`).join('\n')
        expect({ path, status: response.status }).toEqual({ path, status: 503 })
        expect(JSON.parse(text)).toEqual({
          type: '/problems/database-unavailable',
          title: 'The database is unavailable',
          status: 503,
          detail:
            'The database is not reachable right now, so nothing was read or changed. Try again in a few seconds.',
        })
        expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(0)
        for (const secret of secrets) {
          expect({ path, body: text.includes(secret) }).toEqual({ path, body: false })
          expect({ path, headers: headers.includes(secret) }).toEqual({ path, headers: false })
        }
      }

    // The log has the cause, with where the database is: one line for all of these requests.
    expect(reports).toHaveLength(1)
    const [first] = reports.map(({ message }) => message)
    expect(first).toContain('the database is unavailable')
    expect(first).toContain(`127.0.0.1:${postgres.port}, database ${database}`)
    expect(reports[0]?.error).toBeUndefined()

    // Past the interval, the next refusal is reported again, with how many went unreported.
    clock += REPORT_EVERY_MS
    expect((await send('GET', '/api/v1/artists')).status).toBe(503)
    expect(reports).toHaveLength(2)
    expect(reports[1]?.message).toContain(`127.0.0.1:${postgres.port}, database ${database}`)
    expect(reports[1]?.message).toContain(`(${sent - 1} more refused since the last report)`)

    // The process itself is alive: an orchestrator must not restart a replica for its database's outage.
    const live = await send('GET', '/livez')
    expect({ status: live.status, body: await live.json() }).toEqual({ status: 200, body: { status: 'ok' } })
    expect(reports).toHaveLength(2)

    postgres.start()
    stopped = undefined
    // Back: it serves again by itself.
    const deadline = Date.now() + 15_000
    let status = 0
    while (Date.now() < deadline && status !== 200) {
      status = (await send('GET', '/api/v1/artists')).status
      if (status !== 200) await Bun.sleep(200)
    }
    expect(status).toBe(200)
    await store.close()
  }, 60_000)
})
