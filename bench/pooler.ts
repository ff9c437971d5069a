/**
 * `bun bench/pooler.ts [--rounds N] [--seconds S] [--write]`: one replica of rock-legends over PostgreSQL directly
 * against the same through PgBouncer in transaction mode (Debian's, test/support/pgbouncer.ts), side by side in the
 * same rounds: reads of one artist by id and durable creates, under wrk. Three targets, over one database seeded with
 * 1,000 artists, the order rotated each round:
 *
 * - **direct**: `--data` the server's unix socket, named prepared statements (Bun.SQL's default);
 * - **direct, `prepare=false`**: the same without them, to tell their cost apart from the pooler's hop;
 * - **PgBouncer, transaction mode**: `--data` PgBouncer's loopback port with `?prepare=false`, no direct URL.
 *
 * Then, in-process over the direct socket, what a statement outside a transaction costs bounded as the store bounds
 * it (a timer that cancels it, src/store/sql/limits.ts) against wrapped in a transaction of its own to `SET LOCAL`
 * its `statement_timeout`. Prints the Markdown section; `--write` puts it into bench/RESULTS.md between
 * `<!-- pooler:begin -->` and `<!-- pooler:end -->`.
 */
import { loadavg } from 'node:os'
import { join } from 'node:path'
import { SQL } from 'bun'
import { pgbouncerAvailable, startPgbouncer } from '../test/support/pgbouncer.ts'
import { describeMachine } from './machine.ts'
import { count, machineTable, median, ms, ratio, table, utc } from './markdown.ts'
import { writeNamedSection } from './results-file.ts'
import { API_KEY, CREATE_SCRIPT, createArtists } from './rock-legends.ts'
import { type ServerProcess, startRockLegends } from './server-process.ts'
import { readyForSql, withBenchPostgres } from './sql-bench.ts'
import { type LoadRun, loadServer, wrkVersion } from './wrk.ts'

const progress = (line: string) => process.stderr.write(`bench: ${line}\n`)
const argument = (flag: string, otherwise: number) => {
  const at = process.argv.indexOf(flag)
  return at > 0 ? Number(process.argv[at + 1]) : otherwise
}
const ROUNDS = argument('--rounds', 5)
const SECONDS = argument('--seconds', 5)
const CONNECTIONS = 32
const ARTISTS = 1000

const TARGETS = ['direct', 'direct, prepare=false', 'PgBouncer, transaction mode'] as const
type Target = (typeof TARGETS)[number]
type LoadName = 'GET one artist' | 'POST an artist (durable create)'
const LOADS: Record<LoadName, { path: string; script: string; scriptArgs: string[] }> = {
  'GET one artist': {
    path: '/api/v1/artists/1',
    script: join(import.meta.dir, 'wrk', 'get-random-artist.lua'),
    scriptArgs: [String(ARTISTS)],
  },
  'POST an artist (durable create)': { path: '/api/v1/artists', ...CREATE_SCRIPT },
}

/** What a statement outside a transaction costs, bounded each way, in µs per statement over `n` in a row. */
async function statementCosts(url: string): Promise<Record<string, number>> {
  const { connectStorePool } = await import('../src/store/sql/sql-store.ts')
  const bounded = await connectStorePool(url, { pool: 4 })
  const plain = new SQL({ url, max: 4 })
  const read = (sql: SQL, id: number) => sql`SELECT id, name FROM rl_artists WHERE id = ${id}`
  const ways: Record<string, () => Promise<unknown>> = {
    'no limit (as a startup parameter would cost)': () => read(plain, 1 + Math.floor(Math.random() * ARTISTS)),
    'cancelled by the client past its time (this build)': () => read(bounded, 1 + Math.floor(Math.random() * ARTISTS)),
    'in a transaction of its own, SET LOCAL first': () =>
      plain.begin(async (tx) => {
        await tx`SELECT set_config('statement_timeout', '5000', true)`
        return read(tx as unknown as SQL, 1 + Math.floor(Math.random() * ARTISTS))
      }),
  }
  const costs: Record<string, number[]> = {}
  for (let round = 0; round < 5; round++)
    for (const [name, way] of Object.entries(ways)) {
      for (let i = 0; i < 200; i++) await way()
      const n = 2000
      const started = performance.now()
      for (let i = 0; i < n; i++) await way()
      costs[name] = [...(costs[name] ?? []), ((performance.now() - started) * 1000) / n]
    }
  await bounded.close()
  await plain.close()
  return Object.fromEntries(Object.entries(costs).map(([name, values]) => [name, median(values)]))
}

