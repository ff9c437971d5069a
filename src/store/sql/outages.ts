import { DatabaseUnavailableError } from '../store.ts'
import { causeOf } from './connect.ts'
import { sqlState } from './retry.ts'

// Bun.SQL's own codes for a connection that failed, closed or timed out (no SQLSTATE: the server never answered), or a
// statement cancelled past its time before the server ran it (limits.ts).
const LOST =
  /^ERR_POSTGRES_(?:CONNECTION_|IDLE_TIMEOUT|LIFETIME_TIMEOUT|TLS_|QUERY_CANCELLED)|^E(?:CONNREFUSED|CONNRESET|PIPE|TIMEDOUT|NOENT|HOSTUNREACH|NETUNREACH)$/

/**
 * Whether `error` says the database could not be reached or did not answer in time, rather than refused the
 * statement: the connection failed or was lost (class 08, Bun's connection codes), the server is shutting down or
 * starting (57P01–57P03), it ran out of resources (53), a statement ran past its time limit (57014), CockroachDB
 * cannot tell whether a statement completed (40003), or the server takes no writes (25006, a read-only transaction):
 * a primary demoted to a standby, or a standby not yet promoted, which a failover's stable address reaches until its
 * check sees the change. Such a node refuses a write before it changes anything, and a primary serves it soon.
 */
export function isUnavailable(error: unknown): boolean {
  if (error instanceof DatabaseUnavailableError) return true
  const state = sqlState(error)
  if (state) return /^(?:08|53|57P0[1-3]|57014|40003|25006)/.test(state)
  const code = (error as { code?: unknown } | null)?.code
  return typeof code === 'string' && LOST.test(code)
}

/** Whether `error` is a lost connection that a statement never reached: one more try on a fresh connection may do. */
export function isStaleConnection(error: unknown): boolean {
  const state = sqlState(error)
  if (state) return /^(?:08|57P0[12])/.test(state)
  const code = (error as { code?: unknown } | null)?.code
  return code === 'ERR_POSTGRES_CONNECTION_CLOSED'
}

/**
 * `error` as a store reports it: {@link DatabaseUnavailableError} naming the target (`describeTarget`, never the
 * password) and the cause when the database is out of reach, else `error` itself (a duplicate email, a bug).
 */
export function storeError(error: unknown, target: string): unknown {
  if (error instanceof DatabaseUnavailableError || !isUnavailable(error)) return error
  return new DatabaseUnavailableError(`the database at ${target} is unavailable: ${causeOf(error)}`, { cause: error })
}

/** Rejects with {@link DatabaseUnavailableError} once `ms` have passed without `promise` settling. */
export function within<T>(promise: Promise<T>, ms: number, target: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new DatabaseUnavailableError(`the database at ${target} did not answer within ${ms} ms`)),
      ms,
    )
  })
  return Promise.race([promise, late]).finally(() => clearTimeout(timer))
}
