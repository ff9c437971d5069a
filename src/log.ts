import type { LogMode } from './config.ts'

/** Where the server writes what it does: start-up, seeding, failures. */
export interface Logger {
  info(message: string, fields?: Record<string, unknown>): void
  error(message: string, error?: unknown): void
}

const describeError = (error: unknown) =>
  error instanceof Error ? (error.stack ?? `${error.name}: ${error.message}`) : String(error)

/** A logger for `--log`: pretty lines on stderr, JSON lines on stderr, or nothing. */
export function createLogger(mode: LogMode): Logger {
  if (mode === 'off') return { info() {}, error() {} }
  if (mode === 'json') {
    const line = (level: string, message: string, fields: Record<string, unknown>) =>
      process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), level, message, ...fields })}\n`)
    return {
      info: (message, fields = {}) => line('info', message, fields),
      error: (message, error) => line('error', message, error === undefined ? {} : { error: describeError(error) }),
    }
  }
  return {
    info: (message, fields = {}) => {
      const extra = Object.entries(fields)
        .map(([key, value]) => `${key}=${typeof value === 'string' ? value : JSON.stringify(value)}`)
        .join(' ')
      process.stderr.write(`${message}${extra ? ` ${extra}` : ''}\n`)
    },
    error: (message, error) =>
      process.stderr.write(`error: ${message}${error === undefined ? '' : `\n${describeError(error)}`}\n`),
  }
}
