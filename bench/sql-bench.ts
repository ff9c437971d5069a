import { readdirSync } from 'node:fs'
import { chmod, mkdir, mkdtemp, readFile, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { SQL } from 'bun'
import { ensureBinary } from '../test/support/binary.ts'
import { postgresAvailable, startDurablePostgres } from '../test/support/postgres.ts'
import { writeCatalogue } from './catalogue.ts'
import { COMPARE_ARTISTS, COMPARE_SETTINGS } from './compare.ts'
import { API_KEY, accessLogOf, artistCount, CREATE_SCRIPT, createArtists, startStore } from './rock-legends.ts'
import { type ServerProcess, startRockLegends } from './server-process.ts'
import { type Load, type LoadRun, loadServer, WRK_INSTALL } from './wrk.ts'

/** The PostgreSQL of a benchmark (test/support/postgres.ts starts it), with what the benchmarks read of it. */
export interface BenchPostgres {
  /** The major version, e.g. `15`. */
  version: string
  /** The URL of `database` over the unix socket. */
  url(database: string): string
  /** Creates `name`, empty or as a copy of `template` (which nobody may be connected to). */
  createDatabase(name: string, template?: string): Promise<void>
  /** Runs one statement as the superuser, on the `postgres` database. */
  query<T = Record<string, unknown>>(text: string): Promise<T[]>
  /** The next transaction id: how many transactions have written anything so far (read ones take none). */
  nextXid(): Promise<number>
  /** CPU time, user and system, of the postmaster and every process it started, exited ones included, in seconds. */
  cpuSeconds(): Promise<number>
  /** Samples what the client backends are doing every `everyMs` until the function it returns is called. */
  sampleActivity(everyMs?: number): () => Promise<Activity>
  /** Stops the server and removes its directory. */
  stop(): Promise<void>
}

/** What busy client backends were doing over a run: samples taken, and backends seen per state over all of them. */
export interface Activity {
  samples: number
  /** `on CPU`, `in a transaction, waiting for its client`, or the wait event, e.g. `IO: WALSync`, `Lock: transactionid`. */
  backends: Record<string, number>
}

// Busy client backends but the sampler's own, by what they do: running, waiting inside a transaction for the app's
// next statement, or waiting on the event PostgreSQL names.
const ACTIVITY = `
  SELECT CASE WHEN state = 'idle in transaction' THEN 'in a transaction, waiting for its client'
              WHEN wait_event IS NULL THEN 'on CPU'
              ELSE wait_event_type || ': ' || wait_event END AS what, count(*) AS n
  FROM pg_stat_activity
  WHERE backend_type = 'client backend' AND pid <> pg_backend_pid() AND state IN ('active', 'idle in transaction')
  GROUP BY 1`

// The unit of the times in /proc/PID/stat (see server-process.ts).
const USER_HZ = 100

/** utime, stime, cutime and cstime of a process, in ticks, with its parent's pid; undefined once it is gone. */
async function times(pid: number): Promise<{ ppid: number; own: number; children: number } | undefined> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined)
  if (!stat) return undefined
  // After the command name (in parentheses, may hold spaces): state, ppid, …, utime (12th), stime, cutime, cstime.
  const fields = stat
    .slice(stat.lastIndexOf(')') + 2)
    .split(' ')
    .map(Number)
  const at = (i: number) => fields[i] ?? 0
  return { ppid: at(1), own: at(11) + at(12), children: at(13) + at(14) }
}

/**
 * Starts a PostgreSQL of its own in `dir` with durable defaults (test/support/postgres.ts, `startDurablePostgres`),
 * `settings` added (bench/sql-create-costs.ts loads `pg_stat_statements`, nothing that changes durability), and
 * connects to it as the superuser to read what the benchmarks report.
 */