async function main() {
  await readyForSql()
  const noBouncer = pgbouncerAvailable()
  if (noBouncer) throw new Error(noBouncer)
  const wrk = wrkVersion() ?? ''
  const loadBefore = loadavg()[0] ?? 0
  const started = new Date()
  const { runs, costs, version } = await withBenchPostgres('pooler', async (pg, workDir) => {
    await pg.createDatabase('pooler')
    const socket = pg.url('pooler')
    const params = new URLSearchParams(socket.slice(socket.indexOf('?') + 1))
    const bouncer = await startPgbouncer(
      { socketDir: params.get('host') as string, port: Number(params.get('port')) },
      'transaction',
    )
    const urls: Record<Target, string> = {
      direct: socket,
      'direct, prepare=false': `${socket}&prepare=false`,
      'PgBouncer, transaction mode': `${bouncer.url('pooler')}?prepare=false`,
    }
    const servers = {} as Record<Target, ServerProcess>
    try {
      for (const target of TARGETS) {
        const args = ['--data', urls[target], '--api-key', API_KEY, '--log', 'off']
        servers[target] = await startRockLegends(args, join(workDir, `${target.replace(/\W+/g, '-')}.log`))
      }
      await createArtists(`${servers.direct.url}/api/v1/artists`, ARTISTS)
      const runs = {} as Record<LoadName, Record<Target, LoadRun[]>>
      for (let round = 0; round < ROUNDS; round++)
        for (const [name, load] of Object.entries(LOADS) as [LoadName, (typeof LOADS)[LoadName]][])
          for (let i = 0; i < TARGETS.length; i++) {
            const target = TARGETS[(i + round) % TARGETS.length] as Target
            progress(`round ${round + 1}/${ROUNDS}: ${name}, ${target}`)
            const run = await loadServer(servers[target], { ...load, connections: CONNECTIONS, seconds: SECONDS })
            const byTarget = runs[name] ?? ({} as Record<Target, LoadRun[]>)
            byTarget[target] = [...(byTarget[target] ?? []), run]
            runs[name] = byTarget
          }
      progress('statements in-process')
      const costs = await statementCosts(socket)
      return { runs, costs, version: pg.version }
    } finally {
      await Promise.all(Object.values(servers).map((server) => server.stop()))
      bouncer.stop()
    }
  })
  const machine = await describeMachine(wrk)
  const loadAfter = loadavg()[0] ?? 0
  const command = `bun bench/pooler.ts --rounds ${ROUNDS} --seconds ${SECONDS}`
  const rows: string[][] = []
  for (const name of Object.keys(LOADS) as LoadName[]) {
    const direct = runs[name].direct
    for (const target of TARGETS) {
      const each = runs[name][target]
      const rate = median(each.map((run) => run.requestsPerSecond))
      const over = median(each.map((run, i) => run.requestsPerSecond / (direct[i] as LoadRun).requestsPerSecond))
      rows.push([
        name,
        target,
        `**${count(rate)}**`,
        each.map((run) => count(run.requestsPerSecond)).join(', '),
        target === 'direct' ? '' : `**${ratio(over)}**`,
        ms(median(each.map((run) => run.p50))),
        ms(median(each.map((run) => run.p99))),
        count(median(each.map((run) => run.cpuMicrosPerRequest))),
      ])
    }
  }
  const markdown = `## Through a connection pooler: PgBouncer in transaction mode against direct

Measured ${utc(started)} with \`${command}\` on this machine (PostgreSQL ${version}, every setting at its default, durable commits; PgBouncer ${Bun.spawnSync(['/usr/sbin/pgbouncer', '--version']).stdout.toString().split('\n')[0]?.replace('PgBouncer ', '')}, \`pool_mode = transaction\`, \`default_pool_size = 20\`, over PostgreSQL's unix socket), one-minute load average ${loadBefore.toFixed(2)} before and ${loadAfter.toFixed(2)} after (the machine is shared):

${machineTable(machine)}

- **Targets:** one replica each, all three over the same database of ${count(ARTISTS)} artists, started together and loaded in turns: **direct** (the unix socket, named prepared statements), **direct, prepare=false** (the same without them), **PgBouncer, transaction mode** (\`--data postgres://…@127.0.0.1:PORT/db?prepare=false\`, no \`--data-direct\`: the change feed polls).
- **Load:** \`wrk -t2 -c${CONNECTIONS} -d${SECONDS}s\`, reads of a random artist by id (\`bench/wrk/get-random-artist.lua\`) and creates (\`bench/wrk/post-artist.lua\`); ${ROUNDS} rounds, the order of the targets rotated each round; medians over the rounds, ratios medians of per-round ratios. CPU: the replica's own, per request.

${table(
  [
    ['Request', 'left'],
    ['Target', 'left'],
    ['Requests/s (median)', 'right'],
    ['Per round', 'left'],
    ['Over direct, per round', 'right'],
    ['p50', 'right'],
    ['p99', 'right'],
    ['Replica CPU µs/request', 'right'],
  ],
  rows,
)}

**A statement outside a transaction, bounded** (in-process, one connection at a time over the direct socket, a read of
one artist by id, 2,000 in a row after 200 to warm up, median of 5 rounds):

${table(
  [
    ['How', 'left'],
    ['µs per statement', 'right'],
  ],
  Object.entries(costs).map(([how, micros]) => [how, `**${micros.toFixed(0)}**`]),
)}
`
  console.log(markdown)
  if (process.argv.includes('--write')) await writeNamedSection('pooler', markdown)
}

await main()
process.exit(0)
