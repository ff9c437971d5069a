/**
 * The time limits of every statement, set where a connection pooler lets them hold. A pooler (PgBouncer, Supavisor,
 * RDS Proxy) refuses startup parameters it does not know (`statement_timeout`), and in transaction mode hands each
 * transaction to whichever server connection is free, so a setting made once per connection would not follow the
 * client. So nothing is set per connection:
 *
 * - A transaction sets its own limits first, `SET LOCAL` (`set_config(…, true)`): `statement_timeout` for each of its
 *   statements, and `idle_in_transaction_session_timeout`, which frees the locks of a transaction whose client
 *   vanished. Sent in the same write as the transaction's first statement (Bun pipelines within a transaction), so it
 *   costs the server a statement but the client no round trip of its own.
 * - A statement outside a transaction is cancelled by the client once its time has passed (Bun's `query.cancel()`,
 *   a cancel request on a connection of its own, which PgBouncer passes on): the server stops it with the same
 *   SQLSTATE 57014 as `statement_timeout`. A timer per statement, nothing sent unless it fires: wrapping each one in a
 *   transaction of its own to `SET LOCAL` costs three more round trips, and a quarter of the reads' throughput
 *   (bench/RESULTS.md, "Through a connection pooler").
 */
import type { SQL } from 'bun'

/** The limits of {@link bounded}, in milliseconds. */
export interface Limits {
  /** How long one statement may run. */
  statementMs: number
  /** How long a transaction may sit idle before the server ends its session (and frees its locks). */
  idleInTransactionMs: number
}

/** The queries whose timer is set: once, at their first `then`. */
const armed = new WeakSet<object>()

/** Arms `query` with a timer that cancels it `ms` after it starts (when first awaited), cleared once it settles. */
function cancelledAfter<T extends object>(query: T, ms: number): T {
  const then = (query as unknown as Promise<unknown>).then
  if (typeof then !== 'function' || typeof (query as { cancel?: unknown }).cancel !== 'function') return query
  // Armed when awaited, never at creation: a query passed as a fragment of another one is never run itself.
  Object.defineProperty(query, 'then', {
    configurable: true,
    value(
      this: Promise<unknown>,
      onFulfilled?: (value: unknown) => unknown,
      onRejected?: (reason: unknown) => unknown,
    ) {
      if (!armed.has(query)) {
        armed.add(query)
        let fired = false
        const timer = setTimeout(() => {
          fired = true
          ;(query as unknown as { cancel(): void }).cancel()
        }, ms)
        // The first handler, run before the caller's: the server says only "due to user request", the client knows why.
        then.call(
          this,
          () => clearTimeout(timer),
          (reason: unknown) => {
            clearTimeout(timer)
            if (fired && reason instanceof Error)
              reason.message = `canceling statement due to statement timeout (${ms} ms, cancelled by the client)`
          },
        )
      }
      return then.call(this, onFulfilled, onRejected)
    },
  })
  return query
}

/**
 * `sql` with its limits: each statement outside a transaction cancelled after `limits.statementMs`, and each
 * transaction (`begin`) starting with `SET LOCAL` of both limits. Everything else is `sql`'s own.
 */
export function bounded(sql: SQL, limits: Limits): SQL {
  const setLocal = `SELECT set_config('statement_timeout', '${Math.round(limits.statementMs)}', true),
    set_config('idle_in_transaction_session_timeout', '${Math.round(limits.idleInTransactionMs)}', true)`
  const begin = (...args: unknown[]) => {
    const work = args.at(-1) as (tx: SQL) => Promise<unknown>
    const options = args.length > 1 ? [args[0]] : []
    return (sql.begin as (...all: unknown[]) => Promise<unknown>)(...options, async (tx: SQL) => {
      // Sent before the work's first statement (queries are lazy: started now), and awaited with the work: a failure
      // of either fails the transaction.
      const set = tx.unsafe(setLocal).execute()
      const [, result] = await Promise.all([set, work(tx)])
      return result
    })
  }
  return new Proxy(sql, {
    apply(target, self, args) {
      const query = Reflect.apply(target as unknown as (...all: unknown[]) => unknown, self, args)
      // A tagged template is a statement; `sql(rows)`, `sql(name)` are helpers for one.
      return Array.isArray(args[0]) && 'raw' in (args[0] as object)
        ? cancelledAfter(query as object, limits.statementMs)
        : query
    },
    get(target, property) {
      if (property === 'begin' || property === 'transaction') return begin
      const value = Reflect.get(target, property, target)
      if (property === 'unsafe')
        return (...args: unknown[]) =>
          cancelledAfter((value as (...all: unknown[]) => object)(...args), limits.statementMs)
      return typeof value === 'function' ? value.bind(target) : value
    },
  })
}