export async function startBenchPostgres(dir: string, settings: Record<string, string> = {}): Promise<BenchPostgres> {
  const server = await startDurablePostgres(dir, settings)
  const admin = new SQL({ url: server.url('postgres'), max: 1 })
  try {
    await admin`SELECT 1`
  } catch (error) {
    server.stop()
    throw error
  }
  const query = <T>(text: string) => admin.unsafe(text) as Promise<T[]>
  return {
    version: server.version,
    url: server.url,
    query,
    async createDatabase(name, template) {
      await query(`CREATE DATABASE ${name}${template ? ` TEMPLATE ${template}` : ''}`)
    },
    async nextXid() {
      const [row] = await query<{ xid: string }>('SELECT pg_snapshot_xmax(pg_current_snapshot())::text AS xid')
      return Number(row?.xid)
    },
    async cpuSeconds() {
      // The postmaster's children-times hold every child it has reaped; the live children add their own.
      let ticks = 0
      for (const name of readdirSync('/proc')) {
        if (!/^\d+$/.test(name)) continue
        const pid = Number(name)
        const t = await times(pid)
        if (pid === server.pid && t) ticks += t.own + t.children
        else if (t?.ppid === server.pid) ticks += t.own
      }
      return ticks / USER_HZ
    },
    sampleActivity(everyMs = 50) {
      const activity: Activity = { samples: 0, backends: {} }
      let sampling = true
      const loop = (async () => {
        while (sampling) {
          const rows = await query<{ what: string; n: string }>(ACTIVITY)
          activity.samples += 1
          for (const { what, n } of rows) activity.backends[what] = (activity.backends[what] ?? 0) + Number(n)
          await Bun.sleep(everyMs)
        }
      })()
      return async () => {
        sampling = false
        await loop
        return activity
      }
    },
    async stop() {
      await admin.close().catch(() => {})
      server.stop()
    },
  }
}

/** Stops with the reason when wrk or PostgreSQL is missing; builds dist/rock-legends unless `BENCH_BINARY` names another. */
export async function readyForSql(): Promise<void> {
  if (!Bun.which('wrk')) throw new Error(`wrk is not installed. Install it (as root) with: ${WRK_INSTALL}`)
  const noPostgres = postgresAvailable()
  if (noPostgres) throw new Error(noPostgres)
  if (!process.env.BENCH_BINARY) await ensureBinary()
}

/**
 * Runs `measure` over a PostgreSQL of its own ({@link startBenchPostgres}, `settings` added) in a new directory of
 * bench/.work named after `label`, where the bench keeps its other files too (on the same disk as PostgreSQL's, as a
 * JSON store it is compared with); then stops PostgreSQL and removes the directory, also on Ctrl-C or SIGTERM, so
 * that no postmaster is left behind. `--keep` keeps the directory: the logs of PostgreSQL and of every replica, to
 * see why a run failed.
 */
export async function withBenchPostgres<T>(
  label: string,
  measure: (pg: BenchPostgres, workDir: string) => Promise<T>,
  settings: Record<string, string> = {},
): Promise<T> {
  const work = join(import.meta.dir, '.work')
  await mkdir(work, { recursive: true })
  const workDir = await mkdtemp(join(work, `${label}-`))
  // mkdtemp makes it private; PostgreSQL runs as its own user and must reach its directory inside.
  await chmod(workDir, 0o711)
  let pg: BenchPostgres | undefined
  const cleanUp = async () => {
    await pg?.stop()
    if (!process.argv.includes('--keep')) await rm(workDir, { recursive: true, force: true })
  }
  const interrupted = () => void cleanUp().finally(() => process.exit(130))
  process.once('SIGINT', interrupted)
  process.once('SIGTERM', interrupted)
  try {
    pg = await startBenchPostgres(join(workDir, 'postgres'), settings)
    return await measure(pg, workDir)
  } finally {
    process.off('SIGINT', interrupted)
    process.off('SIGTERM', interrupted)
    await cleanUp()
  }
}

/** The stores compared, in the order of the report: the JSON file, then one and two replicas over PostgreSQL. */
export const SQL_TARGETS = ['json', 'sql', 'sql×2'] as const
/** One of the compared stores. */
export type SqlTarget = (typeof SQL_TARGETS)[number]

/**
 * Connections, run length, rounds and warm-ups: those of bench/compare.ts, so the JSON figures are comparable
 * (`bun bench/sql.ts --quick` shortens them to try the bench out).
 */
export const SQL_SETTINGS = { ...COMPARE_SETTINGS }

