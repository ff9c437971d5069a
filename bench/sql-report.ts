import { COMPARE_ARTISTS } from './compare.ts'
import type { Machine } from './machine.ts'
import { type Column, count, type Goal, goalsTable, machineTable, median, micros, ms, table, utc } from './markdown.ts'
import { SQL_SETTINGS, SQL_TARGETS, type SqlResult, type SqlRun, type SqlTarget } from './sql-bench.ts'
import { WRK_THREADS, wrkCommand } from './wrk.ts'

/** Everything one run of bench/sql.ts measured, and with what. */
export interface SqlBenchRun {
  date: Date
  machine: Machine
  command: string
  /** PostgreSQL's version line and the settings that decide durability and size. */
  postgres: string
  settings: Record<string, string>
  /** One-minute load average at the start and the end. */
  loadBefore: number
  loadAfter: number
  results: SqlResult[]
}

const NAMES: Record<SqlTarget, string> = {
  json: 'JSON file',
  sql: 'SQL, 1 replica',
  'sql×2': 'SQL, 2 replicas',
}

const rate = (run: SqlRun) => run.requestsPerSecond
/** CPU per request of everything serving it: rock-legends, and PostgreSQL behind it. */
const serving = (run: SqlRun) => run.cpuMicrosPerRequest + (run.postgresMicrosPerRequest ?? 0)
const medianOf = (runs: readonly SqlRun[], pick: (run: SqlRun) => number | undefined) =>
  median(runs.map((run) => pick(run) ?? Number.NaN))

/** The goals of every result, with the ratio of each round and by CPU per request. */
const goalsOf = (results: readonly SqlResult[]): Goal[] =>
  results.flatMap((result) =>
    result.ratios.map(({ of, over, goal }) => ({
      request: result.label,
      kind: result.method === 'POST' ? 'creates' : 'req/s',
      of: NAMES[of],
      over: NAMES[over],
      goal,
      ratios: result.runs[of].map((run, i) => rate(run) / rate(result.runs[over][i] as SqlRun)),
      byCpu: medianOf(result.runs[over], serving) / medianOf(result.runs[of], serving),
    })),
  )

function figuresTable(results: readonly SqlResult[]): string {
  const rows = results.flatMap((result) =>
    SQL_TARGETS.map((target, i) => {
      const runs = result.runs[target]
      const sql = target !== 'json'
      const growth =
        runs[0]?.artistsBefore === undefined
          ? ''
          : `${count(medianOf(runs, (run) => run.artistsBefore))} → ${count(medianOf(runs, (run) => run.artistsAfter))}`
      return [
        i === 0 ? `${result.label}: \`${result.method} ${result.shown ?? result.path}\`` : '',
        NAMES[target],
        count(medianOf(runs, rate)),
        ms(medianOf(runs, (run) => run.p50)),
        ms(medianOf(runs, (run) => run.p99)),
        micros(medianOf(runs, (run) => run.cpuMicrosPerRequest)),
        sql ? micros(medianOf(runs, (run) => run.postgresMicrosPerRequest)) : '',
        medianOf(runs, (run) => (rate(run) * serving(run)) / 1e6).toFixed(2),
        growth,
      ]
    }),
  )
  const columns: Column[] = [
    ['Request', 'left'],
    ['Target', 'left'],
    ['req/s', 'right'],
    ['p50', 'right'],
    ['p99', 'right'],
    ['CPU per request, rock-legends', 'right'],
    ['CPU per request, PostgreSQL', 'right'],
    ['Cores busy serving', 'right'],
    ['Artists during the run', 'right'],
  ]
  return table(columns, rows)
}

/** Creates against the transactions that wrote them, per round, for each SQL target. */
function batchingTable(results: readonly SqlResult[]): string {
  const creates = results.find((result) => result.method === 'POST')
  if (!creates) return ''
  const rows = (['sql', 'sql×2'] as const).map((target) => {
    const runs = creates.runs[target]
    const added = runs.map((run) => (run.artistsAfter ?? 0) - (run.artistsBefore ?? 0))
    const transactions = runs.map((run) => run.writeTransactions ?? Number.NaN)
    const perTransaction = added.map((n, i) => n / (transactions[i] as number))
    return [
      NAMES[target],
      count(added.reduce((a, b) => a + b, 0)),
      count(transactions.reduce((a, b) => a + b, 0)),
      `**${median(perTransaction).toFixed(1)}**`,
      perTransaction.map((n) => n.toFixed(1)).join(', '),
    ]
  })
  const columns: Column[] = [
    ['Target', 'left'],
    ['Creates committed (all rounds)', 'right'],
    ['Transactions that wrote', 'right'],
    ['Creates per transaction', 'right'],
    ['Per round', 'left'],
  ]
  return table(columns, rows)
}

