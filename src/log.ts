import { printable, printableJson, printableLines, printableMessage } from './text/printable.ts'

/** How the server can log: human-readable lines, one JSON object per line, or nothing. */
export const LOG_MODES = ['pretty', 'json', 'off'] as const
/** How the server logs. */
export type LogMode = (typeof LOG_MODES)[number]

/** One answered request, as the access log records it. */
export interface AccessEntry {
  method: string
  /** The path and query as the client sent them. */
  path: string
  status: number
  /** The bytes of its body as sent (compressed, if it was); absent for a streamed body, whose size is not known. */
  bytes?: number
  /**
   * From the route's first step (its credential check and body for a write, else its handler) to its answer, in
   * milliseconds; about 0 for answers made before any route runs (an unknown path, a `--read-only` refusal).
   */
  durationMs: number
  /** The `X-Request-Id` of the answer: the client's own, or one generated for it. */
  requestId: string
  /**
   * Who asked: the socket's peer, or the client a proxy listed in `--trust-proxy` names (`in-process` for calls
   * without a socket).
   */
  client: string
  /** Its `User-Agent`, cut at {@link MAX_USER_AGENT} characters; absent without one. */
  userAgent?: string
  /** Who it was let through as, on a route that checks credentials (`service`, `user:12/token:34`); never a secret. */
  caller?: string
}

/** The longest `User-Agent` a line keeps: a client sending kilobytes of it must not make every line that long. */
export const MAX_USER_AGENT = 256

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
// What waits is the entries themselves, made into lines at the flush, back to back: a request pays for little more
// than putting its entry in a list (bench/RESULTS.md, "The price of the hooks", measures the difference). A flush comes at most FLUSH_MS after the first waiting entry, sooner once their text would be
// MAX_WAITING characters, before any other line goes to stderr, when the server stops and when the process exits
// (main stops the server on SIGTERM and SIGINT, then exits).
const FLUSH_MS = 50
const MAX_WAITING = 1 << 20
/**
 * Turns the waiting entries (at least one) into their lines, joined by newlines; `times[i]` is when `entries[i]` was
 * queued (Unix ms), for a format that shows it (the others queue no times).
 */
type AccessFormat = (entries: readonly AccessEntry[], times: readonly number[]) => string
const waiting: AccessEntry[] = []
const waitingTimes: number[] = []
/** The format of the waiting entries; entries of another format flush them first. */
let waitingFormat: AccessFormat | undefined
/** About as many characters as the waiting entries' lines will have (their own strings, and a constant for the rest). */
let waitingChars = 0
let timer: ReturnType<typeof setTimeout> | undefined
let exitHooked = false

/** Writes the access lines waiting for a flush, synchronously, in one write. */
export function flushLog(): void {
  if (timer !== undefined) {
    clearTimeout(timer)
    timer = undefined
  }
  if (waitingFormat === undefined || waiting.length === 0) return
  const text = waitingFormat(waiting, waitingTimes)
  waiting.length = 0
  waitingTimes.length = 0
  waitingChars = 0
  // The console adds the last newline.
  console.error(text)
}