/** A ratio the report shows: the rate of `of` over that of `over`, held against `goal` when it has one. */
export interface SqlRatio {
  of: SqlTarget
  over: SqlTarget
  goal?: number
}

/** A request measured on every target, and the ratios the report shows. */
export interface SqlCase {
  label: string
  method: 'GET' | 'POST'
  /** The path requested; with a script, the one the answers of every target are compared on. */
  path: string
  ratios: readonly SqlRatio[]
  /** A wrk script that makes the requests instead, and its arguments; and the requests as the report names them. */
  script?: { script: string; scriptArgs: string[] }
  shown?: string
}

/** The ratios of a read: the two goals (SQL against the JSON file, a second replica), then two replicas against it. */
const READ_RATIOS: readonly SqlRatio[] = [
  { of: 'sql', over: 'json', goal: 0.4 },
  { of: 'sql×2', over: 'sql', goal: 1.6 },
  { of: 'sql×2', over: 'json' },
]

/** The requests, as bench/compare.ts sends them. */
export const SQL_CASES: readonly SqlCase[] = [
  { label: 'Get one artist', method: 'GET', path: `/api/v1/artists/${COMPARE_ARTISTS / 2}`, ratios: READ_RATIOS },
  { label: 'List page', method: 'GET', path: '/api/v1/artists?limit=10&offset=0', ratios: READ_RATIOS },
  // Every request a different artist, as a real client's are: reads asked together share a statement over SQL
  // (src/store/sql/reads.ts), and here they cannot also share the row.
  {
    label: 'Get artists at random',
    method: 'GET',
    path: `/api/v1/artists/${COMPARE_ARTISTS / 2}`,
    ratios: READ_RATIOS,
    shown: `/api/v1/artists/{1…${COMPARE_ARTISTS}}`,
    script: {
      script: join(import.meta.dir, 'wrk', 'get-random-artist.lua'),
      scriptArgs: [String(COMPARE_ARTISTS)],
    },
  },
  {
    label: 'Create an artist',
    method: 'POST',
    path: '/api/v1/artists',
    ratios: [
      { of: 'sql', over: 'json', goal: 1 },
      { of: 'sql×2', over: 'json' },
      { of: 'sql×2', over: 'sql' },
    ],
  },
]

/** One measured run on one target: wrk's figures (summed over both wrk processes for two replicas), and more. */
export interface SqlRun extends LoadRun {
  /** PostgreSQL's CPU time per request (every process of the cluster), in µs; none for the JSON store. */
  postgresMicrosPerRequest?: number
  /** Creates: artists before and after the run. */
  artistsBefore?: number
  artistsAfter?: number
  /** Over SQL: what PostgreSQL's busy backends were doing during the run. */
  activity?: Activity
  /** Creates over SQL: transactions that wrote, from the transaction ids PostgreSQL handed out during the run. */
  writeTransactions?: number
}

/** The runs of one case per target, round by round: `runs[t][i]` ran in round i. */
export interface SqlResult extends SqlCase {
  runs: Record<SqlTarget, SqlRun[]>
}

type Progress = (line: string) => void
type Targets = Record<SqlTarget, ServerProcess[]>

/** The database every other one is a copy of: the generated catalogue, seeded once by rock-legends itself. */
const SEEDED = 'rl_seeded'

const noRuns = (): Record<SqlTarget, SqlRun[]> => ({ json: [], sql: [], 'sql×2': [] })
/** The order of the targets in round `round`: rotated each round, so none always runs first or last. */
const orderOf = (round: number) => SQL_TARGETS.map((_, i) => SQL_TARGETS[(i + round) % SQL_TARGETS.length] as SqlTarget)
const sum = (values: readonly number[]) => values.reduce((total, value) => total + value, 0)

/** A replica over `database`, as users start it but for `--data`: the default access log, into a file beside `dir`. */
export async function startReplica(
  pg: BenchPostgres,
  database: string,
  dir: string,
  seed?: string,
  binary?: string,
): Promise<ServerProcess> {
  await mkdir(dir, { recursive: true })
  const args = ['--data', pg.url(database), '--api-key', API_KEY, ...(seed ? [`--seed=${seed}`] : [])]
  return startRockLegends(args, accessLogOf(dir), binary)
}

