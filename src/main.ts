#!/usr/bin/env bun
import pkg from '../package.json' with { type: 'json' }
import { parseArgs, USAGE, UsageError } from './config.ts'
import { checkHealth } from './healthcheck.ts'
import { SeedError } from './seed/seed.ts'
import { startServer } from './server.ts'
import { DataFileError } from './store/json-file.ts'
import { DataFileLockedError } from './store/lock.ts'

/** Errors that stop start-up with exit code 2 and one line, without a stack. */
const STARTUP_ERRORS = [UsageError, DataFileError, DataFileLockedError, SeedError]

async function main(argv: string[]): Promise<void> {
  const invocation = parseArgs(argv, process.env)
  if (invocation.action === 'help') return void process.stdout.write(USAGE)
  if (invocation.action === 'version') return void process.stdout.write(`rock-legends ${pkg.version}\n`)
  if (invocation.action === 'healthcheck') {
    const health = await checkHealth(invocation.config.url)
    if (health.healthy) process.stdout.write(`healthy: ${health.detail}\n`)
    else process.stderr.write(`rock-legends: unhealthy: ${health.detail}\n`)
    process.exitCode = health.healthy ? 0 : 1
    return
  }
  // Signals are caught before start-up begins, so one that arrives early still gets a clean stop.
  const starting = startServer(invocation.config)
  const shutdown = async () => {
    const server = await starting.catch(() => undefined)
    try {
      await server?.stop()
    } catch (error) {
      // The store could not save on the way out; its message says what is kept where, and exit 1 says it failed.
      process.stderr.write(`rock-legends: ${(error as Error).message}\n`)
      process.exit(1)
    }
    process.exit(0)
  }
  process.once('SIGINT', shutdown)
  process.once('SIGTERM', shutdown)
  const server = await starting
  process.stdout.write(`rock-legends listening on ${server.url}\n`)
}

main(process.argv.slice(2)).catch((error: unknown) => {
  if (error instanceof UsageError) process.stderr.write(`rock-legends: ${error.message}\n\n${USAGE}`)
  else if (STARTUP_ERRORS.some((kind) => error instanceof kind))
    process.stderr.write(`rock-legends: ${(error as Error).message}\n`)
  else if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE')
    process.stderr.write(`rock-legends: the address is already in use: ${(error as Error).message}\n`)
  else {
    process.stderr.write(`rock-legends: failed to start: ${(error as Error)?.stack ?? error}\n`)
    process.exit(1)
  }
  process.exit(2)
})
