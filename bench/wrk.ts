import type { ServerProcess } from './server-process.ts'

/** The install command printed when wrk is missing (Debian/Ubuntu, as root). */
export const WRK_INSTALL = 'apt-get update && apt-get install -y wrk'

/** What one wrk run measured. Latencies are in milliseconds. */
export interface WrkResult {
  requestsPerSecond: number
  requests: number
  p50: number
  p99: number
}

/** One wrk invocation against a loopback URL. */
export interface WrkRun {
  url: string
  connections: number
  seconds: number
  /** A Lua script, e.g. `bench/wrk/post-artist.lua`. */
  script?: string
  /** Arguments handed to the script's `init(args)`. */
  scriptArgs?: string[]
}

/**
 * wrk threads in every run: one per core of the 2-core machine. Pinning the server to one core and a one-thread wrk
 * to the other (taskset) was tried and made the figures noisier here, not steadier: see the notes in LOG.md.
 */
export const WRK_THREADS = 2
const UNIT_MS: Record<string, number> = { us: 0.001, ms: 1, s: 1000, m: 60_000, h: 3_600_000 }

/** wrk's version line, e.g. `wrk debian/4.1.0-3+b2 [epoll]`, or `undefined` when wrk is not on the PATH. */
export function wrkVersion(): string | undefined {
  if (!Bun.which('wrk')) return undefined
  const { stdout, stderr } = Bun.spawnSync(['wrk', '-v'])
  const line = `${stdout.toString()}${stderr.toString()}`.split('\n')[0] ?? ''
  return line.replace(/\s*Copyright.*$/, '').trim()
}

function latencyMs(output: string, percentile: number): number {
  const match = new RegExp(`^\\s*${percentile}%\\s+([\\d.]+)(us|ms|s|m|h)\\s*$`, 'm').exec(output)
  if (!match) throw new Error(`wrk printed no ${percentile}% latency:\n${output}`)
  return Number(match[1]) * (UNIT_MS[match[2] as string] as number)
}

/** Reads wrk's `--latency` report; throws when any request failed, since a run with errors measures nothing useful. */
function parseWrk(output: string): WrkResult {
  const nonSuccess = /Non-2xx or 3xx responses:\s+(\d+)/.exec(output)
  const socketErrors = /Socket errors:(.*)/.exec(output)
  if (nonSuccess || socketErrors)
    throw new Error(`wrk saw failed requests (${(nonSuccess ?? socketErrors)?.[0].trim()}):\n${output}`)
  const rate = /^Requests\/sec:\s+([\d.]+)/m.exec(output)
  const total = /^\s*(\d+) requests in/m.exec(output)
  if (!rate || !total) throw new Error(`cannot read wrk's report:\n${output}`)
  return {
    requestsPerSecond: Number(rate[1]),
    requests: Number(total[1]),
    p50: latencyMs(output, 50),
    p99: latencyMs(output, 99),
  }
}

/** The wrk command line of a run, as the report shows it. */
export function wrkCommand({ url, connections, seconds, script, scriptArgs = [] }: WrkRun): string[] {
  const command = ['wrk', `-t${WRK_THREADS}`, `-c${connections}`, `-d${seconds}s`, '--timeout', '10s', '--latency']
  if (script) command.push('-s', script)
  command.push(url)
  if (scriptArgs.length > 0) command.push('--', ...scriptArgs)
  return command
}

/** Runs wrk (`--latency`) and returns its figures. */
async function runWrk(run: WrkRun): Promise<WrkResult> {
  const wrk = Bun.spawn(wrkCommand(run), { stdout: 'pipe', stderr: 'pipe' })
  const [output, errors, code] = await Promise.all([
    new Response(wrk.stdout).text(),
    new Response(wrk.stderr).text(),
    wrk.exited,
  ])
  if (code !== 0) throw new Error(`wrk exited with ${code}: ${errors}${output}`)
  return parseWrk(output)
}

/** A wrk run and the CPU time the server spent on it per request, in microseconds. */
export interface LoadRun extends WrkResult {
  cpuMicrosPerRequest: number
}

/** A wrk run against a path of a started server. */
export type Load = Omit<WrkRun, 'url'> & { path: string }

/**
 * Runs wrk against `server` and adds the server's CPU time per request, from /proc: on a shared machine a steadier
 * signal than requests/s, since it does not count the time the server waited for a core.
 */
export async function loadServer(server: ServerProcess, { path, ...run }: Load): Promise<LoadRun> {
  const cpuBefore = await server.cpuSeconds()
  const result = await runWrk({ ...run, url: `${server.url}${path}` })
  const cpu = (await server.cpuSeconds()) - cpuBefore
  return { ...result, cpuMicrosPerRequest: (cpu * 1e6) / result.requests }
}
