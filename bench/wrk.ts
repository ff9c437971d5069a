import { median } from './markdown.ts'
import type { ServerProcess } from './server-process.ts'

/** The install command printed when wrk is missing (Debian/Ubuntu, as root). */
export const WRK_INSTALL = 'apt-get update && apt-get install -y wrk'

/** What one wrk run measured. Latencies are in milliseconds. */
export interface WrkResult {
  requestsPerSecond: number
  requests: number
  p50: number
  p99: number
  /** What wrk read off the sockets, headers included: the answers' bytes on the wire. */
  bytesRead: number
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
  /** Headers sent with every request (`-H`), e.g. a browser's `Accept-Encoding`. */
  headers?: Readonly<Record<string, string>>
}

/**
 * wrk threads in every run: one per core of the 2-core machine. Pinning the server to one core and a one-thread wrk
 * to the other (taskset) makes the figures noisier here, not steadier: other work lands on the pinned core, and the
 * server cannot move away from it.
 */
export const WRK_THREADS = 2
const UNIT_MS: Record<string, number> = { us: 0.001, ms: 1, s: 1000, m: 60_000, h: 3_600_000 }
// wrk writes byte counts in binary units: `45.67MB` is 45.67 × 2^20 bytes.
const UNIT_BYTES: Record<string, number> = { '': 1, K: 2 ** 10, M: 2 ** 20, G: 2 ** 30, T: 2 ** 40 }

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
  const total = /^\s*(\d+) requests in [^,]*, ([\d.]+)([KMGT]?)B read/m.exec(output)
  if (!rate || !total) throw new Error(`cannot read wrk's report:\n${output}`)
  return {
    requestsPerSecond: Number(rate[1]),
    requests: Number(total[1]),
    bytesRead: Number(total[2]) * (UNIT_BYTES[total[3] as string] as number),
    p50: latencyMs(output, 50),
    p99: latencyMs(output, 99),
  }
}

/** The wrk command line of a run, as the report shows it. */
export function wrkCommand({ url, connections, seconds, script, scriptArgs = [], headers = {} }: WrkRun): string[] {
  const command = ['wrk', `-t${WRK_THREADS}`, `-c${connections}`, `-d${seconds}s`, '--timeout', '10s', '--latency']
  for (const [name, value] of Object.entries(headers)) command.push('-H', `${name}: ${value}`)
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

/**
 * One round of a side-by-side bench on one request: each server of `servers` loaded once with `load(name)`, in turns,
 * the order rotated by `round` so that none always runs first or last; or, `together`, all at once, each by its own
 * wrk, so that they share whatever else the machine does at that moment.
 */
export async function loadRound(
  servers: Readonly<Record<string, ServerProcess>>,
  load: (name: string) => Load,
  round: number,
  together: boolean,
): Promise<Record<string, LoadRun>> {
  const names = Object.keys(servers)
  const run = (name: string) => loadServer(servers[name] as ServerProcess, load(name))
  if (together) {
    const all = await Promise.all(names.map(run))
    return Object.fromEntries(names.map((name, i) => [name, all[i] as LoadRun]))
  }
  const runs: Record<string, LoadRun> = {}
  for (let i = 0; i < names.length; i++) {
    const name = names[(i + round) % names.length] as string
    runs[name] = await run(name)
  }
  return runs
}

/** The runs of a side-by-side bench: by request (its label), then by server (its name), one per round. */
export type SideBySideRuns = Record<string, Record<string, LoadRun[]>>

/** Adds the runs of one round of the request `label` ({@link loadRound}) to `runs`. */
export function addRound(runs: SideBySideRuns, label: string, round: Readonly<Record<string, LoadRun>>): void {
  const byServer = runs[label] ?? {}
  runs[label] = byServer
  for (const [name, run] of Object.entries(round)) byServer[name] = [...(byServer[name] ?? []), run]
}

/**
 * The two tables of a side-by-side bench, as Markdown lines: each server's medians (req/s, CPU per request) for each
 * request, then each ratio `[of, over]` as the median of its per-round ratios (each round listed), by req/s and by
 * CPU (requests per CPU second: the inverse of the CPU per request).
 */
export function sideBySideTables(
  requests: readonly string[],
  names: readonly string[],
  ratios: readonly (readonly [of: string, over: string])[],
  runs: SideBySideRuns,
): string[] {
  const lines = ['| Request | Server | req/s (median) | CPU per request |', '| --- | --- | ---: | ---: |']
  for (const request of requests)
    for (const name of names) {
      const list = runs[request]?.[name] ?? []
      lines.push(
        `| ${request} | ${name} | ${Math.round(median(list.map((r) => r.requestsPerSecond))).toLocaleString('en')} | ${median(list.map((r) => r.cpuMicrosPerRequest)).toFixed(2)} µs |`,
      )
    }
  lines.push(
    '',
    '| Request | Ratio | req/s: median of per-round ratios (each round) | By CPU per request: the same |',
    '| --- | --- | ---: | ---: |',
  )
  const list = (xs: number[]) => xs.map((x) => x.toFixed(2)).join(', ')
  for (const request of requests)
    for (const [of, over] of ratios) {
      const a = runs[request]?.[of] ?? []
      const b = runs[request]?.[over] ?? []
      const perRound = a.map((run, i) => run.requestsPerSecond / (b[i]?.requestsPerSecond ?? Number.NaN))
      const cpu = a.map((run, i) => (b[i]?.cpuMicrosPerRequest ?? Number.NaN) / run.cpuMicrosPerRequest)
      lines.push(
        `| ${request} | ${of} / ${over} | **${median(perRound).toFixed(2)}×** (${list(perRound)}) | **${median(cpu).toFixed(2)}×** (${list(cpu)}) |`,
      )
    }
  return lines
}
