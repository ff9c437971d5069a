import type { LogMode } from './config.ts'

/** One answered request, as the access log records it. */
export interface AccessEntry {
  method: string
  /** The path and query as the client sent them. */
  path: string
  status: number
  /** From the request's arrival to the handler's answer, in milliseconds. */
  durationMs: number
  /** The `X-Request-Id` of the answer: the client's own, or one generated for it. */
  requestId: string
}

/** Where the server writes what it does: start-up, seeding, requests, failures. */
export interface Logger {
  info(message: string, fields?: Record<string, unknown>): void
  error(message: string, error?: unknown): void
  /** One line per answered request; absent with `--log off`, so the server then does no per-request work at all. */
  access?: (entry: AccessEntry) => void
}

// Lines go out through the console rather than `process.stdout` and `process.stderr`: the first touch of those builds
// Node's stream machinery, about 8 ms of start-up in the compiled executable (bench/startup.ts). Each line is one
// write, and the console writes a lone string as it is.

/** Writes one line (without its newline) to stdout. */
export const printLine = (line: string) => console.log(line)

/** Writes one line (without its newline) to stderr. */
export const printErrorLine = (line: string) => console.error(line)

const describeError = (error: unknown) =>
  error instanceof Error ? (error.stack ?? `${error.name}: ${error.message}`) : String(error)

// ANSI colours for the status of pretty access lines, only on a terminal that does not ask for none.
const paint = (code: number, text: string) => `\x1b[${code}m${text}\x1b[0m`
const statusColour = (status: number) => (status >= 500 ? 31 : status >= 400 ? 33 : status >= 300 ? 36 : 32)

/** The pretty access line: `GET /api/v1/artists 200 1.2 ms 0190…`. */
export function prettyAccess(entry: AccessEntry, colour = false): string {
  const status = colour ? paint(statusColour(entry.status), String(entry.status)) : String(entry.status)
  const id = colour ? paint(2, entry.requestId) : entry.requestId
  return `${entry.method} ${entry.path} ${status} ${entry.durationMs.toFixed(1)} ms ${id}`
}

/** A logger for `--log`: pretty lines on stderr, JSON lines on stderr, or nothing. */
export function createLogger(mode: LogMode): Logger {
  if (mode === 'off') return { info() {}, error() {} }
  if (mode === 'json') {
    const line = (level: string, message: string, fields: Record<string, unknown>) =>
      printErrorLine(JSON.stringify({ time: new Date().toISOString(), level, message, ...fields }))
    return {
      info: (message, fields = {}) => line('info', message, fields),
      error: (message, error) => line('error', message, error === undefined ? {} : { error: describeError(error) }),
      access: (entry) => line('info', 'request', { ...entry, durationMs: Math.round(entry.durationMs * 1000) / 1000 }),
    }
  }
  // Asked on the first access line, after the first answer has gone out: `isTTY` builds the stream start-up avoids.
  let colour: boolean | undefined
  return {
    info: (message, fields = {}) => {
      const extra = Object.entries(fields)
        .map(([key, value]) => `${key}=${typeof value === 'string' ? value : JSON.stringify(value)}`)
        .join(' ')
      printErrorLine(`${message}${extra ? ` ${extra}` : ''}`)
    },
    error: (message, error) =>
      printErrorLine(`error: ${message}${error === undefined ? '' : `\n${describeError(error)}`}`),
    access: (entry) => {
      colour ??= process.stderr.isTTY === true && !process.env.NO_COLOR
      printErrorLine(prettyAccess(entry, colour))
    },
  }
}
