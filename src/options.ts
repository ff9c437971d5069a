/**
 * The options of a server, declared once. The others are derived from {@link ServerOptions}: `Config` (src/config.ts,
 * what the command line and environment yield), `AppOptions` (src/app.ts, the ones that shape answers), and the npm
 * package's `ServerOptions` (npm/rock-legends/lib/index.d.ts, self-contained) is held to the same keys and types by
 * test/npm/options.test.ts.
 */

/** How the server logs: human-readable lines, one JSON object per line, or nothing. */
export type LogMode = 'pretty' | 'json' | 'off'

/**
 * Options of `startServer`, named like the command-line flags (`--token-ttl` is `tokenTtlMs`), each of which an
 * environment variable can set too. Defaults differ only where said: the command line's suit a service, and
 * `startServer`'s a test fixture.
 */
export interface ServerOptions {
  /** Port to listen on; 0 picks a free one (`--port`, `PORT`). 3000 on the command line, 0 for `startServer`. */
  port?: number
  /** Address to listen on (`--host`, `HOST`); `127.0.0.1` by default. */
  host?: string
  /**
   * A JSON data file, `:memory:` for none, or a `postgres://` URL of a database that replicas share (`--data`,
   * `ROCK_LEGENDS_DATA`). `./data/db.json` on the command line, `:memory:` for `startServer`.
   */
  data?: string
  /** Connections in the database pool, per replica, for a database URL (`--db-pool`, `ROCK_LEGENDS_DB_POOL`); 10. */
  dbPool?: number
  /**
   * How long to wait at start for a database that cannot be reached, in milliseconds (`--db-wait`,
   * `ROCK_LEGENDS_DB_WAIT`); 10 seconds.
   */
  dbWaitMs?: number
  /**
   * `true` for the built-in catalogue, a path for a catalogue file of the same format, `false` (the default) for
   * none; only an empty store is seeded (`--seed [FILE]`, `ROCK_LEGENDS_SEED`).
   */
  seed?: boolean | string
  /** Service keys that may write, sent as `X-API-Key` (`--api-key`, repeatable; `ROCK_LEGENDS_API_KEYS`); none. */
  apiKeys?: readonly string[]
  /** Lifetime of bearer tokens from login, in milliseconds (`--token-ttl`, `ROCK_LEGENDS_TOKEN_TTL`); 24 hours. */
  tokenTtlMs?: number
  /** How to log (`--log`, `ROCK_LEGENDS_LOG`). `pretty` on the command line, `off` for `startServer`. */
  log?: LogMode
  /** Origins allowed by CORS, or `*` (`--cors`, `ROCK_LEGENDS_CORS`); none, and then no CORS headers at all. */
  cors?: readonly string[]
  /**
   * Milliseconds to wait before every API response, 0 to 120,000, for UI and timeout tests (`--delay`,
   * `ROCK_LEGENDS_DELAY`); 0.
   */
  delay?: number
  /** Refuse every write (POST, PUT, PATCH, DELETE) with 403 (`--read-only`, `ROCK_LEGENDS_READ_ONLY`). */
  readOnly?: boolean
  /**
   * Serve `POST /__admin/reset` (service key), which restores the start-up state, and allow `RunningServer.reset`
   * (`--allow-reset`, `ROCK_LEGENDS_ALLOW_RESET`).
   */
  allowReset?: boolean
  /**
   * Serve the fixture controls for test suites (`--fixtures`, `ROCK_LEGENDS_FIXTURES`): a catalogue per
   * `Rock-Legends-Namespace` header, and under `/__admin` (service key) the namespaces, the request journal, faults
   * and state in and out (docs/testing-with-rock-legends.md). Implies `allowReset`. Over a data file or in memory only.
   */
  fixtures?: boolean
  /**
   * Take a backup of the store every this many milliseconds while serving (`--backup-every`, `ROCK_LEGENDS_BACKUP_EVERY`,
   * e.g. `6h`), into `backupDir`, keeping the newest `backupKeep`; off by default. A backup that fails is logged and
   * tried again a minute later.
   */
  backupEveryMs?: number
  /** Where scheduled backups go (`--backup-dir`, `ROCK_LEGENDS_BACKUP_DIR`); `./backups` by default. */
  backupDir?: string
  /** How many scheduled backups to keep, the oldest removed past it (`--backup-keep`, `ROCK_LEGENDS_BACKUP_KEEP`); 7. */
  backupKeep?: number
  /**
   * Journal size in bytes that triggers a compaction of the data file, a tuning knob (`ROCK_LEGENDS_COMPACT_AFTER`,
   * no flag); the store's default if unset.
   */
  compactAfterBytes?: number
  /**
   * Serve Prometheus metrics at `GET /metrics` on a listener of their own, at `[HOST:]PORT` such as `9464` or
   * `127.0.0.1:9464` (loopback unless a host is named; port 0 picks a free one), without credentials (`--metrics`,
   * `ROCK_LEGENDS_METRICS`). Off by default, and then nothing is counted.
   */
  metrics?: string
  /** Serve the web pages at `/` (the default); `false` (`--no-ui`, `ROCK_LEGENDS_NO_UI`) makes `/` a JSON index. */
  ui?: boolean
  /**
   * Whether anyone may create an account (the default); `false` (`--no-signup`, `ROCK_LEGENDS_NO_SIGNUP`) answers
   * sign-up with 403, and existing accounts keep working.
   */
  signup?: boolean
}

/**
 * The options a store picks a default for itself when they are unset, and `metrics` and the scheduled backups', which
 * are off when unset.
 */
type StoreDefaulted = 'dbPool' | 'compactAfterBytes' | 'metrics' | 'backupEveryMs' | 'backupDir' | 'backupKeep'

/**
 * Everything the command line and environment can set, validated: every option of {@link ServerOptions}, with the
 * command line's defaults filled in (except those unset by default).
 */
export type Config = Required<Omit<ServerOptions, StoreDefaulted>> & Pick<ServerOptions, StoreDefaulted>
