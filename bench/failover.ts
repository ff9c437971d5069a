/**
 * `bun bench/failover.ts [--runs N] [--down-ms MS] [--write]`: the primary fails over under a write load, `--runs`
 * times (5 by default), each over a new pair: a primary and its synchronous standby (`synchronous_commit =
 * remote_apply`, the standby made by `pg_basebackup -R`) behind HAProxy checking which node is primary
 * (test/support/replication.ts), two replicas of the built executable (`bun run build` first) over HAProxy, and four
 * clients creating artists. The primary is killed (`pg_ctl stop -m immediate`), the standby promoted `--down-ms` later
 * (4,000 by default: longer than the store's 3-second connection attempt, so that the replicas are seen answering 503
 * with no primary), and every create answered 201 is read back from both replicas afterwards.
 *
 * Per run: creates acknowledged and lost (must be 0), answers other than 201 or 503 with `Retry-After` (must be 0),
 * 503s while there was no primary and the slowest of them, how long `pg_ctl promote -w` took, and the time from the
 * promotion to the first write served, on the first replica and on the last. Prints the Markdown section; `--write`
 * puts it into bench/RESULTS.md between `<!-- failover:begin -->` and `<!-- failover:end -->`.
 */
import { loadavg } from 'node:os'
import { type RunningBinary, startBinary } from '../test/support/binary.ts'
import { binaries } from '../test/support/postgres.ts'
import {
  CHECK_EVERY_MS,
  type FailoverRun,
  failoverUnderLoad,
  replicationAvailable,
  startReplicatedPostgres,
} from '../test/support/replication.ts'
import { measuredOn } from './machine.ts'
import { count, median, ms, table } from './markdown.ts'
import { writeNamedSection } from './results-file.ts'

const progress = (line: string) => process.stderr.write(`bench: ${line}\n`)
const argument = (flag: string, otherwise: number) => {
  const at = process.argv.indexOf(flag)
  return at > 0 ? Number(process.argv[at + 1]) : otherwise
}
const RUNS = argument('--runs', 5)
const DOWN_MS = argument('--down-ms', 4000)
const KEY = 'failover-bench-key'

const why = replicationAvailable()
if (why) {
  console.error(`bench/failover.ts needs PostgreSQL and HAProxy: ${why}`)
  process.exit(1)
}

const loadBefore = loadavg()[0] ?? 0
const runs: FailoverRun[] = []
for (let n = 1; n <= RUNS; n++) {
  const cluster = await startReplicatedPostgres()
  const replicas: RunningBinary[] = []
  try {
    await cluster.createDatabase('rl_failover')
    const url = cluster.url('rl_failover')
    for (let i = 0; i < 2; i++)
      replicas.push(await startBinary(['--data', url, '--port', '0', '--api-key', KEY, '--log', 'off']))
    const run = await failoverUnderLoad({
      cluster,
      origins: replicas.map((replica) => replica.url),
      apiKey: KEY,
      downMs: DOWN_MS,
    })
    runs.push(run)
    progress(
      `run ${n}/${RUNS}: ${run.acknowledged} acknowledged, ${run.lost.length} lost, ${run.unexpected.length} unexpected, ` +
        `first write ${Math.round(run.firstWriteMs)} ms after the promotion`,
    )
  } finally {
    await Promise.all(replicas.map((replica) => replica.stop().catch(() => 0)))
    cluster.stop()
  }
}

const version = binaries()?.split('/').at(-2) ?? '?'
const command = `bun bench/failover.ts --runs ${RUNS}${DOWN_MS === 4000 ? '' : ` --down-ms ${DOWN_MS}`}`
const lost = runs.reduce((sum, run) => sum + run.lost.length, 0)
const unexpected = runs.reduce((sum, run) => sum + run.unexpected.length, 0)
const markdown = `## Through a failover of the primary

${await measuredOn(command, loadBefore, `PostgreSQL ${version}, a primary and a synchronous standby, \`synchronous_commit = remote_apply\`, \`fsync = off\`; HAProxy ${haproxyVersion()} checking each node every ${CHECK_EVERY_MS} ms`)}

- **Each run:** a new primary and standby (\`pg_basebackup -R\`), two replicas over HAProxy's address, four clients
  creating artists in a loop (a 503 is tried again 50 ms later). After 1.5 s of load the primary is killed
  (\`pg_ctl stop -m immediate\`); ${count(DOWN_MS)} ms later the standby is promoted (\`pg_ctl promote -w\`); once both
  replicas have served a write, the load stops and every create answered 201 is read back from both replicas.
- **Promotion to first write:** from \`pg_ctl promote -w\` returning to the first 201 on any replica, and on the later
  of the two; it includes HAProxy's next check (every ${CHECK_EVERY_MS} ms) and the replicas' pools reconnecting.
- **503s:** a create sent while there is no primary waits for the store's attempt to connect (3 s, then
  \`DatabaseUnavailableError\`) before its 503, which is why there are few of them and each takes about 3 s; one
  sent then, once a primary answers again, is served instead.

${table(
  [
    ['Run', 'right'],
    ['Acknowledged', 'right'],
    ['Lost', 'right'],
    ['Neither 201 nor 503', 'right'],
    ['503s with no primary', 'right'],
    ['Slowest 503', 'right'],
    ['pg_ctl promote', 'right'],
    ['Promotion to first write', 'right'],
    ['… on both replicas', 'right'],
  ],
  runs.map((run, i) => [
    String(i + 1),
    count(run.acknowledged),
    `**${run.lost.length}**`,
    String(run.unexpected.length),
    count(run.refused),
    ms(run.slowestRefusalMs),
    ms(run.promoteMs),
    `**${ms(run.firstWriteMs)}**`,
    ms(run.everyReplicaMs),
  ]),
)}

Over ${RUNS} runs: **${lost}** acknowledged writes lost, ${unexpected} answers neither 201 nor 503 with \`Retry-After\`;
promotion to first write median **${ms(median(runs.map((run) => run.firstWriteMs)))}**, slowest
${ms(Math.max(...runs.map((run) => run.everyReplicaMs)))} until both replicas wrote.
`

function haproxyVersion(): string {
  const out = Bun.spawnSync(['/usr/sbin/haproxy', '-v']).stdout.toString()
  return /version (\S+)/.exec(out)?.[1] ?? '?'
}

console.log(markdown)
if (process.argv.includes('--write')) await writeNamedSection('failover', markdown)
