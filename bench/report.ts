import type { Machine } from './machine.ts'
import { READ_SETTINGS, type ReadResult, type ReadRun } from './reads.ts'
import { WRITE_SETTINGS, type WriteResult } from './writes.ts'
import { WRK_THREADS } from './wrk.ts'

/** Everything one `bun run bench` measured. */
export interface BenchRun {
  date: Date
  machine: Machine
  reads: ReadResult[]
  writes: WriteResult[]
}

/** The line in RESULTS.md after which hand-written notes begin; `bun run bench` keeps them. */
export const NOTES_MARKER = '<!-- Everything below this line is kept when `bun run bench` rewrites this file. -->'

const median = (values: readonly number[]) => {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = sorted.length >> 1
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2
}
const count = (n: number) => Math.round(n).toLocaleString('en-US')
const ms = (n: number) => `${n < 10 ? n.toFixed(2) : n < 100 ? n.toFixed(1) : n.toFixed(0)} ms`
const micros = (n: number) => `${n.toFixed(1)} µs`
const ratio = (n: number) => `${n.toFixed(2)}×`
const megabytes = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`

/**
 * Median figures of one read case. `ratios` are per round, the server over the ceiling run next to it; their median
 * is the headline ratio, since pairing runs that were back to back cancels drift in the machine's load.
 */
function summarise(result: ReadResult) {
  const rate = (runs: ReadRun[]) => median(runs.map((run) => run.requestsPerSecond))
  const latency = (runs: ReadRun[]) =>
    `${ms(median(runs.map((run) => run.p50)))} / ${ms(median(runs.map((run) => run.p99)))}`
  const cpu = (runs: ReadRun[]) => median(runs.map((run) => run.cpuMicrosPerRequest))
  const ratios = result.server.map(
    (run, i) => run.requestsPerSecond / (result.ceiling[i]?.requestsPerSecond ?? Number.NaN),
  )
  return {
    ceilingCpu: cpu(result.ceiling),
    serverCpu: cpu(result.server),
    ceiling: rate(result.ceiling),
    server: rate(result.server),
    ratio: median(ratios),
    ratios,
    ceilingLatency: latency(result.ceiling),
    serverLatency: latency(result.server),
  }
}

type Column = [title: string, align: 'left' | 'right']

/** A Markdown table, padded the way Biome formats Markdown so that RESULTS.md passes `biome check` as written. */
function table(columns: readonly Column[], rows: readonly string[][]): string {
  const widths = columns.map(([title], i) => Math.max(3, title.length, ...rows.map((row) => row[i]?.length ?? 0)))
  const right = (i: number) => columns[i]?.[1] === 'right'
  const width = (i: number) => widths[i] as number
  const line = (cells: readonly string[]) =>
    `| ${cells.map((cell, i) => (right(i) ? cell.padStart(width(i)) : cell.padEnd(width(i)))).join(' | ')} |`
  const rule = widths.map((w, i) => (right(i) ? `${'-'.repeat(w - 1)}:` : '-'.repeat(w)))
  return [line(columns.map(([title]) => title)), `| ${rule.join(' | ')} |`, ...rows.map(line)].join('\n')
}

function readsTable(reads: readonly ReadResult[]): string {
  const rows = reads.map((result) => {
    const s = summarise(result)
    return [
      `${result.label}: \`GET ${result.path}\``,
      count(s.ceiling),
      count(s.server),
      `**${ratio(s.ratio)}**`,
      `≥ ${ratio(result.goal)}: ${s.ratio >= result.goal ? 'met' : '**missed**'}`,
      s.ceilingLatency,
      s.serverLatency,
      `${micros(s.ceilingCpu)} / ${micros(s.serverCpu)}`,
      s.ratios.map(ratio).join(', '),
    ]
  })
  const columns: Column[] = [
    ['Request', 'left'],
    ['Ceiling req/s', 'right'],
    ['rock-legends req/s', 'right'],
    ['Ratio', 'right'],
    ['Goal', 'left'],
    ['Ceiling p50 / p99', 'right'],
    ['rock-legends p50 / p99', 'right'],
    ['CPU per request, ceiling / rock-legends', 'right'],
    ['Ratio per round', 'left'],
  ]
  return table(columns, rows)
}

