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

/** wrk threads in every run: one per core of the 2-core machine the benchmark was written for. */
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

/** Runs wrk (2 threads, `--latency`) and returns its figures. */
export async function runWrk({ url, connections, seconds, script, scriptArgs = [] }: WrkRun): Promise<WrkResult> {
  const command = ['wrk', `-t${WRK_THREADS}`, `-c${connections}`, `-d${seconds}s`, '--timeout', '10s', '--latency']
  if (script) command.push('-s', script)
  command.push(url)
  if (scriptArgs.length > 0) command.push('--', ...scriptArgs)
  const wrk = Bun.spawn(command, { stdout: 'pipe', stderr: 'pipe' })
  const [output, errors, code] = await Promise.all([
    new Response(wrk.stdout).text(),
    new Response(wrk.stderr).text(),
    wrk.exited,
  ])
  if (code !== 0) throw new Error(`wrk exited with ${code}: ${errors}${output}`)
  return parseWrk(output)
}
