/**
 * A real PostgreSQL for the tests, started from the system's own binaries (Debian's `postgresql` package): `initdb`
 * into a temporary directory, a server on a unix socket in that directory and on a free loopback port, and a
 * template database, so that each test gets a database of its own in milliseconds (`CREATE DATABASE … TEMPLATE`).
 *
 * `bun run test` (test/support/run.ts) starts one server for the whole run and tells every test process where it is
 * ({@link SHARED_POSTGRES}): {@link testPostgres} then gives that one, to every file of every worker. Run alone
 * (`bun test test/store/sql`), a process starts its own on first use and stops it when it exits. The few tests that
 * stop the server and start it again take {@link ownPostgres}, a server of their process alone, so that they never
 * take the database away from the tests of other workers.
 *
 * Without PostgreSQL on the machine, `postgresAvailable()` says why; the tests skip then, except under `CI=true`,
 * where they fail (`.ci/run` installs the package).
 */
import { afterAll, afterEach, beforeAll, onTestFinished } from 'bun:test'
import { chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { SQL, spawnSync } from 'bun'
import { freePort } from './binary.ts'

/** The role the tests connect as: the cluster's superuser, trusted on the socket and on loopback. */
const ROLE = 'rl'
/** The database every test database is copied from. */
const TEMPLATE = 'rl_template'
/**
 * The same with the service's schema in place (`openSqlStore` run on it once, when the server starts), which the
 * contract suite's stores are copied from: opening one then finds the schema up to date, as a replica opening a
 * database that another replica migrated does, instead of running every migration again for each test.
 */
const MIGRATED = 'rl_migrated'

/**
 * Brings a database of the service's schema back to the state of {@link MIGRATED}, whose only rows are the schema's
 * own records (`rl_schema`, `rl_migrations`) and the artists' tally, which `openSqlStore` puts back as it opens.
 */
const EMPTY_DATABASE = `DO $$
DECLARE
  name text;
BEGIN
  -- A test leaves a few rows: deleting them costs far less than TRUNCATE's new files. No foreign key checks meanwhile.
  SET LOCAL session_replication_role = replica;
  FOR name IN SELECT format('%I', tablename) FROM pg_tables
    WHERE schemaname = 'public' AND tablename NOT IN ('rl_schema', 'rl_migrations') LOOP
    EXECUTE 'DELETE FROM ' || name;
  END LOOP;
  FOR name IN SELECT format('%I', sequencename) FROM pg_sequences WHERE schemaname = 'public' LOOP
    PERFORM setval(name::regclass, 1, false);
  END LOOP;
END $$`

/** The directory of the newest installed PostgreSQL's programs, or undefined. */
export function binaries(): string | undefined {
  const root = '/usr/lib/postgresql'
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((name) => /^\d+$/.test(name))
        .sort((a, b) => Number(b) - Number(a))
    : []
  for (const version of versions)
    if (existsSync(join(root, version, 'bin', 'postgres'))) return join(root, version, 'bin')
  const initdb = Bun.which('initdb')
  return initdb ? join(initdb, '..') : undefined
}

/** Why the tests cannot have PostgreSQL here, or undefined when they can. */
export function postgresAvailable(): string | undefined {
  if (!binaries()) return 'PostgreSQL is not installed (apt-get install postgresql)'
  if (process.getuid?.() === 0 && !Bun.which('runuser')) return 'running as root without runuser'
  return undefined
}

/** Under CI the SQL tests must run: throws there when they cannot; elsewhere returns whether to skip. */
export function skipWithoutPostgres(): boolean {
  const why = postgresAvailable()
  if (!why) return false
  if (process.env.CI === 'true') throw new Error(`the SQL tests must run in CI, but ${why}`)
  console.warn(`skipping the SQL tests: ${why}`)
  return true
}

/**
 * The bookkeeping of a test file of the SQL store's own, called at its top level: the server, handed to `take` before
 * the file's tests (the run's shared one; with `own`, a server of this process, started again after any test that
 * stopped it); `opened`, the stores its tests open, closed after each test; `pools`, the connections it makes itself,
 * closed after its last test; `emptyDatabase()`, a database with the service's schema and no rows for the test running
 * (`reusedDatabase`: one an earlier test emptied, else a copy of a migrated template), emptied again once the test's
 * stores are closed, for the next (`recycle`): the same start as a new copy its replicas migrate, for far less of
 * PostgreSQL's work. A test that looks at the schema or needs a database nobody used takes `freshDatabase()`. `skip`:
 * whether there is no PostgreSQL here ({@link skipWithoutPostgres}).
 */
export function sqlTestFile(take: (server: TestPostgres) => void, options: { own?: boolean } = {}) {
  const skip = skipWithoutPostgres()
  let server: TestPostgres | undefined
  const opened: { close(): Promise<unknown> }[] = []
  const pools: SQL[] = []
  beforeAll(async () => {
    if (skip) return
    server = await (options.own ? ownPostgres() : testPostgres())
    take(server)
  })
  afterEach(async () => {
    if (options.own) server?.start()
    await Promise.all(opened.splice(0).map((store) => store.close().catch(() => {})))
  })
  afterAll(async () => {
    await Promise.all(pools.splice(0).map((sql) => sql.close()))
  })
  const emptyDatabase = async (): Promise<string> => {
    if (!server) throw new Error('emptyDatabase() is for the tests of a file that has PostgreSQL (see `skip`)')
    return server.emptyDatabase()
  }
  return { skip, opened, pools, emptyDatabase }
}

/** A running test server. */
export interface TestPostgres {
  /** Where its unix socket lives. */
  socketDir: string
  /** Its loopback TCP port. */
  port: number
  /** A URL of `database` over the unix socket. */
  url(database: string): string
  /** A URL of `database` over TCP on 127.0.0.1. */
  tcpUrl(database: string): string
  /** Whether it accepts TLS on TCP (with a self-signed certificate), which needs `openssl` on the machine. */
  tls: boolean
  /** A new, empty database (a copy of the template), and its name. */
  freshDatabase(): Promise<string>
  /** A new database with the service's schema and no data (a copy of {@link MIGRATED}), and its name. */
  migratedDatabase(): Promise<string>
  /**
   * A database as {@link migratedDatabase} makes it: one given back to {@link recycle} by an earlier test of this
   * process if there is one, else a new copy. For stores used through the `Store` contract only (the contract suite):
   * a test that looks at the schema itself takes a new database.
   */
  reusedDatabase(): Promise<string>
  /**
   * Empties `database` (every table but the schema's own records, every sequence back to its start) and keeps it for
   * the next {@link reusedDatabase}: a copy of a template costs the server about a fifth of a second of CPU, this about
   * 6 ms, over a connection kept open for that database's next emptying. Only once nothing else uses it: its store
   * closed.
   */
  recycle(database: string): Promise<void>
  /**
   * A {@link reusedDatabase} for the test running, given back to {@link recycle} once the test has finished: after its
   * `afterEach` hooks, which close the stores and stop the executables over it (`onTestFinished` runs last). Only
   * inside a test.
   */
  emptyDatabase(): Promise<string>
  /**
   * A pool to `database` as a store of the contract suite opens it ({@link STORE_POOL}), kept open for
   * every store opened `over` it, with its connection that LISTENs: Bun.SQL opens each connection of a pool at once
   * (and one more to LISTEN), and a connection costs the server a process of its own, which a store per test paid three
   * times. `url`: where to reach it, when not directly (through a pooler); its first call's is kept.
   */
  storePool(database: string, url?: string): Promise<SQL>
  /**
   * Stops the server: fast (`-m fast`) or as a crash (`immediate`). Only a server of {@link ownPostgres}: the run's
   * shared server refuses, since other workers' tests are using it.
   */
  stop(mode?: 'fast' | 'immediate'): void
  /** Starts it again on the same data, if it is not running. */
  start(): void
}

/**
 * The options of the pools {@link TestPostgres.storePool} keeps, for the stores opened `over` them: two connections,
 * waiting up to 5 s for the server.
 */
export const STORE_POOL = { pool: 2, waitMs: 5000 } as const

/**
 * The environment variable through which test/support/run.ts tells every test process of a run where its shared
 * server is: the JSON of a {@link ServerLocation}.
 */
export const SHARED_POSTGRES = 'ROCK_LEGENDS_TEST_POSTGRES'

/** Where a started server is: enough for another process to use it. */
interface ServerLocation {
  /** The directory of PostgreSQL's programs. */
  bin: string
  /** The temporary directory: the socket, the log, and `data/`. */
  dir: string
  port: number
  tls: boolean
}

/** Runs a PostgreSQL program as the `postgres` user when this process is root (initdb refuses root). */
export function run(bin: string, program: string, args: string[], check = true) {
  const command = [join(bin, program), ...args]
  const asRoot = process.getuid?.() === 0
  const result = spawnSync(asRoot ? ['runuser', '-u', 'postgres', '--', ...command] : command, {
    stdout: 'pipe',
    stderr: 'pipe',
  })
  if (check && result.exitCode !== 0)
    throw new Error(`${program} failed (${result.exitCode}): ${result.stderr.toString()}${result.stdout.toString()}`)
  return result
}

/** The server of the run, when test/support/run.ts started one, else undefined. */
function sharedLocation(): ServerLocation | undefined {
  const shared = process.env[SHARED_POSTGRES]
  return shared ? (JSON.parse(shared) as ServerLocation) : undefined
}

/** The server of this process alone, once asked for: callers that ask while it starts wait for the same one. */
let own: Promise<TestPostgres> | undefined
/** The run's shared server, as this process uses it. */
let shared: Promise<TestPostgres> | undefined

/**
 * The test server: the run's shared one under `bun run test`, else this process's own, started on first use. Its
 * `stop()` refuses when it is shared: tests that stop the server take {@link ownPostgres}.
 */
export function testPostgres(): Promise<TestPostgres> {
  const location = sharedLocation()
  if (!location) return ownPostgres()
  shared ??= use(location, false)
  return shared
}

/**
 * A server of this process alone, started on first use, which its tests may stop and start again. Run alone, a
 * process has one server only: then it is the one {@link testPostgres} gives too.
 */
export function ownPostgres(): Promise<TestPostgres> {
  own ??= launch(process.pid).then((location) => use(location, true))
  return own
}

/**
 * Starts a server for test/support/run.ts, to be shared by every test process of the run: resolves with the value of
 * {@link SHARED_POSTGRES} to give them, and a function that stops the server and removes its directory.
 */
export async function startSharedPostgres(): Promise<{ env: string; stop(): void }> {
  const location = await launch(process.pid)
  return {
    env: JSON.stringify(location),
    stop() {
      run(location.bin, 'pg_ctl', ['-D', join(location.dir, 'data'), '-m', 'immediate', '-w', 'stop'], false)
      // A database per test process makes a large directory (seconds to remove on a busy machine): its removal goes
      // on after the run has ended, in a process of its own.
      Bun.spawn(['rm', '-rf', location.dir], { stdio: ['ignore', 'ignore', 'ignore'] }).unref()
    },
  }
}

const serverOptions = ({ dir, port, tls }: ServerLocation) =>
  `-k ${dir} -p ${port} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=600${tls ? ' -c ssl=on' : ''}`

/** Makes `dir` the `postgres` user's when this process is root, since `run` runs PostgreSQL's programs as that user. */
function forPostgres(dir: string): string {
  if (process.getuid?.() === 0) {
    const user = run('/usr/bin', 'id', ['-u', 'postgres'], true).stdout.toString().trim()
    chownSync(dir, Number(user), Number(user))
  }
  return dir
}

/** A new temporary directory for PostgreSQL's files (see {@link forPostgres}). */
export function serverDirectory(prefix: string): string {
  return forPostgres(mkdtempSync(join(tmpdir(), prefix)))
}

/**
 * A cluster as `initdb` makes it, with a throw-away self-signed certificate for TLS on TCP (so that `sslmode=require`
 * can be tested for real; without `openssl` on the machine, none): made once per machine and PostgreSQL build, in
 * the temporary directory, and copied for every server the tests start: a copy costs 0.1–0.4 s of CPU, `initdb` and
 * an RSA key 0.9–1.4 s, for each of the run's servers (its shared one, and those of the files that stop theirs).
 */
export function pristineCluster(bin: string): string {
  // No fsync: what the tests check is the service's behaviour over SQL, not PostgreSQL's own durability.
  const options = ['-A', 'trust', '-U', ROLE, '--no-sync', '-E', 'UTF8', '--locale=C.UTF-8']
  const made = Bun.hash([bin, ...options].join(' ')).toString(36)
  const cached = join(tmpdir(), `rock-legends-pg-pristine-${process.getuid?.() ?? 0}-${made}`)
  if (existsSync(join(cached, 'PG_VERSION'))) return cached
  const building = serverDirectory('rl-pg-pristine-')
  const data = join(building, 'data')
  run(bin, 'initdb', ['-D', data, ...options])
  if (Bun.which('openssl')) {
    const key = join(data, 'server.key')
    const certificate = ['-days', '3650', '-subj', '/CN=localhost', '-keyout', key, '-out', join(data, 'server.crt')]
    const signed = run('/usr/bin', 'openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', ...certificate], false)
    if (signed.exitCode !== 0 || run('/usr/bin', 'chmod', ['600', key], false).exitCode !== 0)
      rmSync(join(data, 'server.crt'), { force: true })
  }
  // Whole or not at all: another process may be making the same one, and the first to finish keeps its own.
  try {
    renameSync(data, cached)
  } catch {}
  rmSync(building, { recursive: true, force: true })
  return cached
}

