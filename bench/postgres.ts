import { chownSync, existsSync, mkdirSync, readdirSync } from 'node:fs'
import { readFile, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { SQL, spawnSync } from 'bun'

/** The role the bench connects as: the cluster's superuser, trusted on the socket. */
const ROLE = 'rl'
// The unit of the times in /proc/PID/stat (see server-process.ts).
const USER_HZ = 100

/** A PostgreSQL started for a benchmark, with its durable defaults (fsync and synchronous_commit on). */
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
  /** Stops the server (`-m fast`) and removes its directory. */
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

/** The directory of the newest installed PostgreSQL's programs (Debian's layout), or undefined. */
export function postgresBinaries(): string | undefined {
  const root = '/usr/lib/postgresql'
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((name) => /^\d+$/.test(name))
        .sort((a, b) => Number(b) - Number(a))
    : []
  const found = versions.find((version) => existsSync(join(root, version, 'bin', 'postgres')))
  return found ? join(root, found, 'bin') : undefined
}

/** Runs a PostgreSQL program, as the `postgres` user when this process is root (initdb and postgres refuse root). */
function run(bin: string, program: string, args: string[], check = true): void {
  const command = [join(bin, program), ...args]
  const asRoot = process.getuid?.() === 0
  const result = spawnSync(asRoot ? ['runuser', '-u', 'postgres', '--', ...command] : command, {
    stdout: 'pipe',
    stderr: 'pipe',
  })
  if (check && result.exitCode !== 0)
    throw new Error(`${program} failed (${result.exitCode}): ${result.stderr.toString()}${result.stdout.toString()}`)
}

/** A loopback port that was free a moment ago: it names the unix socket, and keeps clear of other clusters. */
function freePort(): number {
  const probe = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
  const { port } = probe
  probe.stop(true)
  return port
}

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
 * Starts a PostgreSQL of its own in `dir` (which must be empty or absent): `initdb`, then the server on a unix socket
 * in `dir` and no TCP at all, with every setting at its default, durability included, but for `settings` (`-c
 * NAME=VALUE` each: bench/sql-create-costs.ts loads `pg_stat_statements`, nothing that changes durability). Stop it
 * with `stop()`.
 */
export async function startBenchPostgres(dir: string, settings: Record<string, string> = {}): Promise<BenchPostgres> {
  const bin = postgresBinaries()
  if (!bin) throw new Error('PostgreSQL is not installed (apt-get install postgresql)')
  mkdirSync(dir, { recursive: true })
  if (process.getuid?.() === 0) {
    const owner = Number(spawnSync(['id', '-u', 'postgres']).stdout.toString().trim())
    chownSync(dir, owner, owner)
  }
  const data = join(dir, 'data')
  run(bin, 'initdb', ['-D', data, '-A', 'trust', '-U', ROLE, '-E', 'UTF8', '--locale=C.UTF-8'])
  const port = freePort()
  run(bin, 'pg_ctl', [
    '-D',
    data,
    '-l',
    join(dir, 'log'),
    '-o',
    [`-k ${dir} -p ${port} -c listen_addresses=`, ...Object.entries(settings).map(([k, v]) => `-c ${k}=${v}`)].join(
      ' ',
    ),
    '-w',
    'start',
  ])
  const url = (database: string) => `postgres://${ROLE}@/${database}?host=${dir}&port=${port}`
  const admin = new SQL({ url: url('postgres'), max: 1 })
  let postmaster: number
  try {
    postmaster = Number((await readFile(join(data, 'postmaster.pid'), 'utf8')).split('\n')[0])
    await admin`SELECT 1`
  } catch (error) {
    run(bin, 'pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop'], false)
    throw error
  }
  const query = <T>(text: string) => admin.unsafe(text) as Promise<T[]>
  return {
    version: bin.split('/').at(-2) ?? '',
    url,
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
        if (pid === postmaster && t) ticks += t.own + t.children
        else if (t?.ppid === postmaster) ticks += t.own
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
      run(bin, 'pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop'], false)
      await rm(dir, { recursive: true, force: true })
    },
  }
}