/**
 * Runs `load` on every server of a target at once, the connections split evenly (two wrk processes for two
 * replicas), and sums their figures; latencies are the higher of the two. With `pg`, adds PostgreSQL's CPU time and
 * samples what its backends do meanwhile.
 */
export async function loadTarget(servers: readonly ServerProcess[], load: Load, pg?: BenchPostgres): Promise<SqlRun> {
  const pgBefore = pg ? await pg.cpuSeconds() : 0
  const connections = load.connections / servers.length
  const sampling = pg?.sampleActivity()
  const runs = await Promise.all(servers.map((server) => loadServer(server, { ...load, connections })))
  const activity = await sampling?.()
  const pgSeconds = pg ? (await pg.cpuSeconds()) - pgBefore : undefined
  const requests = sum(runs.map((run) => run.requests))
  return {
    requests,
    requestsPerSecond: sum(runs.map((run) => run.requestsPerSecond)),
    p50: Math.max(...runs.map((run) => run.p50)),
    p99: Math.max(...runs.map((run) => run.p99)),
    bytesRead: sum(runs.map((run) => run.bytesRead)),
    cpuMicrosPerRequest: sum(runs.map((run) => run.cpuMicrosPerRequest * run.requests)) / requests,
    postgresMicrosPerRequest: pgSeconds === undefined ? undefined : (pgSeconds * 1e6) / requests,
    activity,
  }
}

/** The wrk run of `c`, with the same connections on every target. */
function loadOf(c: SqlCase, seconds: number): Load {
  const connections = c.method === 'POST' ? SQL_SETTINGS.createConnections : SQL_SETTINGS.readConnections
  return { path: c.path, seconds, connections, ...(c.method === 'POST' ? CREATE_SCRIPT : (c.script ?? {})) }
}

const pgOf = (target: SqlTarget, pg: BenchPostgres) => (target === 'json' ? undefined : pg)

/** One measured run; for creates, with the artists before and after and, over SQL, the transactions that wrote. */
async function measureRun(target: SqlTarget, servers: ServerProcess[], c: SqlCase, pg: BenchPostgres) {
  const load = loadOf(c, SQL_SETTINGS.seconds)
  if (c.method === 'GET') return loadTarget(servers, load, pgOf(target, pg))
  const first = servers[0] as ServerProcess
  const artistsBefore = await artistCount(first.url)
  const xidBefore = target === 'json' ? 0 : await pg.nextXid()
  const run = await loadTarget(servers, load, pgOf(target, pg))
  const writeTransactions = target === 'json' ? undefined : (await pg.nextXid()) - xidBefore
  return { ...run, artistsBefore, artistsAfter: await artistCount(first.url), writeTransactions }
}

/** Checks that every target answers a read with the same status and body as the JSON store. */
async function assertSameAnswers(targets: Targets): Promise<void> {
  for (const c of SQL_CASES.filter((each) => each.method === 'GET')) {
    const bodyOf = async (server: ServerProcess) => {
      const response = await fetch(`${server.url}${c.path}`)
      return `${response.status} ${await response.text()}`
    }
    const expected = await bodyOf(targets.json[0] as ServerProcess)
    for (const server of [...targets.sql, ...targets['sql×2']])
      if ((await bodyOf(server)) !== expected) throw new Error(`a replica answers GET ${c.path} unlike the JSON store`)
  }
}

const stopAll = (servers: readonly ServerProcess[]) => Promise.all(servers.map((server) => server.stop()))

