#!/usr/bin/env bun
import pkg from '../package.json' with { type: 'json' }
import { banner } from './banner.ts'
import { parseArgs, USAGE, UsageError } from './config.ts'
import { checkHealth } from './healthcheck.ts'
import { printErrorLine, printLine } from './log.ts'
import { BackupDirError } from './ops/backup-dir-error.ts'
import { HANDOVER_SIGNAL } from './ops/takeover.ts'
import { SeedError } from './seed/seed-error.ts'
import { startServer } from './server.ts'
import { DataFileError, DataFileLockedError } from './store/json-file/errors.ts'
import { DatabaseUnavailableError } from './store/store.ts'

/** Errors that stop start-up with exit code 2 and one line, without a stack. */
const STARTUP_ERRORS = [
  UsageError,
  DataFileError,
  DataFileLockedError,
  SeedError,
  DatabaseUnavailableError,
  BackupDirError,
]

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
  // Signals are caught before start-up begins, so one that arrives early still gets a clean stop.
  const starting = startServer(invocation.config)
  const shutdown = async (signal: NodeJS.Signals) => {
    const server = await starting.catch(() => undefined)
    try {
      await (signal === HANDOVER_SIGNAL ? server?.handOver() : server?.stop())
    } catch (error) {
      // The store could not save on the way out; its message says what is kept where, and exit 1 says it failed.
      printErrorLine(`rock-legends: ${(error as Error).message}`)
      process.exit(1)
    }
    process.exit(0)
  }
  process.once('SIGINT', shutdown)
  process.once('SIGTERM', shutdown)
  // A hangup (a closed terminal, an operator's `kill -HUP`) stops as gracefully as SIGTERM rather than at once: the
  // server has nothing to reload (its log is stderr, its options are read at start).
  process.once('SIGHUP', shutdown)
  // A `--takeover` asks for the port and the data file with this one (src/ops/takeover.ts). Caught every time: a
  // second one, from another takeover, must not end the process at once as the signal's default would.
  process.on(HANDOVER_SIGNAL, shutdown)
  const server = await starting
  // The first line, `rock-legends listening on URL`, is what scripts wait for; what a person needs follows it.
  const { ui, data, signup } = invocation.config
  printLine(banner({ url: server.url, ui, data, signup, metricsUrl: server.metricsUrl }))
}

main(process.argv.slice(2)).catch((error: unknown) => {
  // `users` speaks its usage errors in one line (see `rock-legends users --help`).
  if (error instanceof UsageError && process.argv[2] === 'users')
    printErrorLine(`rock-legends users: ${error.message} (see rock-legends users --help)`)
  else if (error instanceof UsageError && ['verify', 'backup', 'restore', 'copy'].includes(process.argv[2] ?? ''))
    printErrorLine(`rock-legends ${process.argv[2]}: ${error.message} (see rock-legends ${process.argv[2]} --help)`)
  else if (error instanceof UsageError) printErrorLine(`rock-legends: ${error.message}\n\n${USAGE.trimEnd()}`)
  else if (STARTUP_ERRORS.some((kind) => error instanceof kind))
    printErrorLine(`rock-legends: ${(error as Error).message}`)
  else if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE')
    printErrorLine(`rock-legends: the address is already in use: ${(error as Error).message}`)
  else {
    printErrorLine(`rock-legends: failed to start: ${(error as Error)?.stack ?? error}`)
    process.exit(1)
  }
  process.exit(2)
})
