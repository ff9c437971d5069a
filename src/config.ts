import { type OpsConfig, parseOpsArgs } from './cli/ops-args.ts'
import { parseUsersArgs, type UsersConfig } from './cli/users-args.ts'
import { parseMetricsAddress } from './metrics/serve-metrics.ts'
import type { Config, LogMode } from './options.ts'
import { IN_MEMORY, isDatabaseUrl } from './store/open-store.ts'
import { UsageError } from './usage-error.ts'

export type { Config, LogMode } from './options.ts'
export { UsageError } from './usage-error.ts'

/** What `rock-legends healthcheck` asks. */
export interface HealthcheckConfig {
  /** The base URL of the server to ask, e.g. `http://127.0.0.1:3000`. */
  url: string
}

/** The `--help` text. */
export const USAGE = `Usage: rock-legends [options]
       rock-legends healthcheck [--url URL]
       rock-legends users list|add|disable|enable|reset-password … (rock-legends users --help)
       rock-legends verify FILE | --data FILE|postgres://…
       rock-legends backup FILE [--data FILE|postgres://…]
       rock-legends restore FILE --data FILE|postgres://…
       rock-legends copy --from FILE|postgres://… --to FILE|postgres://… [--replace]

A catalogue of legendary Argentine rock artists and their albums, served as a REST API.

Options (each can also be set by the environment variable shown):
  --port N              port to listen on; 0 picks a free one (PORT, default 3000)
  --host ADDR           address to listen on (HOST, default 127.0.0.1)
  --data FILE|:memory:|postgres://…
                        JSON data file, :memory: for no file, or a PostgreSQL or CockroachDB database that
                        several replicas share (ROCK_LEGENDS_DATA, default ./data/db.json)
  --db-pool N           connections to the database, per replica (ROCK_LEGENDS_DB_POOL, default 10)
  --db-wait DURATION    how long to wait at start for a database that cannot be reached, e.g. 10s, 2m
                        (ROCK_LEGENDS_DB_WAIT, default 10s)
  --seed [FILE]         fill an empty store with the built-in catalogue, or with FILE (ROCK_LEGENDS_SEED)
  --api-key KEY         a service key that may write; repeatable (ROCK_LEGENDS_API_KEYS, comma-separated)
  --token-ttl DURATION  lifetime of bearer tokens, e.g. 30m, 24h, 7d (ROCK_LEGENDS_TOKEN_TTL, default 24h)
  --log pretty|json|off how to log (ROCK_LEGENDS_LOG, default pretty)
  --cors ORIGINS        comma-separated origins allowed by CORS, or * (ROCK_LEGENDS_CORS, default none)
  --delay MS            wait MS milliseconds before every API response (ROCK_LEGENDS_DELAY, default 0)
  --read-only           refuse every write with 403 (ROCK_LEGENDS_READ_ONLY)
  --allow-reset         serve POST /__admin/reset (service key) to restore the start-up state
                        (ROCK_LEGENDS_ALLOW_RESET)
  --fixtures            for test suites: namespaces, request journal, faults and state under
                        /__admin (service key); implies --allow-reset (ROCK_LEGENDS_FIXTURES)
  --no-ui               serve only the API: no web pages, and / answers a JSON index of the API
                        (ROCK_LEGENDS_NO_UI)
  --no-signup           close sign-up: POST /api/v1/user/signup answers 403; existing accounts keep working
                        (ROCK_LEGENDS_NO_SIGNUP)
  --metrics [HOST:]PORT serve Prometheus metrics at GET /metrics on a port of their own, without credentials:
                        on loopback unless HOST is named, e.g. 9464 (ROCK_LEGENDS_METRICS, default off)
  --backup-every D      take a backup while serving every D, e.g. 6h (ROCK_LEGENDS_BACKUP_EVERY, default off)
  --backup-dir DIR      where they go (ROCK_LEGENDS_BACKUP_DIR, default ./backups)
  --backup-keep N       how many to keep, the oldest removed (ROCK_LEGENDS_BACKUP_KEEP, default 7)
  -h, --help            show this help
  -v, --version         show the version

Commands:
  healthcheck [--url URL]  exit 0 if the server at URL answers GET /healthz, 1 if not; URL defaults to
                           http://127.0.0.1:$PORT (3000), the host taken from HOST unless it is 0.0.0.0 or ::
  users list               the accounts of the data store: id, name, email, created, disabled
  users add                a new account (--email, --name; the password generated, or --password-stdin)
  users disable EMAIL      the account cannot log in, and its tokens and keys are refused at once
  users enable EMAIL       undoes disable
  users reset-password EMAIL
                           a new password (generated, or --password-stdin); revokes its bearer tokens
                           Each works whether the server is stopped or running: see rock-legends users --help.
  verify FILE | --data TARGET
                           check a backup, a data file with its journal, or a database: exit 0 when sound,
                           1 naming each problem
  backup FILE [--data TARGET]
                           write everything the store holds to the new file FILE (a data file: while no
                           server uses it; a database: in one consistent read, even while it serves)
  restore FILE --data TARGET
                           replace everything in the store with the backup FILE, all or nothing, keeping what
                           it replaces aside (no server may use the store meanwhile); see rock-legends backup --help
  copy --from SOURCE --to TARGET [--replace]
                           move everything from one store to another (a data file to PostgreSQL, or back),
                           ids included: every URL, token and key keeps working; see rock-legends copy --help
`

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }

