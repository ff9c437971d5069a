import type { Machine } from './machine.ts'
import {
  type Column,
  count,
  machineTable,
  median,
  megabytes,
  micros,
  ms,
  ratio,
  table,
  utc,
  verdict,
} from './markdown.ts'
import { SCALE_SETTINGS, type ScaleResult, scaleReadPaths, type WriteRun } from './scale.ts'
import { type LoadRun, WRK_THREADS } from './wrk.ts'

/** Everything one scale run measured, and with what. */
export interface ScaleRun {
  date: Date
  machine: Machine
  /** The command that produced it, e.g. `bun run bench:scale`. */
  command: string
  results: ScaleResult[]
}

/** How far from the smallest store's figure a read may be and still count as independent of the store's size. */
const READ_TOLERANCE = 1.25

const bySize = (results: readonly ScaleResult[], artists: number) => results.find((r) => r.artists === artists)
const startup = (result: ScaleResult) => ({
  ready: median(result.startups.map((time) => time.readyMs)),
  healthy: median(result.startups.map((time) => time.healthyMs)),
  slowest: Math.max(...result.startups.map((time) => time.healthyMs)),
})
const latencies = (run: Pick<LoadRun, 'p50' | 'p99'>) => `${ms(run.p50)} / ${ms(run.p99)}`

/** The median of each figure over the rounds. */
const medianRun = (runs: readonly LoadRun[]) => ({
  requestsPerSecond: median(runs.map((run) => run.requestsPerSecond)),
  p50: median(runs.map((run) => run.p50)),
  p99: median(runs.map((run) => run.p99)),
  cpuMicrosPerRequest: median(runs.map((run) => run.cpuMicrosPerRequest)),
})

/** The median over the rounds of `figure` on the large store over the small one, in the same round. */
const pairedRatio = (small: readonly LoadRun[], large: readonly LoadRun[], figure: (run: LoadRun) => number) =>
  median(large.map((run, i) => figure(run) / figure(small[i] as LoadRun)))

function goalsTable(results: readonly ScaleResult[]): string {
  const [smallest, thousand, largest] = [results[0], bySize(results, 1_000), results.at(-1)]
  if (!smallest || !thousand || !largest) return '(not every size was measured)'
  const rows: string[][] = []
  const largeLabel = count(largest.artists)
  for (const [kind, pick] of [
    ['creates', (r: ScaleResult) => r.creates],
    ['replaces', (r: ScaleResult) => r.replaces],
  ] as const) {
    const share = pick(largest).requestsPerSecond / pick(thousand).requestsPerSecond
    rows.push([
      `Durable ${kind}/s at ${largeLabel} artists ≥ 50% of those at 1,000`,
      `**${(share * 100).toFixed(0)}%** (${count(pick(largest).requestsPerSecond)}/s against ${count(pick(thousand).requestsPerSecond)}/s)`,
      verdict(share >= 0.5),
    ])
  }
  for (const [label, pick] of [
    ['one artist', (r: ScaleResult) => r.oneArtist],
    ['list page, last page', (r: ScaleResult) => r.listPage],
  ] as const) {
    const [small, large] = [pick(smallest), pick(largest)]
    const [p50, p99, cpu] = [
      pairedRatio(small, large, (run) => run.p50),
      pairedRatio(small, large, (run) => run.p99),
      pairedRatio(small, large, (run) => run.cpuMicrosPerRequest),
    ]
    rows.push([
      `Read latency independent of size (${label}): ${largeLabel} artists within ${ratio(READ_TOLERANCE)} of ${count(smallest.artists)}`,
      `**p50 ${ratio(p50)}, CPU per request ${ratio(cpu)}** (p99 ${ratio(p99)})`,
      verdict(Math.max(p50, cpu) <= READ_TOLERANCE),
    ])
  }
  const { memoryAfterReads: reads, memoryAfterWrites: writes, dataBytes, dataBytesAfterWrites } = largest
  const memory = reads.rss / dataBytes
  rows.push([
    `Resident memory at ${largeLabel} artists ≤ 3× the data file`,
    `**${ratio(memory)}** (${megabytes(reads.rss)} for ${megabytes(dataBytes)}); peak so far ${ratio(reads.peak / dataBytes)}; after the writes ${ratio(writes.rss / dataBytesAfterWrites)}, peak ${ratio(writes.peak / dataBytesAfterWrites)}`,
    verdict(memory <= 3),
  ])
  const start = startup(largest)
  rows.push([
    `Start-up with ${largeLabel} artists under 1 s`,
    `**${ms(start.healthy)}** to the first /healthz 200 (median; slowest ${ms(start.slowest)})`,
    verdict(start.healthy < 1000),
  ])
  return table(
    [
      ['Goal', 'left'],
      ['Measured', 'left'],
      ['Verdict', 'left'],
    ],
    rows,
  )
}

