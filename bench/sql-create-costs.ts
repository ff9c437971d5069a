/**
 * `bun bench/sql-create-costs.ts [--binary PATH]… [--replicas N] [--seconds S] [--rounds N] [--profile DIR]`: where
 * the cost of a durable create over SQL goes, per create and per commit, for one or more builds side by side (each
 * `--binary` in turn, `dist/rock-legends` by default), over one PostgreSQL of the bench's own with
 * `pg_stat_statements` loaded (nothing else changed: durable commits, every other setting at its default).
 *
 * Each run starts N replicas over a fresh copy of the seeded database, warms them up, resets the statistics, runs
 * wrk's creates (32 connections split between the replicas, as bench/sql-creates.ts), and prints: creates/s; the
 * transaction ids taken (every transaction that wrote, NOTIFY included) and WAL flushes (`pg_stat_wal`) per 100
 * creates; WAL bytes per create; CPU µs per create of the replicas and of PostgreSQL; and every statement
 * PostgreSQL ran, with its calls per 100 creates and its time. `--profile DIR` runs the replicas from source under
 * `bun --cpu-prof-md` instead (the first `--binary` ignored) and leaves one profile per replica in DIR.
 *
 * A diagnosis, printed only: the figures of record are bench/sql-creates.ts's.
 */
import { chmod, mkdir, writeFile } from 'node:fs/promises'
import { loadavg } from 'node:os'
import { join } from 'node:path'
import { ensureBinary } from '../test/support/binary.ts'
import { writeCatalogue } from './catalogue.ts'
import { COMPARE_ARTISTS } from './compare.ts'
import { artistCount, CREATE_SCRIPT } from './rock-legends.ts'
import { BINARY, type ServerProcess } from './server-process.ts'
import { type BenchPostgres, loadTarget, SQL_SETTINGS, startReplica, withBenchPostgres } from './sql-bench.ts'

const argument = (flag: string) => {
  const at = process.argv.indexOf(flag)
  return at > 0 ? process.argv[at + 1] : undefined
}
const every = (flag: string) =>
  process.argv.flatMap((value, i) => (value === flag && process.argv[i + 1] ? [process.argv[i + 1] as string] : []))

interface Wal {
  records: number
  bytes: number
  fpi: number
  writes: number
  syncs: number
}

async function wal(pg: BenchPostgres): Promise<Wal> {
  const [row] = await pg.query<Record<string, string>>(
    'SELECT wal_records, wal_bytes, wal_fpi, wal_write, wal_sync FROM pg_stat_wal',
  )
  return {
    records: Number(row?.wal_records),
    bytes: Number(row?.wal_bytes),
    fpi: Number(row?.wal_fpi),
    writes: Number(row?.wal_write),
    syncs: Number(row?.wal_sync),
  }
}

/** Statements of the replicas (not the bench's own), with their calls and time, most called first. */
async function statements(pg: BenchPostgres) {
  return pg.query<{ query: string; calls: string; ms: string; rows: string; plans: string; planMs: string }>(`
    SELECT regexp_replace(query, '\\s+', ' ', 'g') AS query, sum(calls) AS calls, sum(total_exec_time) AS ms,
      sum(rows) AS rows, sum(plans) AS plans, sum(total_plan_time) AS "planMs"
    FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
    WHERE d.datname LIKE 'rl_run_%'
    GROUP BY 1 ORDER BY 2 DESC LIMIT 14`)
}