/** Parses a duration such as `90s`, `30m`, `24h` or `7d` (a bare number is seconds) into milliseconds. */
export function parseDuration(text: string, flag = '--token-ttl'): number {
  const match = /^(\d+)(ms|s|m|h|d)?$/.exec(text.trim())
  const ms = match ? Number(match[1]) * (UNITS[match[2] ?? 's'] as number) : Number.NaN
  if (!Number.isSafeInteger(ms) || ms <= 0)
    throw new UsageError(`${flag} must be a positive duration such as 90s, 30m, 24h or 7d, not "${text}"`)
  return ms
}

function parsePort(text: string): number {
  const port = /^\d{1,5}$/.test(text) ? Number(text) : Number.NaN
  if (!(port >= 0 && port <= 65535))
    throw new UsageError(`--port must be a whole number from 0 to 65535, not "${text}"`)
  return port
}

/** The longest `--delay`: Bun drops a connection that stays silent much longer (its idle timeout is capped). */
export const MAX_DELAY_MS = 120_000

function parseDelay(text: string): number {
  const ms = /^\d{1,6}$/.test(text.trim()) ? Number(text) : Number.NaN
  if (!(ms >= 0 && ms <= MAX_DELAY_MS))
    throw new UsageError(`--delay must be a whole number of milliseconds from 0 to ${MAX_DELAY_MS}, not "${text}"`)
  return ms
}

/** A positive byte count, or `undefined` when not given. */
function parseBytes(text: string | undefined): number | undefined {
  if (text === undefined || text.trim() === '') return undefined
  const bytes = /^\d{1,15}$/.test(text.trim()) ? Number(text) : 0
  if (bytes <= 0) throw new UsageError(`ROCK_LEGENDS_COMPACT_AFTER must be a positive number of bytes, not "${text}"`)
  return bytes
}

/** The environment variable of a switch: `true` or `1` for on; `false`, `0` or empty for off. */
function parseSwitch(text: string, variable: string): boolean {
  const value = text.trim().toLowerCase()
  if (value === 'true' || value === '1') return true
  if (value === '' || value === 'false' || value === '0') return false
  throw new UsageError(`${variable} must be true or false, not "${text}"`)
}

/** The scheduled backups' options: all unset without `--backup-every`, which the other two need. */
function parseBackups(every: string | undefined, dir: string | undefined, keep: string | undefined) {
  if (every === undefined || every === '') {
    if (dir !== undefined || keep !== undefined)
      throw new UsageError('--backup-dir and --backup-keep need --backup-every, e.g. --backup-every 6h')
    return {}
  }
  const backupEveryMs = parseDuration(every, '--backup-every')
  if (backupEveryMs < 1000) throw new UsageError(`--backup-every must be at least 1s, not "${every}"`)
  if (dir !== undefined && dir.trim() === '') throw new UsageError('--backup-dir must name a directory')
  const backupKeep = keep === undefined ? 7 : Number(keep)
  if (!/^\d+$/.test(keep ?? '7') || backupKeep < 1 || backupKeep > 10_000)
    throw new UsageError(`--backup-keep must be a whole number from 1 to 10,000, not "${keep}"`)
  return { backupEveryMs, backupDir: dir ?? './backups', backupKeep }
}

