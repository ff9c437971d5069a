import { join } from 'node:path'
import type { Subprocess } from 'bun'

/**
 * The compiled server under test: `dist/rock-legends`, or the executable named by `BENCH_BINARY` (to measure another
 * build, e.g. the one before a change; bench/run.ts then builds nothing).
 */
export const BINARY = process.env.BENCH_BINARY || join(import.meta.dir, '..', 'dist', 'rock-legends')
/** json-server's command-line entry point, run with `node` as `npx json-server` would. */
const JSON_SERVER = join(import.meta.dir, '..', 'node_modules', 'json-server', 'lib', 'bin.js')

/** A server started as a child process, listening on loopback. */
export interface ServerProcess {
  /** The base URL, e.g. `http://127.0.0.1:41234`. */
  url: string
  /** `performance.now()` just before the process was spawned. */
  spawnedAt: number
  /** Milliseconds from the spawn to the ready line. */
  readyMs: number
  /** CPU time the process has used so far, user and system, in seconds (from /proc). */
  cpuSeconds(): Promise<number>
  /** The process's resident memory now and at its peak so far (VmRSS and VmHWM from /proc). */
  memory(): Promise<Memory>
  /** Sends SIGTERM and waits for the process to exit, sending SIGKILL if it takes more than 30 s. */
  stop(): Promise<void>
  /** The file its stderr (the access log) goes to, when not ours. */
  logFile?: string
}

/** Resident memory of a process, in bytes. */
export interface Memory {
  rss: number
  peak: number
}

/** How to start a server and recognise that it is ready. */
interface Launch {
  command: string[]
  /** Matches the ready line on stdout. */
  ready: RegExp
  /** The base URL, from the ready line's match. */
  url: (match: RegExpExecArray) => string
  cwd?: string
  /** A file for the process's stderr; ours by default. */
  logFile?: string
}

// The unit of the times in /proc/PID/stat: USER_HZ, which Linux fixes at 100 for user space.
const USER_HZ = 100
const READY_TIMEOUT_MS = 120_000
// Generous: rock-legends flushes its store on SIGTERM, which takes a while with a large catalogue.
const STOP_TIMEOUT_MS = 30_000

/** Reads and discards the rest of a stream. */
async function drain(reader: { read(): Promise<{ done?: boolean }> }): Promise<void> {
  while (!(await reader.read().catch(() => ({ done: true }))).done);
}

/** Reads `stdout` until a line matches `ready`, or the process exits, or time runs out. */
async function waitForReady(
  child: Pick<Subprocess<'ignore', 'pipe'>, 'stdout' | 'kill'>,
  ready: RegExp,
): Promise<RegExpExecArray> {
  const reader = child.stdout.getReader()
  const decoder = new TextDecoder()
  let text = ''
  const timeout = setTimeout(() => child.kill('SIGKILL'), READY_TIMEOUT_MS)
  try {
    while (true) {
      const { value, done } = await reader.read()
      if (done) throw new Error(`the server exited before it was ready; it printed:\n${text}`)
      text += decoder.decode(value, { stream: true })
      const match = ready.exec(text)
      if (match) return match
    }
  } finally {
    clearTimeout(timeout)
    // Keep draining stdout, so that a chatty server never blocks on a full pipe.
    void drain(reader)
  }
}

/** The last lines of a log file, to explain a failure. */
async function tail(file: string): Promise<string> {
  const text = await Bun.file(file)
    .text()
    .catch(() => '')
  return text.split('\n').slice(-20).join('\n')
}

/**
 * Starts a server and resolves once it prints its ready line. Its stderr goes to ours, so a failure explains itself,
 * or to `logFile`, whose end is then shown on a failure to start.
 */
async function startServerProcess({ command, ready, url: urlOf, cwd, logFile }: Launch): Promise<ServerProcess> {
  const spawnedAt = performance.now()
  const stderr = logFile ? Bun.file(logFile) : 'inherit'
  const child = Bun.spawn(command, { cwd, stdin: 'ignore', stdout: 'pipe', stderr })
  let url: string
  let readyMs: number
  try {
    const match = await waitForReady(child, ready)
    readyMs = performance.now() - spawnedAt
    url = urlOf(match)
    if (!url.startsWith('http://127.0.0.1:')) throw new Error(`the server listens on ${url}, not on 127.0.0.1`)
  } catch (error) {
    child.kill('SIGKILL')
    await child.exited
    if (logFile) process.stderr.write(`${command.join(' ')} wrote on stderr:\n${await tail(logFile)}\n`)
    throw error
  }
  return {
    url,
    logFile,
    spawnedAt,
    readyMs,
    cpuSeconds: async () => {
      const stat = await Bun.file(`/proc/${child.pid}/stat`).text()
      // Fields after the command name, which is in parentheses and may hold spaces: utime and stime are 12th and 13th.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      return (Number(fields[11]) + Number(fields[12])) / USER_HZ
    },
    memory: async () => {
      const status = await Bun.file(`/proc/${child.pid}/status`).text()
      const kib = (field: string) => {
        const value = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(status)?.[1]
        if (!value) throw new Error(`no ${field} in /proc/${child.pid}/status`)
        return Number(value) * 1024
      }
      return { rss: kib('VmRSS'), peak: kib('VmHWM') }
    },
    stop: async () => {
      child.kill('SIGTERM')
      const timeout = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS)
      await child.exited
      clearTimeout(timeout)
    },
  }
}

/**
 * Starts the compiled rock-legends on a free loopback port with `args` added: as users start it, with the default
 * pretty access log on stderr, written into `logFile`; or, without a `logFile`, with `--log off`.
 */
export function startRockLegends(args: string[], logFile?: string, binary = BINARY): Promise<ServerProcess> {
  const log = logFile ? [] : ['--log', 'off']
  return startServerProcess({
    command: [binary, '--host', '127.0.0.1', '--port', '0', ...log, ...args],
    ready: /^rock-legends listening on (\S+)$/m,
    url: (match) => match[1] as string,
    logFile,
  })
}

/** Starts bench/ceiling.ts, serving the responses recorded in `responsesFile`. */
export function startCeiling(responsesFile: string): Promise<ServerProcess> {
  return startServerProcess({
    command: [process.execPath, join(import.meta.dir, 'ceiling.ts'), responsesFile],
    ready: /^ceiling listening on (\S+)$/m,
    url: (match) => match[1] as string,
  })
}

/** A port that was free a moment ago, for servers that cannot pick their own (json-server prints `:0` for 0). */
function freePort(): number {
  const probe = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
  const { port } = probe
  probe.stop(true)
  return port
}

/**
 * Starts json-server on `dbFile` with `node`, as its README runs it (`json-server db.json`, defaults otherwise: file
 * watching on, no NODE_ENV), from the file's directory.
 */
export function startJsonServer(dbFile: string, cwd: string): Promise<ServerProcess> {
  const port = freePort()
  return startServerProcess({
    command: ['node', JSON_SERVER, dbFile, '--host', '127.0.0.1', '--port', String(port)],
    ready: /JSON Server started on PORT :(\d+)/,
    url: (match) => `http://127.0.0.1:${match[1]}`,
    cwd,
  })
}