async function main(): Promise<void> {
  const replicas = Number(argument('--replicas') ?? 2)
  const seconds = Number(argument('--seconds') ?? SQL_SETTINGS.seconds)
  const rounds = Number(argument('--rounds') ?? 1)
  const profileDir = argument('--profile')
  let binaries = every('--binary')
  if (binaries.length === 0) {
    await ensureBinary()
    binaries = [BINARY]
  }
  const settings = {
    shared_preload_libraries: 'pg_stat_statements',
    'pg_stat_statements.track': 'all',
    'pg_stat_statements.track_planning': 'on',
  }
  await withBenchPostgres(
    'sql-create-costs',
    async (pg, workDir) => {
      if (profileDir) {
        await mkdir(profileDir, { recursive: true })
        const wrapper = join(workDir, 'from-source.sh')
        const main = join(import.meta.dir, '..', 'src', 'main.ts')
        await writeFile(
          wrapper,
          `#!/bin/sh\nexec ${process.execPath} --cpu-prof-md --cpu-prof-dir=${profileDir} ${main} "$@"\n`,
        )
        await chmod(wrapper, 0o755)
        binaries = [wrapper]
      }
      await pg.query('CREATE EXTENSION pg_stat_statements')
      const catalogue = join(workDir, 'catalogue.json')
      await writeCatalogue(catalogue, COMPARE_ARTISTS)
      for (const [b, binary] of binaries.entries()) {
        await pg.createDatabase(`rl_seeded_${b}`)
        const seeder = await startReplica(pg, `rl_seeded_${b}`, join(workDir, `seed-${b}`), catalogue, binary)
        await seeder.stop()
      }
      process.stdout.write(`load average ${loadavg()[0]?.toFixed(2)} at the start\n`)
      for (let round = 0; round < rounds; round++)
        for (const [b, binary] of binaries.entries()) {
          const database = `rl_run_${round}_${b}`
          await pg.createDatabase(database, `rl_seeded_${b}`)
          await pg.query('CHECKPOINT')
          const servers: ServerProcess[] = []
          for (let i = 0; i < replicas; i++)
            servers.push(await startReplica(pg, database, join(workDir, `run-${round}-${b}-${i}`), undefined, binary))
          try {
            await loadTarget(servers, {
              path: '/api/v1/artists',
              seconds: 1,
              connections: SQL_SETTINGS.createConnections,
              ...CREATE_SCRIPT,
            })
            await pg.query('CHECKPOINT')
            await pg.query("SELECT pg_stat_statements_reset(), pg_stat_reset_shared('wal')")
            const walBefore = await wal(pg)
            const artistsBefore = await artistCount((servers[0] as ServerProcess).url)
            const xid = await pg.nextXid()
            const run = await loadTarget(
              servers,
              { path: '/api/v1/artists', seconds, connections: SQL_SETTINGS.createConnections, ...CREATE_SCRIPT },
              pg,
            )
            const xids = (await pg.nextXid()) - xid
            const walAfter = await wal(pg)
            const creates = (await artistCount((servers[0] as ServerProcess).url)) - artistsBefore
            const per100 = (n: number) => ((100 * n) / creates).toFixed(1)
            const top = await statements(pg)
            process.stdout.write(
              [
                `\n## ${binary}, ${replicas} replica(s), round ${round + 1}: ${Math.round(run.requestsPerSecond)} creates/s, ${creates} creates, load ${loadavg()[0]?.toFixed(2)}`,
                `transaction ids per 100 creates: ${per100(xids)} (creates per transaction id ${(creates / xids).toFixed(1)})`,
                `WAL per 100 creates: ${per100(walAfter.records - walBefore.records)} records, ${per100(walAfter.syncs - walBefore.syncs)} flushes, ${per100(walAfter.writes - walBefore.writes)} writes, ${per100(walAfter.fpi - walBefore.fpi)} full pages; ${((walAfter.bytes - walBefore.bytes) / creates).toFixed(0)} bytes a create`,
                `CPU per create: rock-legends ${run.cpuMicrosPerRequest.toFixed(0)} µs, PostgreSQL ${run.postgresMicrosPerRequest?.toFixed(0)} µs`,
                `busy backends: ${Object.entries(run.activity?.backends ?? {})
                  .sort(([, x], [, y]) => y - x)
                  .map(([what, n]) => `${what} ${n}`)
                  .join('; ')}`,
                '| calls per 100 creates | ms per call | rows per call | plans per call | planning ms per call | statement |',
                '| ---: | ---: | ---: | ---: | ---: | --- |',
                ...top.map(
                  (row) =>
                    `| ${per100(Number(row.calls))} | ${(Number(row.ms) / Number(row.calls)).toFixed(3)} | ${(Number(row.rows) / Number(row.calls)).toFixed(1)} | ${(Number(row.plans) / Number(row.calls)).toFixed(2)} | ${(Number(row.planMs) / Number(row.calls)).toFixed(3)} | ${row.query.slice(0, 160)} |`,
                ),
                '',
              ].join('\n'),
            )
          } finally {
            await Promise.all(servers.map((server) => server.stop()))
          }
        }
    },
    settings,
  )
}

await main()
