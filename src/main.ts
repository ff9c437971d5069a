#!/usr/bin/env bun
import pkg from '../package.json' with { type: 'json' }
import { banner, readyFields } from './banner.ts'
import { type Config, parseArgs, USAGE, UsageError } from './config.ts'
import { checkHealth } from './healthcheck.ts'
import { createLogger, jsonLine, type LogMode, printErrorLine, printLine, routeConsole } from './log.ts'
import { BackupDirError } from './ops/backup-dir-error.ts'
import { HANDOVER_SIGNAL } from './ops/takeover.ts'
import { SERVER_OPTIONS, STORE_COMMANDS, servesHttps } from './options.ts'
import { SeedError } from './seed/seed-error.ts'
import { startServer } from './server.ts'
import { DataFileError, DataFileLockedError } from './store/json-file/errors.ts'
import { DatabaseUnavailableError } from './store/store.ts'
import { CertificateError } from './tls/certificates.ts'
import { PortError } from './tls/port-error.ts'

/** Errors that stop start-up with exit code 2 and one line, without a stack. */
const STARTUP_ERRORS = [
  UsageError,
  DataFileError,
  DataFileLockedError,
  SeedError,
  DatabaseUnavailableError,
  BackupDirError,
  CertificateError,
  PortError,
]

/**
 * Start-up errors known by name: a first ACME order that failed (`AcmeError`), whose module, with the ACME client, is
 * loaded only with --https.
 */
const STARTUP_ERROR_NAMES = new Set(['AcmeError'])

/** The server's config once the command line is read (a start-up error after that logs as it asks). */
let serving: Config | undefined

/**
 * The `--log` a server's command line asks for, read without the parser (which is what may have failed): the last
 * `--log` flag, else `ROCK_LEGENDS_LOG`; undefined for the other commands, which speak text.
 */
function askedLogMode(argv: readonly string[], env: NodeJS.ProcessEnv): string | undefined {
  const [command = ''] = argv
  if (['healthcheck', 'users', ...STORE_COMMANDS].includes(command)) return undefined
  const { flag, env: variable } = SERVER_OPTIONS.log
  let mode: string | undefined
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string
    if (arg === '--') break
    if (arg === `--${flag}`) mode = argv[++i]
    else if (arg.startsWith(`--${flag}=`)) mode = arg.slice(flag.length + 3)
  }
  return (mode ?? env[variable])?.trim() || undefined
}

/**
 * Writes why the server stopped or could not start, to exit with `exitCode`: `rock-legends: PRETTY` (`message`
 * unless given: a usage text or a stack may follow it), or with `--log json` one JSON object of `message`, the exit
 * code and `fields`.
 */
function fail(exitCode: number, message: string, pretty = message, fields: Record<string, unknown> = {}): void {
  const mode: LogMode | string | undefined = serving?.log ?? askedLogMode(process.argv.slice(2), process.env)
  if (mode === 'json') printErrorLine(jsonLine('error', message, { exitCode, ...fields }))
  else printErrorLine(`rock-legends: ${pretty}`)
}

