/**
 * `bun bench/sql-creates.ts [--before BINARY [--before-is TEXT]] [--after-is TEXT] [--rounds N] [--quick]`: durable
 * creates over one, two and four replicas of rock-legends over one PostgreSQL, this tree's build (`dist/rock-legends`,
 * or `BENCH_BINARY`) and, with `--before`, another build side by side in the same rounds (`--before-is` and
 * `--after-is` say what each is, for the report: e.g. `the build of HEAD`). About 40 s a round per build.
 *
 * Each round measures every target once, in an order rotated each round; every target runs on a fresh copy of the
 * seeded database (seeded by its own build: a build refuses a schema newer than its own) after a `CHECKPOINT`, its
 * replicas started afresh and warmed with a 1 s read run and a few creates. Two or four replicas get one wrk each,
 * the connections split evenly (32 in all, as bench/sql.ts). PostgreSQL's busy backends are sampled every 50 ms
 * (bench/sql-bench.ts): the share of them waiting on a `Lock:` shows whether replicas wait for each other's rows.
 *
 * Prints the Markdown section; with `--write`, also writes it into bench/RESULTS.md between
 * `<!-- sql-creates:begin -->` and `<!-- sql-creates:end -->` (never with `--quick`: one short round).
 */
import { loadavg } from 'node:os'
import { join } from 'node:path'
import { writeCatalogue } from './catalogue.ts'
import { COMPARE_ARTISTS } from './compare.ts'
import { describeMachine } from './machine.ts'
import { type Column, count, machineTable, median, ratio, table, utc } from './markdown.ts'
import { RESULTS, writeNamedSection } from './results-file.ts'
import { artistCount, CREATE_SCRIPT, createArtists } from './rock-legends.ts'
import { BINARY, type ServerProcess } from './server-process.ts'
import {
  type Activity,
  type BenchPostgres,
  loadTarget,
  readyForSql,
  SQL_SETTINGS,
  startReplica,
  withBenchPostgres,
} from './sql-bench.ts'
import { loadServer, wrkCommand, wrkVersion } from './wrk.ts'

const progress = (line: string) => process.stderr.write(`bench: ${line}\n`)

/** A build and how many replicas of it. */
interface Target {
  name: string
  build: 'before' | 'after'
  replicas: number
}

/** One measured run of a target. */
interface Run {
  creates: number
  perSecond: number
  transactions: number
  /** WAL flushes (`pg_stat_wal.wal_sync`) during the run: the commits that waited for the disk, grouped. */
  flushes: number
  activity: Activity
}

const argument = (flag: string) => {
  const at = process.argv.indexOf(flag)
  return at > 0 ? process.argv[at + 1] : undefined
}

/** The share of busy backends whose state starts with `prefix`, over `runs`. */
function share(runs: readonly Run[], prefix: string): number {
  let busy = 0
  let matching = 0
  for (const { activity } of runs)
    for (const [what, n] of Object.entries(activity.backends)) {
      busy += n
      if (what.startsWith(prefix)) matching += n
    }
  return busy === 0 ? 0 : matching / busy
}

const percent = (n: number) => `${(100 * n).toFixed(1)}%`

/** Which locks were waited for over `runs`, each with its share of busy backends: ` (extend 0.3%)`, or nothing. */
function lockKinds(runs: readonly Run[]): string {
  const kinds = new Set<string>()
  for (const { activity } of runs)
    for (const what of Object.keys(activity.backends)) if (what.startsWith('Lock:')) kinds.add(what)
  if (kinds.size === 0) return ''
  return ` (${[...kinds].map((kind) => `${kind.slice('Lock: '.length)} ${percent(share(runs, kind))}`).join(', ')})`
}

/** The top states of busy backends over `runs`, as `state share` pairs. */
function topStates(runs: readonly Run[]): string {
  const backends: Record<string, number> = {}
  for (const { activity } of runs)
    for (const [what, n] of Object.entries(activity.backends)) backends[what] = (backends[what] ?? 0) + n
  const busy = Object.values(backends).reduce((a, b) => a + b, 0)
  return Object.entries(backends)
    .sort(([, a], [, b]) => b - a)
    .slice(0, 4)
    .map(([what, n]) => `${what} ${Math.round((100 * n) / busy)}%`)
    .join('; ')
}

