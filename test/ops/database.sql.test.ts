/**
 * What `backup`, `restore` and `copy` hold on a database while they work (src/ops/database.ts): one session. Each
 * connection is a process on the database's server, and a command serves no stream, so it neither pools nor LISTENs.
 */
import { describe, expect, test } from 'bun:test'
import { SQL } from 'bun'
import { openDatabase, readDatabase, restoreDatabase } from '../../src/ops/database.ts'
import { skipWithoutPostgres, testPostgres } from '../support/postgres.ts'

const skip = skipWithoutPostgres()

describe.skipIf(skip)("a command's hold on a database", () => {
  test('one session, while it reads the data and while it replaces it', async () => {
    const postgres = await testPostgres()
    const name = await postgres.migratedDatabase()
    const admin = new SQL({ url: postgres.url('postgres'), max: 1 })
    const sessions = async () => {
      const [row] = await admin`
        SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = ${name} AND backend_type = 'client backend'`
      return (row as { n: number }).n
    }
    const store = await openDatabase(postgres.url(name))
    try {
      const content = await readDatabase(store)
      // A LISTEN would have been asked for after the store opened, without waiting: give it the time to show.
      await Bun.sleep(100)
      expect(await sessions()).toBe(1)
      await restoreDatabase(store, content)
      await Bun.sleep(100)
      expect(await sessions()).toBe(1)
    } finally {
      await store.close()
      await admin.close()
    }
  }, 30_000)
})