/** The activity samples of every round of a case on an SQL target, added up. */
function activityOf(
  result: SqlResult | undefined,
  target: SqlTarget,
): { samples: number; backends: Record<string, number> } {
  let samples = 0
  const backends: Record<string, number> = {}
  for (const { activity } of result?.runs[target] ?? []) {
    samples += activity?.samples ?? 0
    for (const [what, n] of Object.entries(activity?.backends ?? {})) backends[what] = (backends[what] ?? 0) + n
  }
  return { samples, backends }
}

/** The share of busy backends seen doing `what`, as a percentage. */
function shareOf(result: SqlResult | undefined, target: SqlTarget, what: string): string {
  const { backends } = activityOf(result, target)
  const busy = Object.values(backends).reduce((a, b) => a + b, 0)
  return `${Math.round((100 * (backends[what] ?? 0)) / busy)}%`
}

/** What PostgreSQL's busy backends were doing, over every round of a case on an SQL target. */
function activityRow(result: SqlResult, target: SqlTarget, i: number): string[] {
  const { samples, backends } = activityOf(result, target)
  const busy = Object.values(backends).reduce((a, b) => a + b, 0)
  const shares = Object.entries(backends)
    .sort(([, a], [, b]) => b - a)
    .slice(0, 4)
    .map(([what, n]) => `${what} ${Math.round((100 * n) / busy)}%`)
  return [i === 0 ? result.label : '', NAMES[target], (busy / samples).toFixed(1), shares.join('; ')]
}

function activityTable(results: readonly SqlResult[]): string {
  const columns: Column[] = [
    ['Request', 'left'],
    ['Target', 'left'],
    ['Busy backends (mean)', 'right'],
    ['What they were doing (share of busy backends seen)', 'left'],
  ]
  const targets = ['sql', 'sql×2'] as const
  return table(
    columns,
    results.flatMap((result) => targets.map((target, i) => activityRow(result, target, i))),
  )
}

const coresBusy = (result: SqlResult | undefined, target: SqlTarget) =>
  medianOf(result?.runs[target] ?? [], (run) => (rate(run) * serving(run)) / 1e6).toFixed(2)

/** One batch transaction of creates on one replica: how many a second, and how long each took, from the run's counts. */
function transactionPace(creates: SqlResult | undefined): { perSecond: number; ms: number } {
  const runs = creates?.runs.sql ?? []
  const perSecond = median(runs.map((run) => (run.writeTransactions ?? Number.NaN) / SQL_SETTINGS.seconds))
  return { perSecond, ms: 1000 / perSecond }
}

/** What bounds the figures on this machine, with the run's own numbers. */
function limits(run: SqlBenchRun): string {
  const [one, list] = run.results
  const creates = run.results.find((result) => result.method === 'POST')
  const cores = run.machine.cores
  const pace = transactionPace(creates)
  const waiting = 'in a transaction, waiting for its client'
  if (!one || !list || !creates) return ''
  const cpu = (target: SqlTarget, pick: (run: SqlRun) => number | undefined) =>
    micros(medianOf(creates.runs[target], pick))
  const byCpu = medianOf(creates.runs.json, serving) / medianOf(creates.runs.sql, serving)
  return `- **Creates, one replica,** are bounded by CPU: rock-legends, PostgreSQL and wrk share the ${cores} cores, and a create over SQL costs ${cpu('sql', serving)} of CPU (rock-legends ${cpu('sql', (run) => run.cpuMicrosPerRequest)}, PostgreSQL ${cpu('sql', (run) => run.postgresMicrosPerRequest)}) where the JSON store's costs ${cpu('json', serving)}, all in its own process. With every core busy, that ratio (${byCpu.toFixed(2)}×) is about the best the req/s ratio can be: the 1× goal needs a create over SQL to cost its process and the database together no more than the JSON store's in-process apply and journal append, which no separate database process does on the same cores. The SQL store runs one batch at a time (src/store/sql/writes.ts): a batch of creates is one statement (its ids from a sequence, a stripe of the artists' tally and the rows) acknowledged once its commit is flushed, and while one commits the next gathers the requests that arrive meanwhile, so the ${SQL_SETTINGS.createConnections} connections settle into two alternating halves (the creates per transaction above): about ${count(pace.perSecond)} transactions a second, ${pace.ms.toFixed(1)} ms each. PostgreSQL's busy backends spent ${shareOf(creates, 'sql', 'IO: WALSync')} of their time flushing the WAL and ${shareOf(creates, 'sql', waiting)} inside a transaction waiting for rock-legends.
- **Reads, two replicas:** a second replica can only add what the cores left idle by the first allow. Here the rock-legends process(es) and PostgreSQL together kept ${coresBusy(one, 'sql')} of the ${cores} cores busy serving one artist with one replica and ${coresBusy(one, 'sql×2')} with two (list page: ${coresBusy(list, 'sql')} and ${coresBusy(list, 'sql×2')}); wrk, generating and parsing the same requests on the same cores, and whatever else ran on the machine took the rest. Two replicas then split the same cores between two Bun processes (and 4 wrk threads), so the ratio measures their overhead rather than added capacity: the 1.6× goal needs cores that one replica leaves idle, i.e. a machine with more cores than this one, or wrk on another machine.
- **Creates, two replicas:** no row is shared by every batch: ids come from a sequence, and each batch adds to a stripe of the artists' tally that no other transaction holds, so the batches of two replicas commit side by side (\`Lock:\` waits ${shareOf(creates, 'sql×2', 'Lock: transactionid')} of busy backends on \`transactionid\`), each smaller than one replica's (see the batching table): more commits for the same creates, on the same ${cores} cores. Cores busy serving creates: ${coresBusy(creates, 'sql')} with one replica, ${coresBusy(creates, 'sql×2')} with two. bench/sql-creates.ts measures one, two and four replicas against the build before.`
}

