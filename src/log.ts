import { printable, printableJson, printableLines, printableMessage } from './text/printable.ts'

/** How the server can log: human-readable lines, one JSON object per line, or nothing. */
export const LOG_MODES = ['pretty', 'json', 'off'] as const
/** How the server logs. */
export type LogMode = (typeof LOG_MODES)[number]

/** How important a line is, least first: `--log-level` writes the lines of its level and above. */
export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const
/** How important a log line is. */
export type LogLevel = (typeof LOG_LEVELS)[number]

const RANK: Readonly<Record<LogLevel, number>> = { debug: 0, info: 1, warn: 2, error: 3 }

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
  /** Whether it was a health check (`GET` or `HEAD` of `/livez`, `/readyz`, `/healthz`): a load balancer's, every few seconds. */
  healthCheck?: boolean
}

/**
 * The level of an access line: `debug` for a health check (answered or failed: a load balancer asks every few
 * seconds, and a store that is away is logged once by itself), `error` for a 5xx answer (the server failed the
 * request), `info` for the rest, 4xx included (a client's mistake is the service working as meant).
 */
export function accessLevel(entry: AccessEntry): LogLevel {
  if (entry.healthCheck) return 'debug'
  return entry.status >= 500 ? 'error' : 'info'
}

/** The longest `User-Agent` a line keeps: a client sending kilobytes of it must not make every line that long. */
export const MAX_USER_AGENT = 256

/** Where the server writes what it does: start-up, seeding, requests, lifecycle, failures. */
export interface Logger {
  /** What only someone looking into the server wants (`--log-level debug`). */
  debug(message: string, fields?: Record<string, unknown>): void
  /** What the server does: it started, seeded, took a backup, is stopping. */
  info(message: string, fields?: Record<string, unknown>): void
  /** What the operator should look at, though the server goes on as it should (a torn journal line cut off). */
  warn(message: string, fields?: Record<string, unknown>): void
  /** What failed; `error`'s stack goes with it. */
  error(message: string, error?: unknown): void
  /**
   * One line per answered request, at the level {@link accessLevel} gives it; absent with `--log off`, so the server
   * then does no per-request work at all.
   */
  access?: (entry: AccessEntry) => void
}

// Lines go out through the console rather than `process.stdout` and `process.stderr`: the first touch of those builds
// Node's stream machinery, about 8 ms of start-up in the compiled executable (bench/startup.ts). The console writes a
// lone string as it is, synchronously, in one write.
//
// What users gave (names, emails, request targets, another server's answers) may hold control characters. Each
// place that prints such a value escapes it as one field (see src/text/printable.ts); and nothing printed here
// reaches a terminal with a control character in it but the newlines of a text of several lines.

// Where lines go: the console's own methods, looked up at each write (tests watch them), until routeConsole puts
// its own in their place and keeps the originals for these.
let toStdout = (text: string) => console.log(text)
let toStderr = (text: string) => console.error(text)

/** Writes one line (without its newline) to stdout, its control characters but newlines shown escaped. */
export const printLine = (line: string) => toStdout(printableLines(line))

/** Writes one line (without its newline) to stderr, after the access lines waiting to go there; escaped likewise. */
export function printErrorLine(line: string): void {
  flushLog()
  toStderr(printableLines(line))
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
  toStderr(text)
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
 * if not given), `level` ({@link accessLevel}) and `message`.
 */
export function jsonAccess(entry: AccessEntry, time = Date.now()): string {
  const { method, path, status, bytes, durationMs, requestId, client, userAgent, caller } = entry
  const level = accessLevel(entry)
  const duration = Math.round(durationMs * 1000) / 1000
  const size = bytes === undefined ? '' : `,"bytes":${bytes}`
  // JSON.stringify escapes the C0 controls; printableJson the rest a terminal would act on (DEL, C1, bidi).
  const agent = userAgent === undefined ? '' : `,"userAgent":${printableJson(JSON.stringify(userAgent))}`
  const who = caller === undefined ? '' : `,"caller":${JSON.stringify(caller)}`
  return `{"time":"${new Date(time).toISOString()}","level":"${level}","message":"request","method":${printableJson(JSON.stringify(method))},"path":${printableJson(JSON.stringify(path))},"status":${status}${size},"durationMs":${duration},"requestId":${JSON.stringify(requestId)},"client":${printableJson(JSON.stringify(client))}${agent}${who}}`
}

/** Whether stderr is a terminal that takes colours; asked lazily, since `process.stderr` costs start-up time. */
function colourful(): boolean {
  if (process.env.NO_COLOR) return false
  const { isatty } = require('node:tty') as typeof import('node:tty')
  return isatty(2)
}

/**
 * One JSON log line: `time` (now), `level` and `message`, then `fields`. What it quotes is escaped for a terminal
 * (see src/text/printable.ts).
 *
 * @example
 * printErrorLine(jsonLine('info', 'stopped', { drainMs: 12 }))
 */
export function jsonLine(level: LogLevel, message: string, fields: Record<string, unknown> = {}): string {
  return printableJson(JSON.stringify({ time: new Date().toISOString(), level, message, ...fields }))
}

