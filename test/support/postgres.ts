/**
 * A real PostgreSQL for the tests, started from the system's own binaries (Debian's `postgresql` package): `initdb`
 * into a temporary directory, a server on a unix socket in that directory and on a free loopback port, and a
 * template database, so that each test gets a database of its own in milliseconds (`CREATE DATABASE … TEMPLATE`).
 * One server per `bun test` process, started on first use and stopped when the process exits.
 *
 * Without PostgreSQL on the machine, `postgresAvailable()` says why; the tests skip then, except under `CI=true`,
 * where they fail (`.ci/run` installs the package).
 */
import { chownSync, existsSync, mkdtempSync, readdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { SQL, spawnSync } from 'bun'

/** The role the tests connect as: the cluster's superuser, trusted on the socket and on loopback. */
const ROLE = 'rl'
/** The database every test database is copied from. */
const TEMPLATE = 'rl_template'

/** The directory of the newest installed PostgreSQL's programs, or undefined. */
function binaries(): string | undefined {
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
  /** Stops the server: fast (`-m fast`) or as a crash (`immediate`). */
  stop(mode?: 'fast' | 'immediate'): void
  /** Starts it again on the same data, if it is not running. */
  start(): void
}

/** The test server of this process, once asked for: callers that ask while it starts wait for the same one. */
let running: Promise<TestPostgres> | undefined

/** Runs a PostgreSQL program as the `postgres` user when this process is root (initdb refuses root). */
function run(bin: string, program: string, args: string[], check = true) {
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

/** A free loopback TCP port, as the kernel hands it out. */
function freePort(): number {
  const server = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
  const { port } = server
  server.stop(true)
  return port
}

/** The test server of this process, started on first use. */
export function testPostgres(): Promise<TestPostgres> {
  running ??= startTestPostgres()
  return running
}

async function startTestPostgres(): Promise<TestPostgres> {
  const bin = binaries()
  if (!bin) throw new Error(postgresAvailable())
  const dir = mkdtempSync(join(tmpdir(), 'rl-pg-'))
  if (process.getuid?.() === 0) {
    const owner = run('/usr/bin', 'id', ['-u', 'postgres'], true).stdout.toString().trim()
    chownSync(dir, Number(owner), Number(owner))
  }
  const data = join(dir, 'data')
  // No fsync: what the tests check is the service's behaviour over SQL, not PostgreSQL's own durability.
  run(bin, 'initdb', ['-D', data, '-A', 'trust', '-U', ROLE, '--no-sync', '-E', 'UTF8', '--locale=C.UTF-8'])
  const port = freePort()
  // TLS on TCP, with a throw-away self-signed certificate, so that `sslmode=require` can be tested for real.
  const tls = Bun.which('openssl')
    ? run(
        '/usr/bin',
        'openssl',
        [
          'req',
          '-x509',
          '-newkey',
          'rsa:2048',
          '-nodes',
          '-days',
          '1',
          '-subj',
          '/CN=localhost',
          '-keyout',
          join(data, 'server.key'),
          '-out',
          join(data, 'server.crt'),
        ],
        false,
      ).exitCode === 0 && run('/usr/bin', 'chmod', ['600', join(data, 'server.key')], false).exitCode === 0
    : false
  const options = `-k ${dir} -p ${port} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=300${tls ? ' -c ssl=on' : ''}`
  const start = () => {
    // Once running, starting again is nothing to do: `pg_ctl status` exits 0 while the server runs.
    if (run(bin, 'pg_ctl', ['-D', data, 'status'], false).exitCode === 0) return
    run(bin, 'pg_ctl', ['-D', data, '-l', join(dir, 'log'), '-o', options, '-w', 'start'])
  }
  start()
  const url = (database: string) => `postgres://${ROLE}@/${database}?host=${dir}&port=${port}`
  const admin = new SQL({ url: url('postgres'), max: 1 })
  await admin.unsafe(`CREATE DATABASE ${TEMPLATE}`)
  let count = 0
  const server: TestPostgres = {
    socketDir: dir,
    port,
    url,
    tcpUrl: (database) => `postgres://${ROLE}@127.0.0.1:${port}/${database}`,
    tls,
    async freshDatabase() {
      count += 1
      const name = `rl_test_${process.pid}_${count}`
      await admin.unsafe(`CREATE DATABASE ${name} TEMPLATE ${TEMPLATE}`)
      return name
    },
    stop(mode = 'fast') {
      run(bin, 'pg_ctl', ['-D', data, '-m', mode, '-w', 'stop'], false)
    },
    start,
  }
  // `bun test` runs no 'exit' handlers, and a run that is killed runs none either: a watchdog outlives this process
  // by at most a second, then stops the server and removes its directory, however the process ended.
  const asPostgres = process.getuid?.() === 0 ? 'runuser -u postgres -- ' : ''
  Bun.spawn(
    [
      'bash',
      '-c',
      `while kill -0 ${process.pid} 2>/dev/null; do sleep 1; done
      ${asPostgres}'${join(bin, 'pg_ctl')}' -D '${data}' -m immediate -w stop >/dev/null 2>&1
      rm -rf '${dir}'`,
    ],
    { stdio: ['ignore', 'ignore', 'ignore'], detached: true },
  ).unref()
  return server
}
