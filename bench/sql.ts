/**
 * `bun run bench:sql` (`bun bench/sql.ts`): the JSON store and rock-legends over PostgreSQL, one replica and two over
 * the same database, side by side in one run: GET one artist, a list page, durable creates. About 6 minutes.
 *
 * Starts a PostgreSQL of its own (the system's binaries, durable defaults) and removes it afterwards. Prints the
 * Markdown section and writes it into bench/RESULTS.md between `<!-- sql:begin -->` and `<!-- sql:end -->`. Needs wrk
 * and PostgreSQL; builds dist/rock-legends first when it is older than its sources. `--quick`: one short round, printed
 * and not written.
 */
import { loadavg } from 'node:os'
import { describeMachine } from './machine.ts'
import { RESULTS, writeNamedSection } from './results-file.ts'
import {
  type BenchPostgres,
  measureSql,
  readyForSql,
  SQL_DURATION_SECONDS,
  SQL_SETTINGS,
  withBenchPostgres,
} from './sql-bench.ts'
import { renderSql } from './sql-report.ts'
import { wrkVersion } from './wrk.ts'

/** The PostgreSQL settings the report shows: durability, then the sizes a tuner would touch first. */
const SHOWN_SETTINGS = [
  'fsync',
  'synchronous_commit',
  'wal_sync_method',
  'full_page_writes',
  'shared_buffers',
  'max_connections',
]

const progress = (line: string) => process.stderr.write(`bench: ${line}\n`)

/** The settings named in {@link SHOWN_SETTINGS}, as PostgreSQL reports them (`128MB`, `on`). */
async function settingsOf(pg: BenchPostgres): Promise<Record<string, string>> {
  const settings: Record<string, string> = {}
  for (const name of SHOWN_SETTINGS) {
    const [row] = await pg.query<Record<string, string>>(`SHOW ${name}`)
    settings[name] = Object.values(row ?? {})[0] ?? '?'
  }
  return settings
}

async function main(): Promise<void> {
  // One short round, written nowhere: to try the bench out.
  const quick = process.argv.includes('--quick')
  if (quick) Object.assign(SQL_SETTINGS, { rounds: 1, seconds: 2, warmUpSeconds: 1 })
  await readyForSql()
  await withBenchPostgres('sql', async (pg, workDir) => {
    const [version] = await pg.query<{ version: string }>('SELECT version()')
    const settings = await settingsOf(pg)
    const loadBefore = loadavg()[0] as number
    const date = new Date()
    progress(
      `the JSON store and one and two replicas over PostgreSQL: about ${Math.ceil(SQL_DURATION_SECONDS / 60)} minutes`,
    )
    const results = await measureSql(pg, workDir, progress)
    const markdown = renderSql({
      date,
      machine: await describeMachine(wrkVersion() ?? ''),
      command: 'bun run bench:sql',
      postgres: (version?.version ?? '').replace(/ on .*$/, ''),
      settings,
      loadBefore,
      loadAfter: loadavg()[0] as number,
      results,
    })
    process.stdout.write(markdown)
    if (quick) return
    await writeNamedSection('sql', markdown)
    progress(`wrote the sql section of ${RESULTS}`)
  })
}

await main()
