/**
 * A database that takes no writes, as a primary demoted to a standby is, or a standby not yet promoted that a
 * failover's stable address reaches for a moment: PostgreSQL refuses each write with SQLSTATE 25006 ("cannot execute
 * INSERT in a read-only transaction") before it changes anything. The store counts that as the database being away:
 * a write is answered 503 with `Retry-After`, never 500, reads are served, and writes are served again once the node
 * takes writes. The node is made read-only with `default_transaction_read_only`, which gives the same refusal as a
 * standby in recovery, and its sessions ended, as a demotion ends them.
 */
import { afterAll, describe, expect, test } from 'bun:test'
import { SQL } from 'bun'
import { createApp } from '../../../src/app.ts'
import { isUnavailable, storeError } from '../../../src/store/sql/outages.ts'
import { DatabaseUnavailableError } from '../../../src/store/store.ts'
import { skipWithoutPostgres, testPostgres } from '../../support/postgres.ts'

const skip = skipWithoutPostgres()
const KEY = 'read-only-key'
const closing: { close(): Promise<unknown> }[] = []

afterAll(async () => {
  for (const each of closing.splice(0)) await each.close().catch(() => {})
})

describe.skipIf(skip)('a database that takes no writes', () => {
  test("PostgreSQL's refusal of a write in a read-only transaction says the database is away", async () => {
    const postgres = await testPostgres()
    const sql = new SQL({ url: postgres.url(await postgres.migratedDatabase()), max: 1 })
    closing.push(sql)
    const refusal = await sql
      .begin('READ ONLY', (tx) => tx`CREATE TABLE refused (id int)`)
      .then(
        () => undefined,
        (error: unknown) => error,
      )
    expect((refusal as { errno?: string }).errno).toBe('25006')
    expect(isUnavailable(refusal)).toBe(true)
    expect(storeError(refusal, 'the test database')).toBeInstanceOf(DatabaseUnavailableError)
  })

  test('writes are 503 with Retry-After while it is read-only, reads are served, and writes again after', async () => {
    const postgres = await testPostgres()
    const database = await postgres.migratedDatabase()
    const admin = new SQL({ url: postgres.url('postgres'), max: 1 })
    closing.push(admin)
    const { openSqlStore } = await import('../../../src/store/sql/sql-store.ts')
    const store = await openSqlStore(postgres.url(database), { pool: 2, waitMs: 2000 })
    closing.unshift(store)
    const app = createApp({ store, apiKeys: [KEY], report: () => {} })
    const create = (name: string) =>
      app.handle(
        new Request('http://localhost/api/v1/artists', {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json', 'x-api-key': KEY },
          body: JSON.stringify({ name }),
        }),
      )
    const list = () => app.handle(new Request('http://localhost/api/v1/artists', { headers: { accept: '*/*' } }))
    /** Every setting applies to the sessions that start after it: the store's are ended, as a demotion ends them. */
    const readOnly = async (on: boolean) => {
      await admin.unsafe(
        on
          ? `ALTER DATABASE ${database} SET default_transaction_read_only = on`
          : `ALTER DATABASE ${database} RESET default_transaction_read_only`,
      )
      await admin`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = ${database}`
    }
    expect((await create('Luis Alberto Spinetta')).status).toBe(201)

    await readOnly(true)
    for (const name of ['Charly García', 'Pappo', 'Fito Páez']) {
      const refused = await create(name)
      expect(refused.status).toBe(503)
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0)
      expect(((await refused.json()) as { type: string }).type).toBe('/problems/database-unavailable')
    }
    // Once the store has seen the database away, its reads are answered from the database again as it comes back:
    // a standby serves reads, so the first that succeeds says the store is back for reads.
    let listed = 0
    const readsBy = Date.now() + 10_000
    while (listed !== 200 && Date.now() < readsBy) {
      listed = (await list()).status
      if (listed !== 200) await Bun.sleep(100)
    }
    expect(listed).toBe(200)

    await readOnly(false)
    let created = 0
    const writesBy = Date.now() + 10_000
    while (created !== 201 && Date.now() < writesBy) {
      created = (await create('Charly García')).status
      expect([201, 503]).toContain(created)
      if (created !== 201) await Bun.sleep(100)
    }
    expect(created).toBe(201)
    const names = ((await (await list()).json()) as { data: { name: string }[] }).data.map(({ name }) => name)
    expect(names.sort()).toEqual(['Charly García', 'Luis Alberto Spinetta'])
  }, 30_000)
})