async function main(argv: string[]): Promise<void> {
  const invocation = parseArgs(argv, process.env)
  if (invocation.action === 'help') return printLine(USAGE.trimEnd())
  if (invocation.action === 'version') return printLine(`rock-legends ${pkg.version}`)
  if (invocation.action === 'users-help') {
    const { USERS_USAGE } = await import('./cli/users-args.ts')
    return printLine(USERS_USAGE.trimEnd())
  }
  if (invocation.action === 'users') {
    // Loaded only for this command: the server never needs it.
    const { usersCommand } = await import('./cli/users.ts')
    process.exitCode = await usersCommand(invocation.config)
    return
  }
  if (invocation.action === 'ops-help') {
    const { OPS_USAGE } = await import('./cli/ops-args.ts')
    return printLine(OPS_USAGE.trimEnd())
  }
  if (invocation.action === 'ops') {
    // Loaded only for these commands: the server never needs them.
    const { opsCommand } = await import('./cli/ops.ts')
    process.exitCode = await opsCommand(invocation.config)
    return
  }
  if (invocation.action === 'healthcheck') {
    const health = await checkHealth(invocation.config.url)
    if (health.healthy) printLine(`healthy: ${health.detail}`)
    else printErrorLine(`rock-legends: unhealthy: ${health.detail}`)
    process.exitCode = health.healthy ? 0 : 1
    return
  }
  serving = invocation.config
  const { log: mode, logLevel } = invocation.config
  // The process writes its log's lines alone: what the runtime and libraries print goes through it too.
  const log = createLogger(mode, logLevel)
  routeConsole(log)
  if (mode === 'json') {
    // Bun prints an uncaught error as source lines and a stack: one JSON object instead, and the same exit code.
    const crash = (error: unknown) => {
      log.error('stopped by an uncaught error', error)
      process.exit(1)
    }
    process.on('uncaughtException', crash)
    process.on('unhandledRejection', crash)
  }
  // Signals are caught before start-up begins, so one that arrives early still gets a clean stop.
  const starting = startServer(invocation.config)
  const shutdown = async (signal: NodeJS.Signals) => {
    const began = performance.now()
    const server = await starting.catch(() => undefined)
    if (server) log.info('draining', { signal, inFlight: server.inFlight })
    try {
      await (signal === HANDOVER_SIGNAL ? server?.handOver() : server?.stop())
    } catch (error) {
      // The store could not save on the way out; its message says what is kept where, and exit 1 says it failed.
      fail(1, (error as Error).message)
      process.exit(1)
    }
    if (server) log.info('stopped', { signal, drainMs: Math.round(performance.now() - began) })
    process.exit(0)
  }
  process.once('SIGINT', shutdown)
  process.once('SIGTERM', shutdown)
  // Over HTTPS, a hangup reads the certificate files again, as nginx and HAProxy reload on it: what a renewal hook
  // sends (with --https it says when the certificate is renewed, which it does itself). Without HTTPS (a closed terminal, an operator's `kill -HUP`) it stops as gracefully as SIGTERM rather
  // than at once: the server has nothing else to reload (its log is stderr, its options are read at start).
  if (servesHttps(invocation.config))
    process.on('SIGHUP', async () => {
      const server = await starting.catch(() => undefined)
      if (server && !(await server.reloadCertificates())) log.info('SIGHUP: no new certificate to serve')
    })
  else process.once('SIGHUP', shutdown)
  // A `--takeover` asks for the port and the data file with this one (src/ops/takeover.ts). Caught every time: a
  // second one, from another takeover, must not end the process at once as the signal's default would.
  process.on(HANDOVER_SIGNAL, shutdown)
  const server = await starting
  const { ui, data, signup } = invocation.config
  const facts = { url: server.url, ui, data, signup, metricsUrl: server.metricsUrl }
  // The first line, `rock-legends listening on URL`, is what scripts wait for; what a person needs follows it. With
  // --log json, one object in its place, whatever the level: it says the server is ready.
  if (mode === 'json') printLine(jsonLine('info', 'ready', readyFields(facts, pkg.version)))
  else printLine(banner(facts))
}

main(process.argv.slice(2)).catch((error: unknown) => {
  // `users` speaks its usage errors in one line (see `rock-legends users --help`).
  if (error instanceof UsageError && process.argv[2] === 'users')
    printErrorLine(`rock-legends users: ${error.message} (see rock-legends users --help)`)
  else if (error instanceof UsageError && ['verify', 'backup', 'restore', 'copy'].includes(process.argv[2] ?? ''))
    printErrorLine(`rock-legends ${process.argv[2]}: ${error.message} (see rock-legends ${process.argv[2]} --help)`)
  else if (error instanceof UsageError)
    fail(2, error.message, `${error.message}\n\n${USAGE.trimEnd()}`, { help: 'rock-legends --help' })
  else if (
    STARTUP_ERRORS.some((kind) => error instanceof kind) ||
    (error instanceof Error && STARTUP_ERROR_NAMES.has(error.name))
  )
    fail(2, (error as Error).message)
  else if ((error as NodeJS.ErrnoException).code === 'EACCES')
    fail(2, `permission denied to listen (${(error as Error).message}): ports below 1024 need CAP_NET_BIND_SERVICE`)
  else if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE')
    fail(2, `the address is already in use: ${(error as Error).message}`)
  else {
    // Unexpected: its stack goes with it, inside the JSON object with --log json.
    const stack = String((error as Error)?.stack ?? error)
    fail(1, `failed to start: ${(error as Error)?.message ?? error}`, `failed to start: ${stack}`, { error: stack })
    process.exit(1)
  }
  process.exit(2)
})