/** `--metrics [HOST:]PORT` as given (checked here, read by the server), or `undefined` when not given or empty. */
function parseMetrics(text: string | undefined): string | undefined {
  if (text === undefined || text.trim() === '') return undefined
  if (!parseMetricsAddress(text))
    throw new UsageError(`--metrics must be [HOST:]PORT, such as 9464 or 127.0.0.1:9464, not "${text}"`)
  return text.trim()
}

function parseLog(text: string): LogMode {
  if (text === 'pretty' || text === 'json' || text === 'off') return text
  throw new UsageError(`--log must be pretty, json or off, not "${text}"`)
}

const list = (text: string) =>
  text
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean)

function parseSeed(text: string): boolean | string {
  if (text === '' || text === 'true' || text === '1') return true
  if (text === 'false' || text === '0') return false
  return text
}

/** What the command line asks for: run with a config, check a server's health, or print help or the version. */
export type Invocation =
  | { action: 'run'; config: Config }
  | { action: 'healthcheck'; config: HealthcheckConfig }
  | { action: 'users'; config: UsersConfig }
  | { action: 'users-help' }
  | { action: 'ops'; config: OpsConfig }
  | { action: 'ops-help' }
  | { action: 'help' }
  | { action: 'version' }

// A server listening on every interface is still reached on loopback from its own machine or container.
const WILDCARD_HOSTS = new Set(['0.0.0.0', '::', '[::]'])

/** Reads `healthcheck [--url URL]`; without a URL, the server the same environment would start is asked. */
function parseHealthcheck(argv: readonly string[], env: Record<string, string | undefined>): Invocation {
  let url: string | undefined
  for (let i = 0; i < argv.length; i++) {
    const match = /^--([a-z-]+)(?:=(.*))?$/s.exec(argv[i] as string)
    if (match?.[1] === 'help') return { action: 'help' }
    if (match?.[1] !== 'url') throw new UsageError(`healthcheck takes only --url URL, not "${argv[i]}"`)
    url = match[2] ?? argv[++i]
    if (url === undefined) throw new UsageError('--url needs a value')
  }
  if (url === undefined) {
    const host = env.HOST?.trim() || '127.0.0.1'
    const reachable = WILDCARD_HOSTS.has(host) ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host
    url = `http://${reachable}:${parsePort(env.PORT ?? '3000')}`
  }
  if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol))
    throw new UsageError(`--url must be an http(s) URL such as http://127.0.0.1:3000, not "${url}"`)
  return { action: 'healthcheck', config: { url } }
}

const MAX_POOL = 1000

function parsePool(text: string): number {
  const pool = /^\d+$/.test(text.trim()) ? Number(text) : Number.NaN
  if (!Number.isInteger(pool) || pool < 1 || pool > MAX_POOL)
    throw new UsageError(`--db-pool must be a whole number of connections from 1 to ${MAX_POOL}, not "${text}"`)
  return pool
}

/** The one-letter forms of the flags people type most. */
const SHORT_FORMS: Record<string, string> = { '-h': '--help', '-v': '--version' }

