import { afterAll, afterEach } from 'bun:test'
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { type Subprocess, spawn, spawnSync } from 'bun'
import pkg from '../../package.json' with { type: 'json' }

const ROOT = resolve(import.meta.dir, '../..')
/** A TCP port free on loopback right now. */
export function freePort(): number {
  // Below the kernel's range of ephemeral ports (32768–60999 by default), from which every outgoing connection takes
  // its local port: a port handed out from that range could be taken by a client of another test (the load tests open
  // thousands) before the server it was meant for binds it. Picked at random, and tried: another test's may hold it.
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = 20_000 + Math.floor(Math.random() * 12_000)
    try {
      Bun.listen({ hostname: '127.0.0.1', port, socket: { data() {} } }).stop(true)
      return port
    } catch {
      // Taken: another.
    }
  }
  throw new Error('no free port found between 20000 and 32000')
}

/** The uid and gid of `nobody`, which the tests that need another user run the executable as. */
export const NOBODY = 65534
/** A `wrapper` that runs the executable as `nobody` (see {@link StartOptions}). */
export const AS_NOBODY = ['setpriv', `--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups']
/** Whether `command` runs and exits 0. */
export const commandSucceeds = (command: string[]) =>
  spawnSync(command, { stdout: 'ignore', stderr: 'ignore' }).exitCode === 0
/** Root can drop to nobody, and nobody can reach the executable (a checkout readable by all). */
export const canDropPrivileges =
  process.getuid?.() === 0 && commandSucceeds([...AS_NOBODY, 'test', '-r', join(ROOT, 'package.json')])

/** The compiled executable the tests run, as `bun run build` writes it. */
export const BINARY = join(ROOT, 'dist/rock-legends')

function newestSource(path: string): number {
  const stat = statSync(path)
  if (!stat.isDirectory()) return stat.mtimeMs
  return Math.max(0, ...readdirSync(path).map((name) => newestSource(join(path, name))))
}

/**
 * Set by test/support/run.ts once it has built the executable for the whole run: every test process of the run then
 * uses that build as it is, and none checks the sources again (nor builds again when a source changes meanwhile).
 */
export const BUILT_FOR_RUN = 'ROCK_LEGENDS_TEST_BINARY_BUILT'

let building: Promise<string> | undefined

/**
 * Builds the executable with the project's own `build` script unless it is newer than every source. The build goes
 * to a temporary name and is renamed into place, so a test run never executes a half-written binary.
 */
export function ensureBinary(): Promise<string> {
  building ??= (async () => {
    if (process.env[BUILT_FOR_RUN] === BINARY) return BINARY
    const sources = ['src', 'data/legends.json', 'package.json', 'bun.lock'].map((path) =>
      newestSource(join(ROOT, path)),
    )
    const built = statSync(BINARY, { throwIfNoEntry: false })?.mtimeMs ?? 0
    if (built > Math.max(...sources)) return BINARY
    const temp = `${BINARY}.${process.pid}.tmp`
    const command = pkg.scripts.build.replace('--outfile dist/rock-legends', `--outfile ${temp}`)
    const build = spawn(['sh', '-c', command], { cwd: ROOT, stdout: 'pipe', stderr: 'pipe' })
    if ((await build.exited) !== 0) throw new Error(`build failed: ${await new Response(build.stderr).text()}`)
    renameSync(temp, BINARY)
    return BINARY
  })()
  return building
}

/** A fresh directory under the system's temp dir; remove it with `rmSync(dir, { recursive: true })`. */
export const tempDir = (label = 'rock-legends-test-') => mkdtempSync(join(tmpdir(), label))

/** Removes a directory made by {@link tempDir}. */
export const removeDir = (dir: string) => rmSync(dir, { recursive: true, force: true })

/** A running executable started by {@link startBinary}. */
export interface RunningBinary {
  url: string
  process: Subprocess<Uint8Array, 'pipe', 'pipe'>
  /** Sends `signal` (SIGTERM by default) and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number>
  /** Everything written to stderr (resolves once it exits). */
  stderr(): Promise<string>
  /** Everything written to stdout, the ready line included (resolves once it exits). */
  stdout(): Promise<string>
}

interface StartOptions {
  cwd?: string
  env?: Record<string, string>
  /** A command to run the executable under, e.g. `setpriv` to drop root's privileges. */
  wrapper?: string[]
}

/** What {@link runBinary} may also give a command: text for its standard input (none by default). */
interface RunOptions extends StartOptions {
  stdin?: string
}

/**
 * The connections a test's executable keeps to a database, unless the test says otherwise (`--db-pool`, or
 * `ROCK_LEGENDS_DB_POOL` in `env`). Bun.SQL opens every connection of a pool at its first query (oven-sh/bun#30631),
 * and PostgreSQL starts a process for each, 6 ms of its CPU or more: at the default of ten, each start over a
 * database cost eleven (with the one that LISTENs), which a test sending a few requests never uses. The eight files
 * that start executables over PostgreSQL made 655 connections with ten, 364 with two.
 */
const TEST_DB_POOL = '2'

/**
 * Spawns the executable with `args`, its output piped, in a clean environment plus `env` (and {@link TEST_DB_POOL}), in
 * `cwd` or else in a throw-away directory of its own, removed once it exits: what it writes where it runs (without
 * `--data`, its default data file `./data/db.json`) never lands in the repository, nor in another test's way.
 */
async function spawnBinary(args: string[], { cwd, env = {}, wrapper = [] }: StartOptions, stdin?: string) {
  const own = cwd === undefined ? tempDir('rock-legends-cwd-') : undefined
  // Readable by anyone, as a checkout is: `wrapper` may run the executable as another user.
  if (own) chmodSync(own, 0o755)
  const child = spawn([...wrapper, await ensureBinary(), ...args], {
    cwd: cwd ?? own,
    env: { PATH: process.env.PATH ?? '', ROCK_LEGENDS_DB_POOL: TEST_DB_POOL, ...env },
    // A command reads its input to the end: an empty one, unless given, so that it never waits for a terminal.
    stdin: new TextEncoder().encode(stdin ?? ''),
    stdout: 'pipe',
    stderr: 'pipe',
  })
  if (own) child.exited.then(() => removeDir(own))
  return child
}

/**
 * The URL of a server's first line on stdout: `rock-legends listening on URL`, or with `--log json` the `ready`
 * object's `url`.
 */
export function readyUrl(line: string): string | undefined {
  const pretty = /^rock-legends listening on (https?:\/\/\S+)$/.exec(line)
  if (pretty) return pretty[1]
  try {
    const ready = JSON.parse(line) as { message?: unknown; url?: unknown }
    return ready.message === 'ready' && typeof ready.url === 'string' ? ready.url : undefined
  } catch {
    return undefined
  }
}

/**
 * Starts the executable with `args` and waits for its ready line (a `ready` object with `--log json`); rejects with
 * its stderr if it exits first.
 */
export async function startBinary(args: string[], options: StartOptions = {}): Promise<RunningBinary> {
  const child = await spawnBinary(args, options)
  const stderrText = new Response(child.stderr).text()
  const reader = child.stdout.getReader()
  let stdout = ''
  const decoder = new TextDecoder()
  while (!stdout.includes('\n')) {
    const { value, done } = await reader.read()
    if (done) {
      await child.exited
      throw new Error(`rock-legends exited with ${child.exitCode} before it was ready: ${await stderrText}`)
    }
    stdout += decoder.decode(value)
  }
  const url = stdout
    .split('\n')
    .slice(0, -1)
    .map(readyUrl)
    .find((found) => found !== undefined)
  if (!url) throw new Error(`unexpected ready line: ${stdout}`)
  // The rest, read on to the end: a test may look at every line the server writes.
  const stdoutText = (async () => {
    let all = stdout
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) all += decoder.decode(chunk.value)
    return all
  })()
  return {
    url,
    process: child,
    stop: async (signal = 'SIGTERM') => {
      child.kill(signal)
      return child.exited
    },
    stderr: () => stderrText,
    stdout: () => stdoutText,
  }
}

/**
 * Runs the executable to completion (for commands that should not start serving, such as `users`) and collects its
 * output; `options.stdin` is piped in.
 */
export async function runBinary(args: string[], { stdin, ...options }: RunOptions = {}) {
  const child = await spawnBinary(args, options, stdin)
  const [stdout, stderr, code] = await Promise.all([
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
    child.exited,
  ])
  return { code, stdout, stderr }
}

/**
 * What a test file of the executable starts and makes, cleaned up for it: `serve` starts a server over `data` with the
 * service key `key` (no log), stopped after each test unless `stop` ended it first; `directory` makes a throw-away
 * directory, removed once the file's tests are done. Registers its `afterEach` and `afterAll` where it is called.
 *
 * @example
 * const { directory, serve, stop } = binaryFixtures('rock-legends-backup-', KEY)
 */
export function binaryFixtures(label: string, key: string) {
  const running: RunningBinary[] = []
  const dirs: string[] = []
  afterEach(async () => {
    await Promise.all(running.splice(0).map((server) => server.stop().catch(() => 0)))
  })
  afterAll(() => {
    for (const dir of dirs.splice(0)) removeDir(dir)
  })
  return {
    directory(): string {
      const dir = tempDir(label)
      dirs.push(dir)
      return dir
    },
    async serve(data: string, args: string[] = []): Promise<RunningBinary> {
      const server = await startBinary(['--data', data, '--port', '0', '--api-key', key, '--log', 'off', ...args])
      running.push(server)
      return server
    },
    /** Stops `server` now (with `signal`), rather than after the test. */
    async stop(server: RunningBinary, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
      running.splice(running.indexOf(server), 1)
      await server.stop(signal)
    },
  }
}

/**
 * Artists in the large data files of the tests that kill a command (`restore`, `copy`) with SIGKILL at moments spread
 * over its run: enough that its work (copying the old data aside, folding a journal, writing the new, a database's
 * transaction) lasts several times its process's start-up, so that the kills land in each step. More only makes each
 * of the loop's runs slower: the executable starts in 20–50 ms, and with 2,000 artists a copy into PostgreSQL takes
 * about a quarter of a second whole on two cores, a copy into a data file under 0.2 s, a restore under 0.1 s. Kills
 * still land after the old data is kept aside and before the new takes its place as often as with 5,000 (the tests'
 * outcome lines count them, `oldWithAside`), for a third less work a run.
 */
export const LARGE_STORE_ARTISTS = 2_000

/**
 * Writes `file` (mode 0600, in a new directory of mode 0755): the data file `seeded` (a seeded server's, as read)
 * with its artists repeated to {@link LARGE_STORE_ARTISTS}, ids 1 onwards; returns how many artists it holds.
 */
export function writeLargeDataFile(file: string, seeded: { artists: unknown[]; counters: object }): number {
  const artists = Array.from({ length: LARGE_STORE_ARTISTS }, (_, index) => ({
    ...(seeded.artists[index % seeded.artists.length] as Record<string, unknown>),
    id: index + 1,
  }))
  mkdirSync(dirname(file), { mode: 0o755 })
  const counters = { ...seeded.counters, artists: artists.length }
  writeFileSync(file, JSON.stringify({ ...seeded, artists, counters }), { mode: 0o600 })
  return artists.length
}

/**
 * Runs the executable `runs` times, each run killed with SIGKILL at its own moment, spread evenly from its start to
 * `spread` times `duration` (how long an uncut run took), but the last, which is let finish (a machine loaded by other
 * work can make a run take several times `duration`): kills before anything, in each step, and none. `start` prepares
 * run `run` (1 to `runs`) and gives the arguments (and the working directory); `check` looks at what the kill left.
 */
export async function killedAtMoments(options: {
  runs: number
  duration: number
  spread: number
  start: (run: number) => Promise<{ args: string[]; cwd?: string }> | { args: string[]; cwd?: string }
  check: (run: number) => Promise<void> | void
}): Promise<void> {
  const { runs, duration, spread, start, check } = options
  for (let run = 1; run <= runs; run++) {
    const { args, cwd } = await start(run)
    const child = spawn([await ensureBinary(), ...args], { cwd, stdout: 'ignore', stderr: 'ignore' })
    if (run === runs) await child.exited
    else await Bun.sleep((duration * spread * run) / runs)
    child.kill('SIGKILL')
    await child.exited
    await check(run)
  }
}

/**
 * Writes `bytes` (a request, whole or in part) on a fresh connection to `port` on loopback; resolves with what came
 * back once it holds a whole head, or when `ms` pass, and how long that took. The connection is then closed.
 */
export function answerHead(port: number, bytes: string, ms: number): Promise<{ answer: string; afterMs: number }> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1')
    const started = Date.now()
    let answer = ''
    const done = () => {
      clearTimeout(timer)
      socket.destroy()
      resolve({ answer, afterMs: Date.now() - started })
    }
    const timer = setTimeout(done, ms)
    socket.on('data', (chunk) => {
      answer += chunk
      if (answer.includes('\r\n\r\n')) done()
    })
    socket.on('error', () => {})
    socket.write(bytes)
  })
}

/** The status of an HTTP/1.1 answer's head, as {@link answerHead} gives it (NaN for none). */
export const statusOf = (answer: string) => Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1])