/** The Markdown section of a run of bench/sql.ts: machine, method, goals, figures, batching. */
export function renderSql(run: SqlBenchRun): string {
  const s = SQL_SETTINGS
  const read = wrkCommand({ url: 'URL', connections: s.readConnections, seconds: s.seconds }).join(' ')
  const settings = Object.entries(run.settings)
    .map(([name, value]) => `\`${name}=${value}\``)
    .join(', ')
  return `## SQL beside the JSON store: one and two replicas over PostgreSQL

Measured ${utc(run.date)} with \`${run.command}\` (bench/sql.ts, bench/sql-bench.ts) on this machine, one-minute load average ${run.loadBefore.toFixed(2)} just before the first run and ${run.loadAfter.toFixed(2)} at the end (the machine is shared; the figure at the end counts the bench's own wrk threads, rock-legends processes and PostgreSQL backends too):

${machineTable(run.machine)}

- **Targets,** each holding the same ${count(COMPARE_ARTISTS)} generated artists with 5 albums each (\`--seed=FILE\`), every one the compiled \`dist/rock-legends\` in its default configuration (durable writes, the pretty access log on stderr into a file) but for \`--data\`: **${NAMES.json}** is \`--data DIR/db.json\`; **${NAMES.sql}** is \`--data postgres://rl@/DB?host=SOCKETDIR&port=PORT\` (unix socket, default pool of 10); **${NAMES['sql×2']}** is two such processes on two ports over one database.
- **PostgreSQL** ${run.postgres}, started by the bench for itself (\`initdb\` into a directory on the same disk as the JSON store, a unix socket, no TCP) with every setting at its default, nothing tuned: ${settings}. Every commit is flushed to disk before a create is acknowledged, as the JSON store's group commit flushes its journal.
- **Load:** \`${read}\` (creates add \`-s bench/wrk/post-artist.lua … -- KEY BODY\`), ${s.readConnections} connections on every target. Two replicas get two wrk processes at once, ${s.readConnections / 2} connections each (wrk can hit only one URL); their requests/s are summed, p50 and p99 are the higher of the two, and they run ${WRK_THREADS} threads each, so 4 wrk threads instead of 2 share the cores then.
- **Rounds:** ${s.rounds} rounds of ${s.seconds} s runs, each target once per round, the order rotated every round; figures are medians over the rounds, ratios medians of per-round ratios. Reads run on the same servers throughout (the single replica is replica A of the pair) after a ${s.warmUpSeconds} s warm-up of each target. For creates every round starts all four processes afresh: a new data file, and two new copies of the seeded database after a \`CHECKPOINT\`, each warmed with a 1 s read run and ${s.warmUpCreates} creates; the stores grow during the run by what it completes (last column).
- **CPU per request** is user and system time from /proc: of the rock-legends process(es), and of PostgreSQL (the postmaster and every process it started, exited ones included). "By CPU per request" compares the sums of both. **Cores busy serving** is requests/s times that sum: of the machine's ${run.machine.cores} cores, what rock-legends and PostgreSQL used; wrk used most of the rest.
- **Batching:** transactions that wrote are counted from the transaction ids PostgreSQL assigned during each create run (\`pg_snapshot_xmax(pg_current_snapshot())\` before and after; read-only statements take none). \`pg_stat_database.xact_commit\` would count every read statement too, and reaches the view only when a backend flushes its statistics, up to 10 s after it goes idle.

### Goals

${goalsTable('target', goalsOf(run.results))}

### Figures

${figuresTable(run.results)}

### Batching of durable creates over SQL

${batchingTable(run.results)}

### Where PostgreSQL's time goes

Busy client backends of PostgreSQL (\`pg_stat_activity\`, state \`active\` or \`idle in transaction\`), sampled every 50 ms during each measured run on an SQL target by one more connection (its own queries are in PostgreSQL's CPU above, at about 20 a second). "On CPU" is a backend running a statement; "in a transaction, waiting for its client" is a backend between the statements of a transaction (a batch with albums, or a write of its own), waiting for rock-legends' next one; \`Client: ClientRead\` is a backend amid a statement, waiting for the next message of it from its client; \`IO: WALSync\` is a commit flushing the WAL to disk, \`LWLock: WALWrite\` a commit waiting for another's flush, \`Lock: …\` a row lock held by another transaction.

${activityTable(run.results)}

### What limits these figures on ${run.machine.cores} cores

${limits(run)}
`
}