/** Reads flags (which win) and environment variables into a validated invocation; throws {@link UsageError}. */
export function parseArgs(argv: readonly string[], env: Record<string, string | undefined> = {}): Invocation {
  if (argv[0] === 'healthcheck') return parseHealthcheck(argv.slice(1), env)
  if (argv[0] === 'users') return parseUsersArgs(argv.slice(1), env)
  if (argv[0] === 'verify' || argv[0] === 'backup' || argv[0] === 'restore' || argv[0] === 'copy')
    return parseOpsArgs(argv[0], argv.slice(1), env)
  const flags = new Map<string, string[]>()
  const valued = new Set([
    'port',
    'host',
    'data',
    'api-key',
    'token-ttl',
    'log',
    'cors',
    'delay',
    'db-pool',
    'db-wait',
    'metrics',
    'backup-every',
    'backup-dir',
    'backup-keep',
  ])
  const bare = new Set(['seed', 'help', 'version', 'read-only', 'allow-reset', 'fixtures', 'no-ui', 'no-signup'])
  for (let i = 0; i < argv.length; i++) {
    const arg = SHORT_FORMS[argv[i] as string] ?? (argv[i] as string)
    const match = /^--([a-z-]+)(?:=(.*))?$/s.exec(arg)
    if (!match) throw new UsageError(`unexpected argument "${arg}"`)
    const name = match[1] as string
    let value = match[2]
    // `--seed FILE` is read as `--seed=FILE`: the server takes no other arguments, so a word after it is its file.
    if (name === 'seed') value ??= argv[i + 1]?.startsWith('-') === false ? (argv[++i] as string) : ''
    else if (valued.has(name)) {
      if (value === undefined) {
        value = argv[++i]
        if (value === undefined) throw new UsageError(`--${name} needs a value`)
      }
    } else if (!bare.has(name)) throw new UsageError(`unknown option --${name}`)
    else if (value !== undefined) throw new UsageError(`--${name} takes no value`)
    flags.set(name, [...(flags.get(name) ?? []), value ?? ''])
  }
  if (flags.has('help')) return { action: 'help' }
  if (flags.has('version')) return { action: 'version' }
  const last = (name: string, variable: string) => flags.get(name)?.at(-1) ?? env[variable]
  const on = (name: string, variable: string) => flags.has(name) || parseSwitch(env[variable] ?? '', variable)
  const data = last('data', 'ROCK_LEGENDS_DATA') ?? './data/db.json'
  if (data.trim() === '') throw new UsageError('--data must name a file, :memory: or a postgres:// URL')
  const dbPool = last('db-pool', 'ROCK_LEGENDS_DB_POOL')
  for (const flag of ['db-pool', 'db-wait'])
    if (flags.has(flag) && !isDatabaseUrl(data))
      throw new UsageError(`--${flag} applies to a database only: --data postgres://user@host/database`)
  const fixtures = on('fixtures', 'ROCK_LEGENDS_FIXTURES')
  if (fixtures && isDatabaseUrl(data))
    throw new UsageError(
      '--fixtures keeps its namespaces in memory: use it over a data file or :memory:, not a database',
    )
  const seed = last('seed', 'ROCK_LEGENDS_SEED')
  const apiKeys = flags.get('api-key') ?? list(env.ROCK_LEGENDS_API_KEYS ?? '')
  if (apiKeys.some((key) => key.trim() === '')) throw new UsageError('--api-key must not be empty')
  return {
    action: 'run',
    config: {
      port: parsePort(last('port', 'PORT') ?? '3000'),
      host: last('host', 'HOST') || '127.0.0.1',
      data: data === IN_MEMORY ? IN_MEMORY : data,
      dbPool: dbPool === undefined ? undefined : parsePool(dbPool),
      dbWaitMs: parseDuration(last('db-wait', 'ROCK_LEGENDS_DB_WAIT') ?? '10s', '--db-wait'),
      seed: seed === undefined ? false : parseSeed(seed),
      apiKeys,
      tokenTtlMs: parseDuration(last('token-ttl', 'ROCK_LEGENDS_TOKEN_TTL') ?? '24h'),
      log: parseLog(last('log', 'ROCK_LEGENDS_LOG') ?? 'pretty'),
      cors: list(last('cors', 'ROCK_LEGENDS_CORS') ?? ''),
      delay: parseDelay(last('delay', 'ROCK_LEGENDS_DELAY') ?? '0'),
      readOnly: on('read-only', 'ROCK_LEGENDS_READ_ONLY'),
      allowReset: on('allow-reset', 'ROCK_LEGENDS_ALLOW_RESET'),
      fixtures,
      compactAfterBytes: parseBytes(env.ROCK_LEGENDS_COMPACT_AFTER),
      ui: !on('no-ui', 'ROCK_LEGENDS_NO_UI'),
      signup: !on('no-signup', 'ROCK_LEGENDS_NO_SIGNUP'),
      metrics: parseMetrics(last('metrics', 'ROCK_LEGENDS_METRICS')),
      ...parseBackups(
        last('backup-every', 'ROCK_LEGENDS_BACKUP_EVERY'),
        last('backup-dir', 'ROCK_LEGENDS_BACKUP_DIR'),
        last('backup-keep', 'ROCK_LEGENDS_BACKUP_KEEP'),
      ),
    },
  }
}
