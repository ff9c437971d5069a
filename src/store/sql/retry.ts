import type { SQL } from 'bun'

/** The SQLSTATE of an error from PostgreSQL (or CockroachDB), or undefined for any other error. */
export const sqlState = (error: unknown): string | undefined => {
  const errno = (error as { errno?: unknown } | null)?.errno
  return typeof errno === 'string' ? errno : undefined
}

/** A serialization failure (40001) or a deadlock (40P01): the transaction may be run again as a whole. */
export const retryable = (error: unknown) => {
  const state = sqlState(error)
  return state === '40001' || state === '40P01'
}

/** How many times a transaction is tried in all before its serialization failure is the caller's. */
const ATTEMPTS = 8

/**
 * Runs `work` in a transaction, again with a growing, jittered pause whenever the database aborts it as a
 * serialization failure: CockroachDB does that under contention by design, PostgreSQL under SERIALIZABLE. `work`
 * must do nothing outside the transaction that cannot be repeated. `options` go into the `BEGIN` (an isolation level).
 *
 * @example
 * const [user] = await inTransaction(sql, (tx) => tx`UPDATE rl_users SET disabled_at = ${at} WHERE id = ${id} RETURNING *`)
 */
export function inTransaction<T>(sql: SQL, work: (tx: SQL) => Promise<T>, options?: string): Promise<T> {
  const run = (tx: unknown) => work(tx as SQL)
  return retried(async () => (await (options === undefined ? sql.begin(run) : sql.begin(options, run))) as T)
}

/**
 * Runs `attempt` (a transaction, or one statement, which is atomic on its own), again with a growing, jittered pause
 * whenever the database aborts it as a serialization failure: it was then rolled back whole.
 */
export async function retried<T>(attempt: () => Promise<T>): Promise<T> {
  for (let tries = 1; ; tries++) {
    try {
      return await attempt()
    } catch (error) {
      if (!retryable(error) || tries >= ATTEMPTS) throw error
      await Bun.sleep(Math.random() * 5 * 2 ** tries)
    }
  }
}
