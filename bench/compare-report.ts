import {
  type AccessLogCheck,
  COMPARE_ARTISTS,
  COMPARE_SETTINGS,
  type CompareResult,
  type CompareRun,
  TARGETS,
  type Target,
} from './compare.ts'
import type { Machine } from './machine.ts'
import { type Column, count, type Goal, goalsTable, machineTable, median, micros, ms, table, utc } from './markdown.ts'
import { wrkCommand } from './wrk.ts'

/** Everything one comparison run measured, and with what. */
export interface ComparisonRun {
  date: Date
  machine: Machine
  /** The command that produced it, e.g. `bun run bench`. */
  command: string
  /** Version lines of Node.js and json-server. */
  node: string
  jsonServer: string
  results: CompareResult[]
  accessLogs: Record<string, AccessLogCheck>
}

const rate = (run: CompareRun) => run.requestsPerSecond
const medianOf = (runs: readonly CompareRun[], pick: (run: CompareRun) => number | undefined) =>
  median(runs.map((run) => pick(run) ?? Number.NaN))

/** How a target is named in the report. */
const nameOf = (target: Target) =>
  target === 'ceiling' ? 'the ceiling' : target === 'rock-legends' ? 'rock-legends (default)' : target

/** The goals of every result, with the ratio of each round (the runs of a round were back to back) and by CPU. */
const goalsOf = (results: readonly CompareResult[]): Goal[] =>
  results.flatMap((result) =>
    result.ratios.map(({ of, over, goal }) => ({
      request: result.label,
      kind: result.method === 'POST' ? 'creates' : 'req/s',
      of: nameOf(of),
      over: nameOf(over),
      goal,
      ratios: result.runs[of].map((run, i) => rate(run) / rate(result.runs[over][i] as CompareRun)),
      byCpu:
        medianOf(result.runs[over], (run) => run.cpuMicrosPerRequest) /
        medianOf(result.runs[of], (run) => run.cpuMicrosPerRequest),
    })),
  )

function storeGrowth(runs: readonly CompareRun[]): string {
  if (runs[0]?.artistsBefore === undefined) return ''
  return `${count(medianOf(runs, (run) => run.artistsBefore))} → ${count(medianOf(runs, (run) => run.artistsAfter))}`
}

function figuresTable(results: readonly CompareResult[]): string {
  const rows = results.flatMap((result) =>
    TARGETS.map((target) => {
      const runs = result.runs[target]
      return [
        target === 'ceiling' ? `${result.label}: \`${result.method} ${result.path}\`` : '',
        target === 'json-server' ? `${target}: \`${result.jsonServerPath}\`` : nameOf(target),
        count(medianOf(runs, rate)),
        ms(medianOf(runs, (run) => run.p50)),
        ms(medianOf(runs, (run) => run.p99)),
        micros(medianOf(runs, (run) => run.cpuMicrosPerRequest)),
        storeGrowth(runs),
      ]
    }),
  )
  const columns: Column[] = [
    ['Request', 'left'],
    ['Server', 'left'],
    ['req/s', 'right'],
    ['p50', 'right'],
    ['p99', 'right'],
    ['CPU per request', 'right'],
    ['Artists during the run', 'right'],
  ]
  return table(columns, rows)
}

/** The access lines counted against the requests wrk completed, case by case. */
const accessLogSummary = (checks: Record<string, AccessLogCheck>) =>
  Object.entries(checks)
    .map(
      ([label, { lines, measuredRequests }]) =>
        `${count(lines)} lines of ${label.toLowerCase()} for the ${count(measuredRequests)} that wrk completed in the measured runs (the rest are warm-ups and checks)`,
    )
    .join('; ')

/** The Markdown section of a comparison run: machine, method, goals, then every figure. */
export function renderComparison(run: ComparisonRun): string {
  const s = COMPARE_SETTINGS
  const read = wrkCommand({ url: 'URL', connections: s.readConnections, seconds: s.seconds }).join(' ')
  const create = wrkCommand({
    url: 'URL',
    connections: s.createConnections,
    seconds: s.seconds,
    script: 'bench/wrk/post-artist.lua',
    scriptArgs: ['KEY', 'BODY'],
  }).join(' ')
  return `## Side by side: the ceiling, rock-legends and json-server

Measured ${utc(run.date)} with \`${run.command}\` (bench/run.ts, bench/compare.ts) on this machine:

${machineTable(run.machine)}

- **The four servers** hold the same ${count(COMPARE_ARTISTS)} artists with 5 albums each (a generated \`--seed=FILE\` catalogue). **rock-legends** is the compiled \`dist/rock-legends\` started as users start it, in its default configuration (\`--seed=FILE --data DIR/db.json\`: durable writes and the pretty access log on stderr, which goes to a file, as \`2> access.log\` or a service manager would take it; not a terminal, so without colours), and beside it the same executable with \`--log off\`. **json-server** ${run.jsonServer} runs on Node.js ${run.node} (its package asks for Node ≥ 22.12; it runs unchanged on this version) as its README starts it, \`node node_modules/json-server/lib/bin.js db.json --host 127.0.0.1 --port PORT\` (file watching on, as by default; its writes are not fsynced), on a \`db.json\` exported from rock-legends through its API, so the records are identical except that json-server's ids are strings. **The ceiling** (bench/ceiling.ts) is a bare \`Bun.serve\` answering each request with the status, headers and bytes recorded from rock-legends in its default configuration just before, \`X-Request-Id\` included (for creates, after reading the body).
- **Load:** \`${read}\` for reads, \`${create}\` for creates, wrk sharing the machine's two cores with the server (pinning each to a core of its own makes the figures noisier here, not steadier), so requests/s also carries wrk's cost.
- **Rounds:** ${s.rounds} rounds of ${s.seconds} s runs, each target once per round, the order rotated every round. Figures are medians over the rounds; a ratio is the median of the per-round ratios of runs that were back to back, which cancels most drift in the machine's load. Before the rounds each read gets a ${s.warmUpSeconds} s warm-up run on every target. **The ratios are what count:** other work on this shared machine (other engineers' test runs) moves every absolute figure from one run to the next.
- **CPU per request** is the server process's user and system time (from /proc/PID/stat) over the requests wrk completed. Other work takes cores at random moments: requests/s moves with it, CPU per request much less, so it is the steadier signal.
- **Creates** send the same request to rock-legends (\`POST /api/v1/artists\` with \`X-API-Key\`) and json-server (\`POST /artists\`; it ignores the key). Every round starts both rock-legends and json-server afresh on copies of the same ${count(COMPARE_ARTISTS)} artists, warmed up with a 1 s read run and ${s.warmUpCreates} creates; each create adds an artist, so the stores grow during the run by as many artists as it completes (last column): the faster server measures its rate on a larger store.
- **No access line lost:** once its servers had stopped (SIGTERM), the access logs of the default configuration held ${accessLogSummary(run.accessLogs)}.

### Goals

${goalsTable('server', goalsOf(run.results))}

### Figures

${figuresTable(run.results)}
`
}
