import type { LogMode } from './config.ts'
import { printable, printableJson, printableLines, printableMessage } from './text/printable.ts'

/** One answered request, as the access log records it. */
export interface AccessEntry {
  method: string
  /** The path and query as the client sent them. */
  path: string
  status: number
  /**
   * From the route's first step (its credential check and body for a write, else its handler) to its answer, in
   * milliseconds; about 0 for answers made before any route runs (an unknown path, a `--read-only` refusal).
   */
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
// Node's stream machinery, about 8 ms of start-up in the compiled executable (bench/startup.ts). The console writes a
// lone string as it is, synchronously, in one write.
//
// What users gave (names, emails, request targets, another server's answers) may hold control characters. Each
// place that prints such a value escapes it as one field (see src/text/printable.ts); and nothing printed here
// reaches a terminal with a control character in it but the newlines of a text of several lines.

/** Writes one line (without its newline) to stdout, its control characters but newlines shown escaped. */
export const printLine = (line: string) => console.log(printableLines(line))

/** Writes one line (without its newline) to stderr, after the access lines waiting to go there; escaped likewise. */
export function printErrorLine(line: string): void {
  flushLog()
  console.error(printableLines(line))
}

// Access lines, one per request, are gathered and go out together: one write per flush instead of one per request.
// A flush comes at most FLUSH_MS after the first waiting line, sooner once MAX_WAITING characters wait, before any
// other line goes to stderr, when the server stops and when the process exits (main stops the server on SIGTERM and
// SIGINT, then exits).
const FLUSH_MS = 50
const MAX_WAITING = 1 << 20
let waiting = ''
let timer: ReturnType<typeof setTimeout> | undefined
let exitHooked = false

/** Writes the access lines waiting for a flush, synchronously, in one write. */
export function flushLog(): void {
  if (timer !== undefined) {
    clearTimeout(timer)
    timer = undefined
  }
  if (waiting === '') return
  const text = waiting
  waiting = ''
  // The lines end in a newline each, and the console adds one more.
  console.error(text.slice(0, -1))
}

/** Queues one access line (with its newline) for the next flush. */
function queue(line: string): void {
  waiting += line
  if (waiting.length >= MAX_WAITING) flushLog()
  else if (timer === undefined) {
    // Unreferenced: waiting lines never keep the process alive, and the exit hook writes them.
    timer = setTimeout(flushLog, FLUSH_MS)
    timer.unref()
    if (!exitHooked) {
      exitHooked = true
      process.on('exit', flushLog)
    }
  }
}

const describeError = (error: unknown) =>
  error instanceof Error ? (error.stack ?? `${error.name}: ${error.message}`) : String(error)

/** {@link describeError} for a person: the message (which may quote a visitor's input) kept to its line. */
function prettyError(error: unknown): string {
  if (!(error instanceof Error)) return printableMessage(String(error))
  const head = `${error.name}: ${error.message}`
  const stack = error.stack ?? head
  return stack.startsWith(head) ? `${printableMessage(head)}${stack.slice(head.length)}` : stack
}

// ANSI colours for the status of pretty access lines, only on a terminal that does not ask for none.
const paint = (code: number, text: string) => `\x1b[${code}m${text}\x1b[0m`
const statusColour = (status: number) => (status >= 500 ? 31 : status >= 400 ? 33 : status >= 300 ? 36 : 32)

/**
 * The pretty access line: `GET /api/v1/artists 200 1.2 ms 0190…`. The method and target are the client's: their
 * control characters are shown escaped (Bun lets a CONNECT target through as it was sent, bidi controls and all).
 */
export function prettyAccess(entry: AccessEntry, colour = false): string {
  const { status, durationMs, requestId } = entry
  const method = printable(entry.method)
  const path = printable(entry.path)
  if (!colour) return `${method} ${path} ${status} ${durationMs.toFixed(1)} ms ${requestId}`
  return `${method} ${path} ${paint(statusColour(status), String(status))} ${durationMs.toFixed(1)} ms ${paint(2, requestId)}`
}

/** The JSON access line, with the fields of an {@link AccessEntry} after `time`, `level` and `message`. */
export function jsonAccess({ method, path, status, durationMs, requestId }: AccessEntry): string {
  const duration = Math.round(durationMs * 1000) / 1000
  // JSON.stringify escapes the C0 controls; printableJson the rest a terminal would act on (DEL, C1, bidi).
  return `{"time":"${new Date().toISOString()}","level":"info","message":"request","method":${printableJson(JSON.stringify(method))},"path":${printableJson(JSON.stringify(path))},"status":${status},"durationMs":${duration},"requestId":${JSON.stringify(requestId)}}`
}

/** Whether stderr is a terminal that takes colours; asked lazily, since `process.stderr` costs start-up time. */
function colourful(): boolean {
  if (process.env.NO_COLOR) return false
  const { isatty } = require('node:tty') as typeof import('node:tty')
  return isatty(2)
}

/**
 * A logger for `--log`: pretty lines on stderr, JSON lines on stderr, or nothing. Access lines are buffered and
 * written in batches (see {@link flushLog}); the others are written at once.
 */
export function createLogger(mode: LogMode): Logger {
  if (mode === 'off') return { info() {}, error() {} }
  if (mode === 'json') {
    const line = (level: string, message: string, fields: Record<string, unknown>) =>
      printErrorLine(printableJson(JSON.stringify({ time: new Date().toISOString(), level, message, ...fields })))
    return {
      info: (message, fields = {}) => line('info', message, fields),
      error: (message, error) => line('error', message, error === undefined ? {} : { error: describeError(error) }),
      access: (entry) => queue(`${jsonAccess(entry)}\n`),
    }
  }
  // Asked on the first access line, after the first answer has gone out.
  let colour: boolean | undefined
  return {
    info: (message, fields = {}) => {
      const extra = Object.entries(fields)
        .map(([key, value]) => `${key}=${typeof value === 'string' ? printable(value) : JSON.stringify(value)}`)
        .join(' ')
      printErrorLine(`${printableMessage(message)}${extra ? ` ${extra}` : ''}`)
    },
    error: (message, error) =>
      printErrorLine(`error: ${printableMessage(message)}${error === undefined ? '' : `\n${prettyError(error)}`}`),
    access: (entry) => {
      colour ??= colourful()
      queue(`${prettyAccess(entry, colour)}\n`)
    },
  }
}