function writesTable(writes: readonly WriteResult[]): string {
  const rows = writes.map((w) => [
    `${count(w.seeded)} / ${count(w.seededAlbums)}`,
    `${count(w.artistsBefore)} → ${count(w.artistsAfter)}`,
    `**${count(w.run.requestsPerSecond)}**`,
    ms(w.run.p50),
    ms(w.run.p99),
    count(w.run.requests),
    megabytes(w.fileBytes),
  ])
  const columns: Column[] = [
    ['Seeded artists / albums', 'right'],
    ['Artists during the measured run', 'right'],
    ['Writes/s', 'right'],
    ['p50', 'right'],
    ['p99', 'right'],
    ['Requests', 'right'],
    ['Data file at the end', 'right'],
  ]
  return table(columns, rows)
}

function reading(reads: readonly ReadResult[], writes: readonly WriteResult[]): string {
  const lines = reads.map((result) => {
    const s = summarise(result)
    const reached = s.ratios.filter((r) => r >= result.goal).length
    const rounds = `${reached} of ${s.ratios.length} rounds reached it (${ratio(Math.min(...s.ratios))} to ${ratio(Math.max(...s.ratios))})`
    const cpu = `By CPU time per request, steadier here, rock-legends needed ${micros(s.serverCpu)} against the ceiling's ${micros(s.ceilingCpu)}: ${ratio(s.ceilingCpu / s.serverCpu)}.`
    return `- ${result.label}: rock-legends served ${ratio(s.ratio)} the ceiling's rate against a goal of ≥ ${ratio(result.goal)}: goal **${s.ratio >= result.goal ? 'met' : 'missed'}**; ${rounds}. ${cpu}`
  })
  const [small, large] = [writes[0], writes.at(-1)]
  if (small && large && small !== large)
    lines.push(
      `- Durable writes: ${count(small.run.requestsPerSecond)}/s from ${count(small.seeded)} seeded artists and ${count(large.run.requestsPerSecond)}/s from ${count(large.seeded)} (${(small.run.requestsPerSecond / large.run.requestsPerSecond).toFixed(1)}× fewer), p99 ${ms(small.run.p99)} and ${ms(large.run.p99)}. Every answer waits for a group commit that rewrites and fsyncs the whole data file (${megabytes(large.fileBytes)} at the end of the larger run), so the write rate falls as the catalogue grows. Each write adds an artist, so the store grew during the runs, as the table shows.`,
    )
  return lines.join('\n')
}

function machineTable(machine: Machine): string {
  const columns: Column[] = [
    ['CPU', 'left'],
    ['Cores', 'right'],
    ['Memory', 'right'],
    ['Kernel', 'left'],
    ['Bun', 'left'],
    ['wrk', 'left'],
  ]
  const { cpu, cores, memory, kernel, bun, wrk } = machine
  return table(columns, [[cpu, String(cores), memory, kernel, bun, wrk]])
}

/** The Markdown report of a run: machine, settings, both tables and a reading against the goals. */
export function renderReport({ date, machine, reads, writes }: BenchRun): string {
  const r = READ_SETTINGS
  const w = WRITE_SETTINGS
  return `# Benchmark results

Measured ${date.toISOString().slice(0, 16).replace('T', ' ')} UTC with \`bun run bench\` (bench/run.ts), against the compiled \`dist/rock-legends\`. All traffic is on 127.0.0.1.

## Machine

${machineTable(machine)}

## Reads against the ceiling

The ceiling is a bare \`Bun.serve\` (bench/ceiling.ts) answering the same bytes, status and content type, recorded from rock-legends (built-in catalogue) just before. Settings for both: \`wrk -t${WRK_THREADS} -c${r.connections} -d${r.seconds}s --latency\`, a ${r.warmUpSeconds} s warm-up per target, then ${r.rounds} rounds alternating the two targets (the first target swaps each round); figures are medians over the rounds, and the ratio is the median of the per-round ratios. CPU per request is the user and system time of the server process (from /proc) over the requests wrk completed: on a shared machine it is steadier than requests/s. wrk runs on the same cores, so requests/s also carries its cost.

${readsTable(reads)}

## Durable writes

\`POST /api/v1/artists\` with \`X-API-Key\` (bench/wrk/post-artist.lua): \`wrk -t${WRK_THREADS} -c${w.connections} -d${w.seconds}s --latency\` after ${w.warmUpRequests} warm-up requests, on a fresh data file seeded with \`--seed=FILE\` (artists and their albums cycled from the built-in catalogue). Each answer comes after the write was fsynced (temporary file, fsync, rename, directory fsync), with group commit.

${writesTable(writes)}

## Reading

${reading(reads, writes)}
`
}