/** Starts the replicas of `target` over a fresh copy of its build's seeded database, warmed up. */
async function startTarget(pg: BenchPostgres, target: Target, binary: string, dir: string, database: string) {
  await pg.createDatabase(database, `rl_seeded_${target.build}`)
  await pg.query('CHECKPOINT')
  const servers: ServerProcess[] = []
  for (let i = 0; i < target.replicas; i++)
    servers.push(await startReplica(pg, database, join(dir, `replica-${i}`), undefined, binary))
  for (const server of servers) {
    await loadServer(server, { path: '/api/v1/artists/1', seconds: 1, connections: SQL_SETTINGS.readConnections })
    await createArtists(`${server.url}/api/v1/artists`, SQL_SETTINGS.warmUpCreates)
  }
  return servers
}

/** The WAL flushes of the cluster so far (PostgreSQL 14+; 0 before). */
async function walFlushes(pg: BenchPostgres): Promise<number> {
  const [row] = await pg.query<{ n: string }>('SELECT wal_sync AS n FROM pg_stat_wal').catch(() => [])
  return Number(row?.n ?? 0)
}

/** One measured run of creates on `servers`, with PostgreSQL's transactions and activity. */
async function measure(pg: BenchPostgres, servers: ServerProcess[], seconds: number): Promise<Run> {
  const first = servers[0] as ServerProcess
  const before = await artistCount(first.url)
  const xid = await pg.nextXid()
  const flushes = await walFlushes(pg)
  const run = await loadTarget(
    servers,
    { path: '/api/v1/artists', seconds, connections: SQL_SETTINGS.createConnections, ...CREATE_SCRIPT },
    pg,
  )
  const transactions = (await pg.nextXid()) - xid
  const flushed = (await walFlushes(pg)) - flushes
  const creates = (await artistCount(first.url)) - before
  return {
    creates,
    perSecond: run.requestsPerSecond,
    transactions,
    flushes: flushed,
    activity: run.activity ?? { samples: 0, backends: {} },
  }
}

