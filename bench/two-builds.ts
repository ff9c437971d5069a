/**
 * Two compiled servers side by side, for the benches that compare the working tree with a committed build
 * (bench/hostile-bodies.ts, bench/cache-memory.ts): `dist/rock-legends`, built first when older than its sources, and
 * a baseline built from a commit with `git archive` in a temporary directory.
 */
import { mkdtempSync, readdirSync, statSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const ROOT = join(import.meta.dir, '..')
// The unit of the times in /proc/PID/stat: USER_HZ, which Linux fixes at 100 for user space.
const USER_HZ = 100

/** The newest modification time under `path`. */
function newest(path: string): number {
  const stat = statSync(path)
  if (!stat.isDirectory()) return stat.mtimeMs
  return Math.max(0, ...readdirSync(path).map((name) => newest(join(path, name))))
}

/** Runs `command` in `cwd`; its stdout, or an error with its stderr. */
export async function run(command: string[], cwd = ROOT): Promise<string> {
  const child = Bun.spawn(command, { cwd, stdout: 'pipe', stderr: 'pipe' })
  const [out, err, code] = await Promise.all([
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
    child.exited,
  ])
  if (code !== 0) throw new Error(`${command.join(' ')} failed (${code}): ${err}`)
  return out.trim()
}

/** dist/rock-legends, built first when older than its sources. */
export async function currentBinary(): Promise<string> {
  const binary = join(ROOT, 'dist', 'rock-legends')
  const built = statSync(binary, { throwIfNoEntry: false })?.mtimeMs ?? 0
  if (built < Math.max(newest(join(ROOT, 'src')), newest(join(ROOT, 'package.json'))))
    await run(['bun', 'run', 'build'], ROOT)
  return binary
}

/** The executable of the committed `ref`, built in a temporary directory; returns it with the commit it was built from. */
export async function baselineBinary(ref: string): Promise<{ binary: string; commit: string; dir: string }> {
  const commit = await run(['git', 'rev-parse', '--short', ref], ROOT)
  const dir = mkdtempSync(join(tmpdir(), 'rock-legends-baseline-'))
  await run(['sh', '-c', `git archive ${commit} | tar -x -C ${dir}`], ROOT)
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'))
  await run(['bun', 'run', 'build'], dir)
  return { binary: join(dir, 'dist', 'rock-legends'), commit, dir }
}

/** A compiled server on a free port, with its CPU time and resident memory from /proc. */
export interface Server {
  url: string
  /** User and system CPU time so far, in seconds. */
  cpuSeconds(): Promise<number>
  /** Resident memory now (VmRSS), in bytes. */
  rssBytes(): Promise<number>
  stop(): Promise<void>
}

/** Starts `binary` on a free port over `:memory:` with the service key `key` and no access log, plus `args`. */
export async function start(binary: string, key: string, args: string[] = []): Promise<Server> {
  const child = Bun.spawn([binary, '--port', '0', '--data', ':memory:', '--api-key', key, '--log', 'off', ...args], {
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'inherit',
  })
  const reader = child.stdout.getReader()
  let text = ''
  let match: RegExpExecArray | null = null
  while (!match) {
    const { value, done } = await reader.read()
    if (done) throw new Error(`${binary} exited before it was ready: ${text}`)
    text += new TextDecoder().decode(value)
    match = /^rock-legends listening on (\S+)$/m.exec(text)
  }
  reader.releaseLock()
  return {
    url: match[1] as string,
    cpuSeconds: async () => {
      const stat = await Bun.file(`/proc/${child.pid}/stat`).text()
      // Fields after the command name, which is in parentheses and may hold spaces: utime and stime are 12th and 13th.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      return (Number(fields[11]) + Number(fields[12])) / USER_HZ
    },
    rssBytes: async () => {
      const status = await Bun.file(`/proc/${child.pid}/status`).text()
      return Number(/^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1]) * 1024
    },
    stop: async () => {
      child.kill('SIGTERM')
      await child.exited
    },
  }
}
