/**
 * `copy` and `restore` refuse a database that other sessions use (src/ops/owners.ts), but not one whose other
 * session is ending: a server stopped, or a command that exited, just before leaves its backend listed until the
 * backend notices. Without the settling time, `copy` would refuse a database for the backend of the server it has
 * just stopped.
 */
import { describe, expect, test } from 'bun:test'
import { SQL } from 'bun'
import { refuseConnectedDatabase, SESSIONS_SETTLE_MS } from '../../src/ops/owners.ts'
import { RefusedError } from '../../src/ops/refused-error.ts'
import { skipWithoutPostgres, testPostgres } from '../support/postgres.ts'

const skip = skipWithoutPostgres()
const WHY = 'stop the replicas first'

/** A session of its own on `url`, connected (its backend started) before it is returned. */
async function session(url: string): Promise<SQL> {
  const sql = new SQL({ url, max: 1 })
  await sql`SELECT 1`
  return sql
}

describe.skipIf(skip)('a database in use by other sessions', () => {
  test('a session that ends within the settling time does not make a command refuse the database', async () => {
    const postgres = await testPostgres()
    const url = postgres.url(await postgres.freshDatabase())
    const other = await session(url)
    // Ends while the command looks: at the first look it is there.
    const closing = Bun.sleep(SESSIONS_SETTLE_MS / 4).then(() => other.close())
    await refuseConnectedDatabase(url, WHY)
    await closing
  })

  test('a session that stays makes it refuse, naming the session, once the settling time is over', async () => {
    const postgres = await testPostgres()
    const url = postgres.url(await postgres.freshDatabase())
    const other = await session(url)
    try {
      const started = performance.now()
      const refusal = await refuseConnectedDatabase(url, WHY).catch((error: unknown) => error)
      expect(refusal).toBeInstanceOf(RefusedError)
      expect(String((refusal as Error).message)).toMatch(/is in use by 1 other connection \(pid \d+ from local socket/)
      expect(String((refusal as Error).message)).toEndWith(WHY)
      // It looked for the whole settling time before refusing (a bound the test sets, not a speed it measures).
      expect(performance.now() - started).toBeGreaterThanOrEqual(SESSIONS_SETTLE_MS - 5)
    } finally {
      await other.close()
    }
  })
})