/** The reads: the same servers throughout (replica A alone is one replica; A and B are two), warmed up, in rounds. */
async function measureReads(pg: BenchPostgres, dir: string, catalogue: string, progress: Progress) {
  await pg.createDatabase('rl_reads', SEEDED)
  const started: ServerProcess[] = []
  try {
    started.push(await startStore(join(dir, 'json'), catalogue))
    started.push(await startReplica(pg, 'rl_reads', join(dir, 'replica-a')))
    started.push(await startReplica(pg, 'rl_reads', join(dir, 'replica-b')))
    const [json, a, b] = started as [ServerProcess, ServerProcess, ServerProcess]
    const targets: Targets = { json: [json], sql: [a], 'sql×2': [a, b] }
    await assertSameAnswers(targets)
    const results: SqlResult[] = []
    for (const c of SQL_CASES.filter((each) => each.method === 'GET')) {
      for (const target of SQL_TARGETS) await loadTarget(targets[target], loadOf(c, SQL_SETTINGS.warmUpSeconds))
      const runs = noRuns()
      for (let round = 0; round < SQL_SETTINGS.rounds; round++)
        for (const target of orderOf(round)) {
          const run = await measureRun(target, targets[target], c, pg)
          runs[target].push(run)
          progress(`${c.label}, round ${round + 1}, ${target}: ${Math.round(run.requestsPerSecond)} req/s`)
        }
      results.push({ ...c, runs })
    }
    return results
  } finally {
    await stopAll(started)
  }
}

/**
 * The creates: each round starts every target afresh on the seeded catalogue (a new data file; new copies of the
 * seeded database), warms each up with a 1 s read run and a few creates, then measures them in rotated order.
 */
async function measureCreates(pg: BenchPostgres, dir: string, catalogue: string, progress: Progress) {
  const c = SQL_CASES.find((each) => each.method === 'POST') as SqlCase
  const read = SQL_CASES[0] as SqlCase
  const runs = noRuns()
  for (let round = 0; round < SQL_SETTINGS.rounds; round++) {
    const [one, two] = [`rl_creates_${round}_one`, `rl_creates_${round}_two`]
    await pg.createDatabase(one, SEEDED)
    await pg.createDatabase(two, SEEDED)
    // So that no round inherits the last one's dirty pages: each starts from a checkpoint.
    await pg.query('CHECKPOINT')
    const roundDir = join(dir, `creates-${round}`)
    const started: ServerProcess[] = []
    try {
      started.push(await startStore(join(roundDir, 'json'), catalogue))
      started.push(await startReplica(pg, one, join(roundDir, 'sql')))
      started.push(await startReplica(pg, two, join(roundDir, 'sql2-a')))
      started.push(await startReplica(pg, two, join(roundDir, 'sql2-b')))
      const [json, sql, a, b] = started as [ServerProcess, ServerProcess, ServerProcess, ServerProcess]
      const targets: Targets = { json: [json], sql: [sql], 'sql×2': [a, b] }
      for (const server of started) {
        await loadServer(server, loadOf(read, 1))
        await createArtists(`${server.url}${c.path}`, SQL_SETTINGS.warmUpCreates)
      }
      for (const target of orderOf(round)) {
        const run = await measureRun(target, targets[target], c, pg)
        runs[target].push(run)
        progress(`${c.label}, round ${round + 1}, ${target}: ${Math.round(run.requestsPerSecond)} req/s`)
      }
    } finally {
      await stopAll(started)
    }
  }
  return { ...c, runs }
}

/** How long the measurement takes, roughly, in seconds: reads as in compare.ts, creates with ~10 s of set-up a round. */
export const SQL_DURATION_SECONDS = (() => {
  const { rounds, seconds, warmUpSeconds } = SQL_SETTINGS
  const round = SQL_TARGETS.length * seconds
  return 2 * (SQL_TARGETS.length * warmUpSeconds + rounds * round) + rounds * (round + 10)
})()

/**
 * Measures every case on the JSON store and on one and two replicas over `pg`, all holding the same
 * {@link COMPARE_ARTISTS} artists, the targets taking turns round after round.
 */
export async function measureSql(pg: BenchPostgres, workDir: string, progress: Progress): Promise<SqlResult[]> {
  const dir = join(workDir, 'sql')
  await mkdir(dir, { recursive: true })
  const catalogue = join(dir, 'catalogue.json')
  await writeCatalogue(catalogue, COMPARE_ARTISTS)
  await pg.createDatabase(SEEDED)
  const seeder = await startReplica(pg, SEEDED, join(dir, 'seeding'), catalogue)
  await seeder.stop()
  const reads = await measureReads(pg, join(dir, 'reads'), catalogue, progress)
  return [...reads, await measureCreates(pg, join(dir, 'creates'), catalogue, progress)]
}