/** Queues one access entry, to be written as `format` makes it at the next flush, with `time` if the format shows it. */
function queue(format: AccessFormat, entry: AccessEntry, time?: number): void {
  if (format !== waitingFormat) {
    flushLog()
    waitingFormat = format
  }
  waiting.push(entry)
  if (time !== undefined) waitingTimes.push(time)
  waitingChars += entry.method.length + entry.path.length + entry.requestId.length + 40
  if (waitingChars >= MAX_WAITING) flushLog()
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

/** What {@link printable} would change: all but printable ASCII, and the backslash. */
const NOT_PLAIN = /[^\x20-\x5b\x5d-\x7e]/
const shown = (text: string) => (NOT_PLAIN.test(text) ? printable(text) : text)

/**
 * `ms` with one decimal, as `toFixed(1)` writes it (but for a value that is exactly halfway once multiplied by ten,
 * which this rounds up), in about half its time.
 */
function tenths(ms: number): string {
  const count = Math.round(ms * 10)
  if (!(count >= 0 && count <= Number.MAX_SAFE_INTEGER)) return ms.toFixed(1)
  return `${Math.floor(count / 10)}.${count % 10}`
}

/**
 * The pretty access line: `POST /api/v1/artists 201 97 B 1.2 ms 203.0.113.7 "curl/8.5.0" user:12/token:34 0190…`:
 * the status and the body's size (`stream` for a streamed body), the duration, the client, its user agent and (after
 * a credential check) the caller, then the request id last. The method, target and user agent are the client's:
 * their control characters are shown escaped (Bun lets a CONNECT target through as it was sent, bidi controls and
 * all).
 */
export function prettyAccess(entry: AccessEntry, colour = false): string {
  const { method, path, status, bytes, durationMs, requestId, client, userAgent, caller } = entry
  const size = bytes === undefined ? 'stream' : `${bytes} B`
  const agent = userAgent === undefined ? '' : ` "${shown(userAgent)}"`
  const who = `${shown(client)}${agent}${caller === undefined ? '' : ` ${caller}`}`
  if (!colour) return `${shown(method)} ${shown(path)} ${status} ${size} ${tenths(durationMs)} ms ${who} ${requestId}`
  return `${shown(method)} ${shown(path)} ${paint(statusColour(status), String(status))} ${size} ${tenths(durationMs)} ms ${who} ${paint(2, requestId)}`
}

/** The pretty lines of `entries`, joined by newlines. */
function prettyLines(entries: readonly AccessEntry[], colour: boolean): string {
  const lines = new Array<string>(entries.length)
  for (let i = 0; i < entries.length; i++) lines[i] = prettyAccess(entries[i] as AccessEntry, colour)
  return lines.join('\n')
}

/** The JSON lines of `entries`, joined by newlines. */
function jsonLines(entries: readonly AccessEntry[], times: readonly number[]): string {
  const lines = new Array<string>(entries.length)
  for (let i = 0; i < entries.length; i++) lines[i] = jsonAccess(entries[i] as AccessEntry, times[i])
  return lines.join('\n')
}

/**
 * The JSON access line, with the fields of an {@link AccessEntry} after `time` (when it was answered, Unix ms; now
 * if not given), `level` and `message`.
 */
export function jsonAccess(entry: AccessEntry, time = Date.now()): string {
  const { method, path, status, bytes, durationMs, requestId, client, userAgent, caller } = entry
  const duration = Math.round(durationMs * 1000) / 1000
  const size = bytes === undefined ? '' : `,"bytes":${bytes}`
  // JSON.stringify escapes the C0 controls; printableJson the rest a terminal would act on (DEL, C1, bidi).
  const agent = userAgent === undefined ? '' : `,"userAgent":${printableJson(JSON.stringify(userAgent))}`
  const who = caller === undefined ? '' : `,"caller":${JSON.stringify(caller)}`
  return `{"time":"${new Date(time).toISOString()}","level":"info","message":"request","method":${printableJson(JSON.stringify(method))},"path":${printableJson(JSON.stringify(path))},"status":${status}${size},"durationMs":${duration},"requestId":${JSON.stringify(requestId)},"client":${printableJson(JSON.stringify(client))}${agent}${who}}`
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
      access: (entry) => queue(jsonLines, entry, Date.now()),
    }
  }
  // Asked at the first flush of access lines, after the first answer has gone out.
  let colour: boolean | undefined
  const pretty: AccessFormat = (entries) => {
    colour ??= colourful()
    return prettyLines(entries, colour)
  }
  return {
    info: (message, fields = {}) => {
      const extra = Object.entries(fields)
        .map(([key, value]) => `${key}=${typeof value === 'string' ? printable(value) : JSON.stringify(value)}`)
        .join(' ')
      printErrorLine(`${printableMessage(message)}${extra ? ` ${extra}` : ''}`)
    },
    error: (message, error) =>
      printErrorLine(`error: ${printableMessage(message)}${error === undefined ? '' : `\n${prettyError(error)}`}`),
    access: (entry) => queue(pretty, entry),
  }
}