/** Starts a server on this machine and its template database; a watchdog stops it once `owner` is gone. */
async function launch(owner: number): Promise<ServerLocation> {
  const bin = binaries()
  if (!bin) throw new Error(postgresAvailable())
  const pristine = pristineCluster(bin)
  const dir = serverDirectory('rl-pg-')
  const data = join(dir, 'data')
  run('/usr/bin', 'cp', ['-a', pristine, data])
  const port = freePort()
  const tls = existsSync(join(data, 'server.crt'))
  const location: ServerLocation = { bin, dir, port, tls }
  run(bin, 'pg_ctl', ['-D', data, '-l', join(dir, 'log'), '-o', serverOptions(location), '-w', 'start'])
  // `bun test` runs no 'exit' handlers, and a run that is killed runs none either: a watchdog outlives the owner by
  // at most a second, then stops the server and removes its directory, however the owner ended.
  const asPostgres = process.getuid?.() === 0 ? 'runuser -u postgres -- ' : ''
  Bun.spawn(
    [
      'bash',
      '-c',
      `while kill -0 ${owner} 2>/dev/null; do sleep 1; done
      ${asPostgres}'${join(bin, 'pg_ctl')}' -D '${data}' -m immediate -w stop >/dev/null 2>&1
      rm -rf '${dir}'`,
    ],
    { stdio: ['ignore', 'ignore', 'ignore'], detached: true },
  ).unref()
  const admin = new SQL({ url: socketUrl(location, 'postgres'), max: 1 })
  await admin.unsafe(`CREATE DATABASE ${TEMPLATE}`)
  await admin.unsafe(`CREATE DATABASE ${MIGRATED} TEMPLATE ${TEMPLATE}`)
  await admin.close()
  const { openSqlStore } = await import('../../src/store/sql/sql-store.ts')
  await (await openSqlStore(socketUrl(location, MIGRATED), { pool: 1 })).close()
  return location
}