/** The pretty line of a message and its fields: `seeded the catalogue artists=32 albums=307`. */
function prettyLine(message: string, fields: Record<string, unknown>): string {
  const extra = Object.entries(fields)
    .filter(([, value]) => value !== undefined)
    .map(([key, value]) => `${key}=${typeof value === 'string' ? printable(value) : JSON.stringify(value)}`)
    .join(' ')
  return `${printableMessage(message)}${extra ? ` ${extra}` : ''}`
}

/** What a logger's lines below its level do: nothing. */
const ignore = () => {}

/**
 * Keeps the access lines of `level` and above: all at `debug`; at `info` all but the health checks'; above it only
 * the 5xx answers'. Each line is queued as `format` makes it, with its time when `timed`.
 */
function accessAt(level: LogLevel, format: AccessFormat, timed: boolean): (entry: AccessEntry) => void {
  const write = timed
    ? (entry: AccessEntry) => queue(format, entry, Date.now())
    : (entry: AccessEntry) => queue(format, entry)
  if (level === 'debug') return write
  // The default, on every request's path: one property read more than writing them all.
  if (level === 'info')
    return (entry) => {
      if (!entry.healthCheck) write(entry)
    }
  const least = RANK[level]
  return (entry) => {
    if (RANK[accessLevel(entry)] >= least) write(entry)
  }
}

/**
 * A logger for `--log` and `--log-level`: pretty lines on stderr, JSON lines on stderr, or nothing; lines below
 * `level` are not written. Access lines are buffered and written in batches (see {@link flushLog}); the others are
 * written at once.
 *
 * @example
 * const log = createLogger('json', 'info')
 * log.warn('cut off a torn journal line', { journal: '/var/lib/rock-legends/db.json.journal', at: 4096, bytes: 37 })
 */
export function createLogger(mode: LogMode, level: LogLevel = 'info'): Logger {
  if (mode === 'off') return { debug: ignore, info: ignore, warn: ignore, error: ignore }
  const least = RANK[level]
  const at = <F extends (...args: never[]) => void>(lineLevel: LogLevel, write: F): F =>
    RANK[lineLevel] >= least ? write : (ignore as F)
  if (mode === 'json') {
    const line =
      (lineLevel: LogLevel) =>
      (message: string, fields: Record<string, unknown> = {}) =>
        printErrorLine(jsonLine(lineLevel, message, fields))
    return {
      debug: at('debug', line('debug')),
      info: at('info', line('info')),
      warn: at('warn', line('warn')),
      error: (message, error) =>
        printErrorLine(jsonLine('error', message, error === undefined ? {} : { error: describeError(error) })),
      access: accessAt(level, jsonLines, true),
    }
  }
  // Asked at the first flush of access lines, after the first answer has gone out.
  let colour: boolean | undefined
  const pretty: AccessFormat = (entries) => {
    colour ??= colourful()
    return prettyLines(entries, colour)
  }
  return {
    debug: at('debug', (message, fields = {}) => printErrorLine(`debug: ${prettyLine(message, fields)}`)),
    info: at('info', (message, fields = {}) => printErrorLine(prettyLine(message, fields))),
    warn: at('warn', (message, fields = {}) => printErrorLine(`warning: ${prettyLine(message, fields)}`)),
    error: (message, error) =>
      printErrorLine(`error: ${printableMessage(message)}${error === undefined ? '' : `\n${prettyError(error)}`}`),
    access: accessAt(level, pretty, false),
  }
}

/** The console methods {@link routeConsole} takes over, and the level of what each writes. */
const CONSOLE_LEVELS = {
  debug: 'debug',
  trace: 'debug',
  log: 'info',
  info: 'info',
  warn: 'warn',
  error: 'error',
} as const

/**
 * Sends what the runtime and libraries write through the console (Bun's SQL client warns `bun:sql LISTEN … failed,
 * retrying` that way) through `logger`, at the level of the method, so that the process writes nothing but its log's
 * lines: one JSON object per line with `--log json`, pretty lines at their level otherwise, nothing with `--log
 * off`. For the executable, which owns its process: an embedding process keeps its console. `printLine` and
 * `printErrorLine` write through the console's own methods meanwhile. Returns what puts them all back.
 */
export function routeConsole(logger: Logger): () => void {
  const own = { ...console }
  const writers = { toStdout, toStderr }
  toStdout = (text) => own.log.call(console, text)
  toStderr = (text) => own.error.call(console, text)
  const { format } = require('node:util') as typeof import('node:util')
  for (const [method, level] of Object.entries(CONSOLE_LEVELS) as [keyof typeof CONSOLE_LEVELS, LogLevel][]) {
    console[method] = (...args: unknown[]) => {
      // An error given last (`console.error('could not …', error)`) goes with its stack, as the logger's own do.
      const last = args.at(-1)
      if (level === 'error' && last instanceof Error && args.length > 1)
        logger.error(format(...args.slice(0, -1)), last)
      else if (level === 'error') logger.error(format(...args))
      else logger[level](format(...args))
    }
  }
  return () => {
    for (const method of Object.keys(CONSOLE_LEVELS) as (keyof typeof CONSOLE_LEVELS)[]) console[method] = own[method]
    ;({ toStdout, toStderr } = writers)
  }
}
