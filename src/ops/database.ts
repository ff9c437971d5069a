import type { StoreDocument } from '../model/store-document.ts'
import { connectSql } from '../store/sql/connect.ts'
import type { SqlStore } from '../store/sql/sql-store.ts'

/** Another session connected to a database: what the operator needs to find its process. */
export interface Session {
  pid: number
  client: string
  application: string
  since: string
}

/**
 * The sessions connected to the database at `url` other than this one: the replicas serving it (and anyone else).
 * A restore refuses to go on while there are any: it would replace the data under them. A session whose client has
 * just gone (a server stopped a moment ago, a command that has just exited) is still listed until its backend
 * notices and ends, which on a busy machine takes a while: while any are listed, they are looked at again every
 * 50 ms for up to `settleMs`, and those still there then are returned.
 */
export async function otherSessions(url: string, settleMs = 0): Promise<Session[]> {
  const sql = await connectSql(url, { pool: 1, waitMs: 5000 })
  try {
    const deadline = performance.now() + settleMs
    for (;;) {
      const rows = await sql`
        SELECT pid, coalesce(host(client_addr), 'local socket') AS client, application_name, backend_start::text AS since
        FROM pg_stat_activity
        WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'
        ORDER BY pid`
      if (rows.length === 0 || performance.now() >= deadline)
        return rows.map((row: Record<string, unknown>) => ({
          pid: Number(row.pid),
          client: String(row.client),
          application: String(row.application_name ?? ''),
          since: String(row.since),
        }))
      await Bun.sleep(50)
    }
  } finally {
    await sql.close()
  }
}

/**
 * Opens the database at `url` as a store for one command (migrated to this build's schema, as a replica would): one
 * connection, which its one transaction at a time needs, and no LISTEN for changes it will never serve.
 */
export async function openDatabase(url: string): Promise<SqlStore> {
  const { openSqlStore } = await import('../store/sql/sql-store.ts')
  return openSqlStore(url, { pool: 1, changes: { follow: false } })
}

/** Everything the database holds, in one REPEATABLE READ transaction (`snapshot()`): consistent under any load. */
export function readDatabase(store: SqlStore): Promise<StoreDocument> {
  return store.snapshot()
}

/** Replaces everything in the database with `content`, in one transaction (`restore()`): all or nothing. */
export function restoreDatabase(store: SqlStore, content: StoreDocument): Promise<void> {
  return store.restore(content)
}

/**
 * Forgets the database's reset point (`rl_snapshots`, see `Store.resetPoint`): one taken of the data a copy replaces
 * would bring that data back at the next `POST /__admin/reset`. The next replica started with `--allow-reset` takes
 * a new one. Done before the data is replaced: a copy stopped between leaves the old data, without a reset point.
 */
export async function forgetResetPoint(url: string): Promise<void> {
  const sql = await connectSql(url, { pool: 1, waitMs: 5000 })
  try {
    await sql`DELETE FROM rl_snapshots`
  } finally {
    await sql.close()
  }
}