const socketUrl = ({ dir, port }: ServerLocation, database: string) =>
  `postgres://${ROLE}@/${database}?host=${dir}&port=${port}`

/** A server at `location`, as this process uses it; `owned` says whether this process may stop and start it. */
async function use(location: ServerLocation, owned: boolean): Promise<TestPostgres> {
  const { bin, dir, port, tls } = location
  const data = join(dir, 'data')
  const url = (database: string) => socketUrl(location, database)
  const admin = new SQL({ url: url('postgres'), max: 1 })
  const refuse = () => {
    throw new Error("the run's shared PostgreSQL serves other workers' tests: a test that stops it takes ownPostgres()")
  }
  let count = 0
  const reusable: string[] = []
  // A connection per reused database, kept open for its next emptying: opening one each time started a backend.
  const emptiers = new Map<string, SQL>()
  const storePools = new Map<string, Promise<SQL>>()
  const copy = async (template: string) => {
    count += 1
    // The pid tells apart the databases of the processes that share a server.
    const name = `rl_test_${process.pid}_${count}`
    await admin.unsafe(`CREATE DATABASE ${name} TEMPLATE ${template}`)
    return name
  }
  const reusedDatabase = async () => reusable.pop() ?? copy(MIGRATED)
  const server: TestPostgres = {
    socketDir: dir,
    port,
    url,
    tcpUrl: (database) => `postgres://${ROLE}@127.0.0.1:${port}/${database}`,
    tls,
    freshDatabase: () => copy(TEMPLATE),
    migratedDatabase: () => copy(MIGRATED),
    reusedDatabase,
    async emptyDatabase() {
      const database = await reusedDatabase()
      onTestFinished(() => server.recycle(database))
      return database
    },
    async recycle(database) {
      let sql = emptiers.get(database)
      if (!sql) {
        sql = new SQL({ url: url(database), max: 1 })
        emptiers.set(database, sql)
      }
      await sql.unsafe(EMPTY_DATABASE)
      reusable.push(database)
    },
    storePool(database, through = url(database)) {
      let pool = storePools.get(database)
      if (!pool) {
        pool = import('../../src/store/sql/sql-store.ts').then(async ({ connectStorePool }) => {
          const sql = await connectStorePool(through, STORE_POOL)
          // Bun.SQL LISTENs on a connection of its own, closed with the pool's last subscription: one kept here keeps
          // it open for the stores' own, which would otherwise start a server process per test. Not through a pooler
          // in transaction mode (`prepare=false`), where the stores do not LISTEN.
          if (!through.includes('prepare=false')) await sql.listen('rl_test_kept', () => {})
          return sql
        })
        storePools.set(database, pool)
      }
      return pool
    },
    stop(mode = 'fast') {
      if (!owned) refuse()
      run(bin, 'pg_ctl', ['-D', data, '-m', mode, '-w', 'stop'], false)
    },
    start() {
      if (!owned) refuse()
      // Once running, starting again is nothing to do: `pg_ctl status` exits 0 while the server runs.
      if (run(bin, 'pg_ctl', ['-D', data, 'status'], false).exitCode === 0) return
      run(bin, 'pg_ctl', ['-D', data, '-l', join(dir, 'log'), '-o', serverOptions(location), '-w', 'start'])
    },
  }
  return server
}

