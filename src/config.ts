import { type CommandLine, type Environment, optionLines, readCommandLine } from './cli/command-line.ts'
import { type OpsConfig, parseOpsArgs } from './cli/ops-args.ts'
import { parseUsersArgs, type UsersConfig } from './cli/users-args.ts'
import { httpUrl } from './option-values.ts'
import { type Config, conflictIn, SERVER_OPTIONS, STORE_COMMANDS, type StoreCommand, servesHttps } from './options.ts'
import { isDatabaseUrl } from './store/target.ts'
import { UsageError } from './usage-error.ts'

export { parseDuration } from './option-values.ts'
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
${optionLines('serve')}

Commands:
  healthcheck [--url URL]  exit 0 if the server at URL answers GET /healthz, 1 if not; URL defaults to
                           http://127.0.0.1:$PORT (3000), the host taken from HOST unless it is 0.0.0.0 or ::,
                           https:// with ROCK_LEGENDS_TLS_CERT or ROCK_LEGENDS_HTTPS (port 443 with the latter
                           unless PORT is set; on loopback the certificate is not checked)
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
function parseHealthcheck(argv: readonly string[], env: Environment): Invocation {
  const line = readCommandLine('healthcheck', argv, env, (flag) => `healthcheck takes only --url URL, not "${flag}"`)
  if (line.flagged('help')) return { action: 'help' }
  if (line.words.length > 0) throw new UsageError(`healthcheck takes only --url URL, not "${line.words[0]}"`)
  let url = line.value('url')
  if (url === undefined) {
    // The port and host the same environment gives a server, read as the server reads them.
    const server = readCommandLine('serve', [], env, String)
    const host = server.value('host') ?? '127.0.0.1'
    const reachable = WILDCARD_HOSTS.has(host) ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host
    const acme = (server.value('httpsDomains')?.length ?? 0) > 0
    const scheme = server.value('tlsCert') === undefined && !acme ? 'http' : 'https'
    const port = acme && !server.given('port') ? HTTPS_PORT : server.value('port')
    url = httpUrl.parse(`${scheme}://${reachable}:${port}`, 'HOST')
  }
  return { action: 'healthcheck', config: { url } }
}

/** Reads flags (which win) and environment variables into a validated invocation; throws {@link UsageError}. */
export function parseArgs(argv: readonly string[], env: Environment = {}): Invocation {
  const [command = '', ...rest] = argv
  if (command === 'healthcheck') return parseHealthcheck(rest, env)
  if (command === 'users') return parseUsersArgs(rest, env)
  if ((STORE_COMMANDS as readonly string[]).includes(command)) return parseOpsArgs(command as StoreCommand, rest, env)
  const line = readCommandLine('serve', argv, env, (flag) => `unknown option ${flag}`)
  if (line.words.length > 0) throw new UsageError(`unexpected argument "${line.words[0]}"`)
  if (line.flagged('help')) return { action: 'help' }
  if (line.flagged('version')) return { action: 'version' }
  const data = line.value('data') ?? ''
  for (const key of ['dbPool', 'dbWaitMs', 'dataDirect'] as const)
    if (line.flagged(key) && !isDatabaseUrl(data))
      throw new UsageError(
        `--${SERVER_OPTIONS[key].flag} applies to a database only: --data postgres://user@host/database`,
      )
  const config = serverConfig(line)
  if (line.given('hstsMs') && !servesHttps(config))
    throw new UsageError('--hsts applies to HTTPS: give --https DOMAIN, or --tls-cert and --tls-key')
  if (config.httpsDomains?.length) {
    // The port browsers and the CA's users reach HTTPS on, as with PocketBase and Caddy; --port (or PORT) still wins.
    if (!line.given('port')) config.port = HTTPS_PORT
  } else
    for (const key of ACME_SETTINGS)
      if (line.given(key)) throw new UsageError(`--${SERVER_OPTIONS[key].flag} applies to --https DOMAIN only`)
  const conflict = conflictIn(config)
  if (conflict) throw new UsageError(conflict)
  return { action: 'run', config }
}

/** The port of HTTPS with `--https` unless `--port` names another. */
export const HTTPS_PORT = 443

/** The settings of certificates obtained over ACME, which apply only with `--https`. */
const ACME_SETTINGS = ['acmeDirectory', 'acmeEmail', 'acmeDir', 'httpPort'] as const

/** The scheduled backups' settings, which apply only with `--backup-every`. */
const BACKUP_SETTINGS = new Set<string>(['backupDir', 'backupKeep'])

/** Every server option's value, the scheduled backups' settings only with `--backup-every`, which they need. */
function serverConfig(line: CommandLine): Config {
  const backups = line.value('backupEveryMs') !== undefined
  if (!backups && (line.given('backupDir') || line.given('backupKeep')))
    throw new UsageError('--backup-dir and --backup-keep need --backup-every, e.g. --backup-every 6h')
  const config: Record<string, unknown> = {}
  for (const key of Object.keys(SERVER_OPTIONS) as (keyof typeof SERVER_OPTIONS)[])
    if (backups || !BACKUP_SETTINGS.has(key)) config[key] = line.value(key)
  // Each key holds its option's value, read by the option's own kind; defaults fill those a Config requires.
  return config as Config
}