function startupTable(results: readonly ScaleResult[]): string {
  const rows = results.map((r) => {
    const start = startup(r)
    return [
      `${count(r.artists)} / ${count(r.albums)}`,
      megabytes(r.dataBytes),
      ms(r.seedMs),
      ms(start.ready),
      ms(start.healthy),
      `${megabytes(r.memoryAfterReads.rss)} / ${megabytes(r.memoryAfterReads.peak)}`,
      ratio(r.memoryAfterReads.rss / r.dataBytes),
      megabytes(r.dataBytesAfterWrites),
      `${megabytes(r.memoryAfterWrites.rss)} / ${megabytes(r.memoryAfterWrites.peak)}`,
    ]
  })
  const columns: Column[] = [
    ['Artists / albums', 'right'],
    ['Data on disk', 'right'],
    ['Seeding start', 'right'],
    ['Start → ready line', 'right'],
    ['Start → /healthz 200', 'right'],
    ['RSS / peak after reads', 'right'],
    ['RSS ÷ data', 'right'],
    ['Data after writes', 'right'],
    ['RSS / peak after writes', 'right'],
  ]
  return table(columns, rows)
}

function readsTable(results: readonly ScaleResult[]): string {
  const rows = results.flatMap((r) => {
    const paths = scaleReadPaths(r.artists)
    return [
      [paths.oneArtist, r.oneArtist],
      [paths.listPage, r.listPage],
    ].map(([path, runs]) => {
      const run = medianRun(runs as LoadRun[])
      return [
        count(r.artists),
        `\`GET ${path}\``,
        count(run.requestsPerSecond),
        latencies(run),
        micros(run.cpuMicrosPerRequest),
      ]
    })
  })
  const columns: Column[] = [
    ['Artists', 'right'],
    ['Request', 'left'],
    ['req/s', 'right'],
    ['p50 / p99', 'right'],
    ['CPU per request', 'right'],
  ]
  return table(columns, rows)
}

function writesTable(results: readonly ScaleResult[]): string {
  const cells = (run: WriteRun) => [
    `**${count(run.requestsPerSecond)}**`,
    latencies(run),
    micros(run.cpuMicrosPerRequest),
  ]
  const rows = results.map((r) => [
    count(r.artists),
    ...cells(r.creates),
    `${count(r.creates.artistsBefore)} → ${count(r.creates.artistsAfter)}`,
    ...cells(r.replaces),
  ])
  const columns: Column[] = [
    ['Artists', 'right'],
    ['Creates/s', 'right'],
    ['p50 / p99', 'right'],
    ['CPU per create', 'right'],
    ['Artists during the creates', 'right'],
    ['Replaces/s', 'right'],
    ['p50 / p99', 'right'],
    ['CPU per replace', 'right'],
  ]
  return table(columns, rows)
}

/** The Markdown section of a scale run: machine, method, goals, then every figure. */
export function renderScale(run: ScaleRun): string {
  const s = SCALE_SETTINGS
  return `## Scale: 100 to 100,000 artists

Measured ${utc(run.date)} with \`${run.command}\` (bench/run.ts, bench/scale.ts) on this machine:

${machineTable(run.machine)}

- **Stores:** for each size, a generated catalogue (5 albums per artist, descriptions of about 150 characters) is loaded with \`dist/rock-legends --seed=FILE --data DIR/db.json --log off\` ("Seeding start": spawn to ready line, the store written). Then the four stores are used side by side, the sizes taking turns (order rotated every round) so that a noisy moment on this shared machine falls on all sizes alike.
- **Start-up:** each store is started ${s.startups} times without \`--seed\` (the sizes in turn); the "Start →" columns are medians, from spawn to the ready line and to the first 200 from \`GET /healthz\`. "Data on disk" is the size of every file in the data directory.
- **Reads,** on the last start of each: \`GET\` the artist in the middle and the last full list page (the largest offset), \`wrk -t${WRK_THREADS} -c${s.readConnections} -d${s.readSeconds}s\` each, after a ${s.warmUpSeconds} s warm-up of each, in ${s.readRounds} rounds; figures are medians over the rounds, and ratios between sizes medians of per-round ratios. Memory is read from /proc once all reads are done (each server has then been idle for a few to some 30 seconds): RSS is VmRSS, peak is VmHWM, the most the process has held since it started. RSS moves with the garbage collector (it is higher right after a burst of requests than after idle seconds), so the peak is shown beside it.
- **Durable writes, ${s.writeConnections} connections,** one size after another: \`wrk -t${WRK_THREADS} -c${s.writeConnections} -d${s.writeSeconds}s\` after ${s.warmUpCreates} warm-up creates, first replaces (\`PUT /api/v1/artists/{random id}\`, bench/wrk/put-artist.lua), which keep the store's size, then creates (\`POST /api/v1/artists\`, bench/wrk/post-artist.lua), which grow it by every artist they add: the table shows by how much. One run each, so these figures carry the machine's noise of the moment; memory is read right after them.
- wrk shares the two cores with the server, as in the comparison; CPU per request is the steadier signal. The read-latency goal names no number: here it counts as met when the largest store's p50 and CPU per request are within ${ratio(READ_TOLERANCE)} of the smallest store's. p99 is shown but not judged: over runs of a few seconds on this machine it follows scheduling hiccups more than the server, rising and falling from one size to the next.

### Goals

${goalsTable(run.results)}

### Start-up and memory

${startupTable(run.results)}

### Reads

${readsTable(run.results)}

### Durable writes

${writesTable(run.results)}
`
}