/** A server of {@link startDurablePostgres}. */
export interface DurablePostgres {
  /** The major version of its programs, e.g. `15`. */
  version: string
  /** The postmaster's process id. */
  pid: number
  /** A URL of `database` over the unix socket. */
  url(database: string): string
  /** Stops the server (`-m fast`) and removes its directory. */
  stop(): void
}

/**
 * A PostgreSQL for the benchmarks (bench/sql.ts and the others over SQL), which measure the SQL store over a server as
 * installed: `initdb` into `dir` (empty or absent; the benchmarks put it on the disk of the JSON store they compare
 * with), then the server on a unix socket in `dir` and no TCP, every setting at its default, durability included
 * (`fsync` and `synchronous_commit` on, unlike the tests' servers), but for `settings` (`-c NAME=VALUE` each). No
 * template databases, no watchdog: the caller stops it.
 */
export async function startDurablePostgres(
  dir: string,
  settings: Record<string, string> = {},
): Promise<DurablePostgres> {
  const bin = binaries()
  if (!bin) throw new Error(postgresAvailable())
  mkdirSync(dir, { recursive: true })
  forPostgres(dir)
  const data = join(dir, 'data')
  run(bin, 'initdb', ['-D', data, '-A', 'trust', '-U', ROLE, '-E', 'UTF8', '--locale=C.UTF-8'])
  const port = freePort()
  const options = [
    `-k ${dir} -p ${port} -c listen_addresses=`,
    ...Object.entries(settings).map(([k, v]) => `-c ${k}=${v}`),
  ]
  run(bin, 'pg_ctl', ['-D', data, '-l', join(dir, 'log'), '-o', options.join(' '), '-w', 'start'])
  const stop = () => {
    run(bin, 'pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop'], false)
    rmSync(dir, { recursive: true, force: true })
  }
  const pidFile = await Bun.file(join(data, 'postmaster.pid'))
    .text()
    .catch(() => '')
  const pid = Number(pidFile.split('\n')[0])
  if (!pid) {
    stop()
    throw new Error(`PostgreSQL started in ${dir} but wrote no postmaster.pid`)
  }
  return {
    version: bin.split('/').at(-2) ?? '',
    pid,
    url: (database) => socketUrl({ bin, dir, port, tls: false }, database),
    stop,
  }
}
