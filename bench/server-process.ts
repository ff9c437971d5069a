import { join } from 'node:path'
import type { Subprocess } from 'bun'

/** The compiled server under test. */
export const BINARY = join(import.meta.dir, '..', 'dist', 'rock-legends')

/** A server started as a child process, listening on loopback. */
export interface ServerProcess {
  /** The base URL from the ready line, e.g. `http://127.0.0.1:41234`. */
  url: string
  /** CPU time the process has used so far, user and system, in seconds (from /proc). */
  cpuSeconds(): Promise<number>
  /** Sends SIGTERM and waits for the process to exit, sending SIGKILL if it takes more than 10 s. */
  stop(): Promise<void>
}

// The unit of the times in /proc/PID/stat: USER_HZ, which Linux fixes at 100 for user space.
const USER_HZ = 100
const READY_TIMEOUT_MS = 60_000
const STOP_TIMEOUT_MS = 10_000

/** Reads `stdout` until a line matches `ready` (whose first group is the URL), or the process exits, or time runs out. */
async function waitForReady(child: Subprocess<'ignore', 'pipe', 'inherit'>, ready: RegExp): Promise<string> {
  const reader = child.stdout.getReader()
  const decoder = new TextDecoder()
  let text = ''
  const timeout = setTimeout(() => child.kill('SIGKILL'), READY_TIMEOUT_MS)
  try {
    while (true) {
      const { value, done } = await reader.read()
      if (done) throw new Error(`the server exited before it was ready; it printed:\n${text}`)
      text += decoder.decode(value, { stream: true })
      const url = ready.exec(text)?.[1]
      if (url) return url
    }
  } finally {
    clearTimeout(timeout)
    reader.releaseLock()
  }
}

/**
 * Starts `command` and resolves once it prints a line matching `ready`, whose first capture group must be the base
 * URL. The child's stderr goes to ours, so a failing server explains itself.
 */
async function startServerProcess(command: string[], ready: RegExp): Promise<ServerProcess> {
  const child = Bun.spawn(command, { stdin: 'ignore', stdout: 'pipe', stderr: 'inherit' })
  let url: string
  try {
    url = await waitForReady(child, ready)
    if (!url.startsWith('http://127.0.0.1:')) throw new Error(`the server listens on ${url}, not on 127.0.0.1`)
  } catch (error) {
    child.kill('SIGKILL')
    await child.exited
    throw error
  }
  return {
    url,
    cpuSeconds: async () => {
      const stat = await Bun.file(`/proc/${child.pid}/stat`).text()
      // Fields after the command name, which is in parentheses and may hold spaces: utime and stime are 12th and 13th.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      return (Number(fields[11]) + Number(fields[12])) / USER_HZ
    },
    stop: async () => {
      child.kill('SIGTERM')
      const timeout = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS)
      await child.exited
      clearTimeout(timeout)
    },
  }
}

/** Starts the compiled rock-legends on a free loopback port, without logging, with `args` added. */
export function startRockLegends(args: string[]): Promise<ServerProcess> {
  return startServerProcess(
    [BINARY, '--host', '127.0.0.1', '--port', '0', '--log', 'off', ...args],
    /^rock-legends listening on (\S+)$/m,
  )
}

/** Starts bench/ceiling.ts, serving the responses recorded in `responsesFile`. */
export function startCeiling(responsesFile: string): Promise<ServerProcess> {
  return startServerProcess(
    [process.execPath, join(import.meta.dir, 'ceiling.ts'), responsesFile],
    /^ceiling listening on (\S+)$/m,
  )
}
