/**
 * A real PgBouncer in front of the harness's PostgreSQL (test/support/postgres.ts), from Debian's `pgbouncer` package:
 * a configuration in a temporary directory, every database of the server behind it (`* = …`, through the server's
 * unix socket), on a free loopback port, in `session` or `transaction` pooling mode. It authenticates as the server
 * does (`trust`, the harness's role listed in its users file): what the tests look at is the pooling, not the
 * passwords. A watchdog stops it once the process that started it is gone, as the harness's servers do.
 *
 * Without PgBouncer on the machine, `pgbouncerAvailable()` says why; the tests skip then, except under `CI=true`,
 * where they fail (`.ci/run` installs the package).
 */
import { chownSync, existsSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { spawnSync } from 'bun'
import { freePort } from './binary.ts'
import type { TestPostgres } from './postgres.ts'

/** Debian's PgBouncer. */
const PROGRAM = '/usr/sbin/pgbouncer'

/** The pooling modes the tests run through: a server connection per client, or per transaction. */
export type PoolMode = 'session' | 'transaction'

/** Why the tests cannot have PgBouncer here, or undefined when they can. */
export function pgbouncerAvailable(): string | undefined {
  if (!existsSync(PROGRAM)) return 'PgBouncer is not installed (apt-get install pgbouncer)'
  if (process.getuid?.() === 0 && !Bun.which('runuser')) return 'running as root without runuser'
  return undefined
}

/** Under CI the pooler's tests must run: throws there when they cannot; elsewhere returns whether to skip. */
export function skipWithoutPgbouncer(): boolean {
  const why = pgbouncerAvailable()
  if (!why) return false
  if (process.env.CI === 'true') throw new Error(`the PgBouncer tests must run in CI, but ${why}`)
  console.warn(`skipping the PgBouncer tests: ${why}`)
  return true
}

/** A running PgBouncer. */
export interface TestPgbouncer {
  mode: PoolMode
  /** Its loopback TCP port. */
  port: number
  /** A URL of `database` through it. */
  url(database: string): string
  /** Stops it (the watchdog would, once its owner is gone). */
  stop(): void
}

/**
 * Starts PgBouncer in `mode` in front of `server`, for this process (a watchdog stops it once `owner` is gone).
 * `poolSize`: server connections per database and user; transaction mode shares them between all its clients.
 */
export async function startPgbouncer(
  server: Pick<TestPostgres, 'socketDir' | 'port'>,
  mode: PoolMode,
  options: { owner?: number; poolSize?: number } = {},
): Promise<TestPgbouncer> {
  const why = pgbouncerAvailable()
  if (why) throw new Error(why)
  const { owner = process.pid, poolSize = 20 } = options
  const dir = mkdtempSync(join(tmpdir(), 'rl-pgbouncer-'))
  const port = freePort()
  const config = join(dir, 'pgbouncer.ini')
  writeFileSync(join(dir, 'users.txt'), '"rl" ""\n')
  writeFileSync(
    config,
    `[databases]
* = host=${server.socketDir} port=${server.port}

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = ${port}
unix_socket_dir =
auth_type = trust
auth_file = ${join(dir, 'users.txt')}
pool_mode = ${mode}
max_client_conn = 2000
default_pool_size = ${poolSize}
max_db_connections = 0
logfile = ${join(dir, 'log')}
pidfile = ${join(dir, 'pid')}
log_connections = 0
log_disconnections = 0
`,
  )
  // PgBouncer refuses to run as root: it runs as the `postgres` user then, as the harness's PostgreSQL does.
  const asRoot = process.getuid?.() === 0
  if (asRoot) {
    const user = Number(spawnSync(['id', '-u', 'postgres']).stdout.toString().trim())
    chownSync(dir, user, user)
    for (const file of ['pgbouncer.ini', 'users.txt']) chownSync(join(dir, file), user, user)
  }
  const command = `${asRoot ? 'runuser -u postgres -- ' : ''}${PROGRAM} '${config}'`
  // The watchdog is PgBouncer's parent: it outlives the owner by at most a second, then stops it and removes its files.
  const watchdog = Bun.spawn(
    [
      'bash',
      '-c',
      `${command} & bouncer=$!
      while kill -0 ${owner} 2>/dev/null && kill -0 $bouncer 2>/dev/null; do sleep 1; done
      kill $bouncer 2>/dev/null; wait $bouncer; rm -rf '${dir}'`,
    ],
    { stdio: ['ignore', 'ignore', 'ignore'], detached: true },
  )
  watchdog.unref()
  // Ready once it accepts connections on its port.
  const deadline = Date.now() + 10_000
  for (;;) {
    const open = await Bun.connect({ hostname: '127.0.0.1', port, socket: { data() {} } }).then(
      (socket) => {
        socket.end()
        return true
      },
      () => false,
    )
    if (open) break
    if (Date.now() > deadline || watchdog.exitCode !== null) {
      const log = await Bun.file(join(dir, 'log'))
        .text()
        .catch(() => '')
      throw new Error(`PgBouncer did not start on port ${port}: ${log}`)
    }
    await Bun.sleep(50)
  }
  return {
    mode,
    port,
    url: (database) => `postgres://rl@127.0.0.1:${port}/${database}`,
    stop() {
      const pid = Number(
        spawnSync(['cat', join(dir, 'pid')])
          .stdout.toString()
          .trim(),
      )
      if (pid) spawnSync(['kill', String(pid)])
    },
  }
}