async function main(): Promise<void> {
  const quick = process.argv.includes('--quick')
  const before = argument('--before')
  const beforeIs = argument('--before-is') ?? 'the build given by `--before`'
  const afterIs = argument('--after-is')
  const rounds = quick ? 1 : Number(argument('--rounds') ?? 6)
  const seconds = quick ? 2 : SQL_SETTINGS.seconds
  await readyForSql()
  const binaries = { after: BINARY, before: before ?? '' }
  const targets: Target[] = [
    ...(before
      ? ([1, 2, 4].map((replicas) => ({ name: `before, ${replicas}`, build: 'before', replicas })) as Target[])
      : []),
    ...([1, 2, 4].map((replicas) => ({ name: `after, ${replicas}`, build: 'after', replicas })) as Target[]),
  ]
  await withBenchPostgres('sql-creates', async (pg, workDir) => {
    const [version] = await pg.query<{ version: string }>('SELECT version()')
    const catalogue = join(workDir, 'catalogue.json')
    await writeCatalogue(catalogue, COMPARE_ARTISTS)
    for (const build of before ? (['before', 'after'] as const) : (['after'] as const)) {
      await pg.createDatabase(`rl_seeded_${build}`)
      const seeder = await startReplica(
        pg,
        `rl_seeded_${build}`,
        join(workDir, `seed-${build}`),
        catalogue,
        binaries[build],
      )
      await seeder.stop()
    }
    const loadBefore = loadavg()[0] as number
    const date = new Date()
    const runs = new Map<string, Run[]>(targets.map((target) => [target.name, []]))
    for (let round = 0; round < rounds; round++) {
      const order = targets.map((_, i) => targets[(i + round) % targets.length] as Target)
      for (const target of order) {
        const dir = join(workDir, `round-${round}`, target.name.replace(/\W+/g, '-'))
        const servers = await startTarget(
          pg,
          target,
          binaries[target.build],
          dir,
          `rl_${round}_${target.build}_${target.replicas}`,
        )
        try {
          const run = await measure(pg, servers, seconds)
          runs.get(target.name)?.push(run)
          progress(
            `round ${round + 1}, ${target.name}: ${Math.round(run.perSecond)} creates/s, Lock ${percent(share([run], 'Lock:'))}`,
          )
        } finally {
          await Promise.all(servers.map((server) => server.stop()))
        }
      }
    }
    const loadAfter = loadavg()[0] as number
    const machine = await describeMachine(wrkVersion() ?? '')
    const perRound = (name: string) => (runs.get(name) ?? []).map((run) => run.perSecond)
    const ratioOf = (of: string, over: string) => {
      const ratios = perRound(of).map((rate, i) => rate / (perRound(over)[i] as number))
      return { median: median(ratios), each: ratios }
    }
    const rows = targets.map((target) => {
      const mine = runs.get(target.name) ?? []
      const one = `${target.build}, 1`
      const scaled = target.replicas === 1 ? undefined : ratioOf(target.name, one)
      const perTransaction = median(mine.map((run) => run.creates / run.transactions))
      const perFlush = median(mine.map((run) => run.creates / Math.max(1, run.flushes)))
      return [
        `${target.build === 'before' ? 'before' : 'after (this tree)'}, ${target.replicas} replica${target.replicas === 1 ? '' : 's'}`,
        `**${count(median(perRound(target.name)))}**`,
        perRound(target.name).map(count).join(', '),
        scaled ? `**${ratio(scaled.median)}** (${scaled.each.map(ratio).join(', ')})` : '',
        perTransaction.toFixed(1),
        perFlush.toFixed(1),
        `**${percent(share(mine, 'Lock:'))}**${lockKinds(mine)}`,
        topStates(mine),
      ]
    })
    const columns: Column[] = [
      ['Target', 'left'],
      ['Creates/s (median)', 'right'],
      ['Per round', 'left'],
      ['Over 1 replica of the same build, per round', 'left'],
      ['Creates per transaction id', 'right'],
      ['Creates per WAL flush', 'right'],
      ['`Lock:` waits (share of busy backends)', 'right'],
      ['What busy backends were doing', 'left'],
    ]
    const sideBySide = before ? ratioOf('after, 1', 'before, 1') : undefined
    const wrk = wrkCommand({ url: 'URL', connections: SQL_SETTINGS.createConnections, seconds }).join(' ')
    const markdown = `## Creates over one, two and four replicas

Measured ${utc(date)} with \`bun bench/sql-creates.ts${before ? ` --before BINARY --before-is '${beforeIs}'` : ''}${afterIs ? ` --after-is '${afterIs}'` : ''}${rounds !== 6 ? ` --rounds ${rounds}` : ''}\` on this machine (${(version?.version ?? '').replace(/ on .*$/, '')}, every setting at its default, durable commits), one-minute load average ${loadBefore.toFixed(2)} just before the first run and ${loadAfter.toFixed(2)} at the end (the machine is shared with other work):

${machineTable(machine)}

- **Targets:** ${before ? `**before** is ${beforeIs}; ` : ''}**after** is this tree${afterIs ? ` (${afterIs})` : ''}. 1, 2 or 4 replicas of the compiled executable over one database, each over a fresh copy of the ${count(COMPARE_ARTISTS)} seeded artists, started afresh for every run.
- **Load:** \`${wrk} -s bench/wrk/post-artist.lua …\`, ${SQL_SETTINGS.createConnections} connections in all, split evenly between the replicas (one wrk each); creates/s summed. ${rounds} round${rounds === 1 ? '' : 's'} of ${seconds} s, each target once per round, the order rotated; medians over the rounds, ratios medians of per-round ratios.
- **Lock waits:** PostgreSQL's busy client backends (\`pg_stat_activity\`, active or idle in a transaction) sampled every 50 ms; the share of them waiting on any \`Lock:\` event. Creates per transaction id: creates completed over the transaction ids PostgreSQL assigned during the run (every transaction that wrote, a NOTIFY's included); per WAL flush: over \`pg_stat_wal.wal_sync\`, the flushes that durable commits wait for (several commits may share one).

${table(columns, rows)}
${sideBySide ? `\nOne replica, this tree over before, per round: **${ratio(sideBySide.median)}** (${sideBySide.each.map(ratio).join(', ')}).\n` : ''}`
    process.stdout.write(markdown)
    if (quick || !process.argv.includes('--write')) return
    await writeNamedSection('sql-creates', markdown)
    progress(`wrote the sql-creates section of ${RESULTS}`)
  })
}

await main()
