import type { SQL } from 'bun'
import { DatabaseUnavailableError } from '../store.ts'
import { sqlState } from './retry.ts'

export { DatabaseUnavailableError }

// scheme://[user[:password]@][host][:port][/database][?params]. Not the WHATWG parser: it refuses the unix-socket
// form `postgres://user@/db?host=/run/postgresql`, whose host is empty. The credentials end at the LAST `@` before
// the query: a password may itself hold `@`, `/` or `:`.
const decodedOr = (text: string) => {
  try {
    return decodeURIComponent(text)
  } catch {
    return text
  }
}

function partsOf(url: string) {
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(url)
  if (!scheme) return undefined
  const rest = url.slice(scheme[0].length)
  const queryAt = rest.indexOf('?')
  const beforeQuery = queryAt < 0 ? rest : rest.slice(0, queryAt)
  const at = beforeQuery.lastIndexOf('@')
  const userinfo = at < 0 ? undefined : beforeQuery.slice(0, at)
  const colon = userinfo?.indexOf(':') ?? -1
  const address = /^(\[[^\]/?]*\]|[^:/?]*)(?::(\d*))?(\/[^?]*)?$/.exec(beforeQuery.slice(at + 1))
  if (!address) return undefined
  const [, host, port, path] = address
  return {
    userinfo,
    password: userinfo !== undefined && colon >= 0 ? userinfo.slice(colon + 1) : undefined,
    host,
    port,
    database: decodedOr((path ?? '').slice(1)),
    query: queryAt < 0 ? undefined : rest.slice(queryAt),
  }
}

/** `url` with its password replaced by `***`: the only form of a database URL that logs and errors show. */
export function redactUrl(url: string): string {
  const scheme = /^[a-z][a-z0-9+.-]*:\/\//i.exec(url)?.[0]
  const parts = partsOf(url)
  // Not a URL we can read: show nothing between `//` and the last `@`, where a password would be.
  if (!scheme || !parts) return url.replace(/\/\/.*@/, '//***@')
  if (parts.userinfo === undefined || parts.password === undefined) return url
  const user = (parts.userinfo as string).slice(0, (parts.userinfo as string).indexOf(':'))
  return `${scheme}${user}:***@${url.slice(scheme.length + (parts.userinfo as string).length + 1)}`
}

/** Where a database URL points, for messages: `host:port, database db` or the unix socket; no credentials. */
export function describeTarget(url: string): string {
  const parts = partsOf(url)
  if (!parts) return redactUrl(url)
  const params = new URLSearchParams(parts.query?.slice(1) ?? '')
  const database = parts.database || '(default database)'
  const port = parts.port || params.get('port') || '5432'
  const socketDir = params.get('host')
  if (!parts.host && socketDir?.startsWith('/')) return `unix socket ${socketDir} (port ${port}), database ${database}`
  return `${parts.host || 'localhost'}:${port}, database ${database}`
}

const CAUSES: Record<string, string> = {
  ERR_POSTGRES_CONNECTION_REFUSED: 'the connection was refused (is the server running, and is this its address?)',
  ERR_POSTGRES_CONNECTION_TIMEOUT: 'the connection timed out',
  ERR_POSTGRES_CONNECTION_CLOSED: 'the server closed the connection',
  ERR_POSTGRES_TLS_NOT_AVAILABLE: 'the server does not offer TLS, which the URL requires',
}

/** Why a connection attempt failed, in words, never repeating the URL (which may hold a password). */
export function causeOf(error: unknown): string {
  const state = sqlState(error)
  const { code, message } = error as { code?: string; message?: string }
  if (state) return `${message ?? 'error'} (SQLSTATE ${state})`
  // Own keys only: a code is the driver's word, but `constructor` must never read as a cause.
  return (code && Object.hasOwn(CAUSES, code) ? CAUSES[code] : undefined) ?? message ?? String(error)
}

/**
 * Whether to prepare named statements over the database URL `url`: what its `prepare` parameter says (`?prepare=false`,
 * Bun.SQL's own, for a connection pooler in transaction mode), else not when a direct URL is given beside it (`direct`,
 * `--data-direct`: then `url` is a pooler's, most often in transaction mode), else yes.
 */
export function preparesStatements(url: string, direct?: string): boolean {
  const query = partsOf(url)?.query
  const said = new URLSearchParams(query?.slice(1) ?? '').get('prepare')
  if (said !== null) return !/^(?:false|0|no|off)$/i.test(said)
  return direct === undefined
}

/** How {@link connectSql} connects. */
export interface ConnectOptions {
  /** Connections in the pool (`--db-pool`). */
  pool?: number
  /** How long to keep trying an unreachable database before giving up (`--db-wait`), in milliseconds. */
  waitMs?: number
  /** The pause between attempts, in milliseconds. */
  retryMs?: number
  /** How long one connection attempt may take, in milliseconds (whole seconds for Bun.SQL); `waitMs` by default. */
  connectTimeoutMs?: number
  /**
   * Whether statements are prepared under names that live as long as the connection: not through a pooler in
   * transaction mode, which hands the next statement to another server connection ({@link preparesStatements}).
   */
  prepare?: boolean
  /** Close a pooled connection idle for this long, in milliseconds (whole seconds for Bun.SQL); never by default. */
  idleTimeoutMs?: number
}

/**
 * A connection pool to the database at `url`, once one query has gone through: while the database cannot be
 * reached, it tries again until `waitMs` has passed, then throws a {@link DatabaseUnavailableError} whose one line
 * names the host, port, database and cause, never the password: for the operator (the log, the command line),
 * never for a client, whom the HTTP layer tells only that the database is unavailable. Unix-socket URLs
 * (`postgres://user@/db?host=/run/postgresql`) and TLS (`?sslmode=require`) are Bun.SQL's own.
 */
export async function connectSql(url: string, options: ConnectOptions = {}) {
  const { pool = 10, waitMs = 10_000, retryMs = 250, connectTimeoutMs = waitMs, prepare, idleTimeoutMs } = options
  const started = Date.now()
  const deadline = started + waitMs
  for (let attempt = 1; ; attempt++) {
    let sql: SQL | undefined
    try {
      // Inside the try: Bun.SQL throws at once on a URL it cannot read, which must end in the same one line. Read
      // from `Bun` here, not imported: the first read of `Bun.SQL` loads Bun's SQL client (about 6 ms of CPU), which
      // a bundle would otherwise do at start-up for every store, this module being loaded by all of them.
      sql = new Bun.SQL({
        url,
        max: pool,
        connectionTimeout: Math.max(1, Math.ceil(connectTimeoutMs / 1000)),
        ...(prepare !== undefined && { prepare }),
        ...(idleTimeoutMs !== undefined && { idleTimeout: Math.max(1, Math.ceil(idleTimeoutMs / 1000)) }),
      })
      await sql`SELECT 1`
      return sql
    } catch (error) {
      await sql?.close().catch(() => {})
      if (!sql) throw new DatabaseUnavailableError(`cannot use the database at ${redactUrl(url)}: ${causeOf(error)}`)
      // A database that answers with an error (no such database, wrong password) will not change its mind.
      if (sqlState(error) || Date.now() + retryMs > deadline)
        throw new DatabaseUnavailableError(
          `cannot use the database at ${describeTarget(url)}: ${causeOf(error)} (${attempt} attempt${attempt === 1 ? '' : 's'} over ${((Date.now() - started) / 1000).toFixed(1)} s)`,
        )
      await Bun.sleep(retryMs)
    }
  }
}
