/**
 * PostgreSQL streaming replication behind a stable address, for the tests and the bench of a failover: the steps a
 * Patroni cluster takes, done by hand with Debian's PostgreSQL (the binaries test/support/postgres.ts finds, run as
 * the `postgres` user when this process is root).
 *
 * - **node0**, the primary: a copy of the harness's pristine cluster, `synchronous_standby_names = 'standby1'` and
 *   `synchronous_commit = remote_apply`, so that a commit is acknowledged only once the standby has applied it.
 * - **node1**, the standby: `pg_basebackup -R` from the primary, connecting as `application_name=standby1`.
 * - **A check server per node**, as Patroni's REST API answers `GET /primary`: 200 when the node answers
 *   `pg_is_in_recovery()` with false, 503 otherwise (down, starting, or a standby). A `Bun.serve` in this process.
 * - **HAProxy** in TCP mode in front of both, sending every connection to the node whose check says primary (every
 *   200 ms, one failure or success to change its mind), and ending the sessions to a node marked down
 *   (`on-marked-down shutdown-sessions`): the address the replicas are given.
 *
 * Every node and HAProxy live in throw-away directories on free ports; a watchdog stops them once the process that
 * started them is gone. `fsync` is off, as on the harness's other servers: the primary's crash here is its processes
 * killed, not the machine's, so what was written is in the kernel's cache either way.
 */
import { existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { SQL } from 'bun'
import { freePort } from './binary.ts'
import { binaries, postgresAvailable, pristineCluster, run, serverDirectory } from './postgres.ts'
import { PROGRAMS } from './proxies.ts'

/** The role the nodes are reached as: the pristine cluster's superuser, trusted on loopback and on the socket. */
const ROLE = 'rl'
/** The standby's name in `synchronous_standby_names` and its `application_name`. */
const STANDBY = 'standby1'
/** How often HAProxy asks each node's check server. */
export const CHECK_EVERY_MS = 200

/** Why the failover harness cannot run here, or undefined when it can. */
export function replicationAvailable(): string | undefined {
  const why = postgresAvailable()
  if (why) return why
  if (!existsSync(PROGRAMS.haproxy)) return 'HAProxy is not installed (apt-get install haproxy)'
  return undefined
}

/** Under CI the failover tests must run: throws there when they cannot; elsewhere returns whether to skip. */
export function skipWithoutReplication(): boolean {
  const why = replicationAvailable()
  if (!why) return false
  if (process.env.CI === 'true') throw new Error(`the failover tests must run in CI, but ${why}`)
  console.warn(`skipping the failover tests: ${why}`)
  return true
}

/** One PostgreSQL server of the pair. */
interface Node {
  name: string
  /** Its directory: the unix socket, `log`, and `data/`. */
  dir: string
  port: number
  /** The port of its check server. */
  checkPort: number
}

/** A primary, its synchronous standby, and HAProxy in front. */
export interface ReplicatedPostgres {
  /** HAProxy's loopback port: the stable address. */
  port: number
  /** A URL of `database` through HAProxy, as the replicas are given it. */
  url(database: string): string
  /** A URL of `database` on `node` directly, over its unix socket. */
  nodeUrl(node: 0 | 1, database: string): string
  /** Creates `database` on the primary (the standby replays it): resolves once the standby has it. */
  createDatabase(database: string): Promise<void>
  /** Kills the primary as a crash does: `pg_ctl stop -m immediate`. */
  killPrimary(): void
  /** Promotes the standby (`pg_ctl promote -w`): resolves once it takes writes. */
  promoteStandby(): void
  /** Stops both nodes, HAProxy and the check servers, and removes their directories. */
  stop(): void
}

const serverOptions = (node: Node, extra: string[]) =>
  [
    `-k ${node.dir} -p ${node.port} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200`,
    ...extra.map((setting) => `-c ${setting}`),
  ].join(' ')

const socketUrl = (node: Node, database: string) => `postgres://${ROLE}@/${database}?host=${node.dir}&port=${node.port}`

/** Stops the server in `node` once `owner` is gone (`bun test` runs no exit handlers), and removes its directory. */
function watch(bin: string, node: Node, owner: number) {
  const asPostgres = process.getuid?.() === 0 ? 'runuser -u postgres -- ' : ''
  Bun.spawn(
    [
      'bash',
      '-c',
      `while kill -0 ${owner} 2>/dev/null; do sleep 1; done
      ${asPostgres}'${join(bin, 'pg_ctl')}' -D '${join(node.dir, 'data')}' -m immediate -w stop >/dev/null 2>&1
      rm -rf '${node.dir}'`,
    ],
    { stdio: ['ignore', 'ignore', 'ignore'], detached: true },
  ).unref()
}

/**
 * A check server for `node`, as Patroni's `GET /primary`: 200 when the node answers and is not in recovery, else 503.
 * One connection, asked with a deadline of a second: a node that died answers nothing.
 */
function checkServer(node: Node) {
  let sql: SQL | undefined
  const isPrimary = async () => {
    sql ??= new SQL({ url: socketUrl(node, 'postgres'), max: 1, connectionTimeout: 1, idleTimeout: 0 })
    const asked = sql`SELECT NOT pg_is_in_recovery() AS primary`.then(
      (rows) => rows[0]?.primary === true,
      () => false,
    )
    const late = Bun.sleep(1000).then(() => false)
    const primary = await Promise.race([asked, late])
    if (!primary) {
      // A connection that failed is not asked again: the next check makes a new one.
      sql.close().catch(() => {})
      sql = undefined
    }
    return primary
  }
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: node.checkPort,
    async fetch(request) {
      if (new URL(request.url).pathname !== '/primary') return new Response('not found\n', { status: 404 })
      return (await isPrimary())
        ? new Response('primary\n', { status: 200 })
        : new Response('not primary\n', { status: 503 })
    },
  })
  return {
    stop() {
      server.stop(true)
      sql?.close().catch(() => {})
    },
  }
}

/** Resolves once `condition` does, asked every 50 ms; throws with `what` after `ms`. */
async function until(condition: () => Promise<boolean>, what: string, ms = 30_000) {
  const deadline = Date.now() + ms
  while (!(await condition().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`${what} did not happen within ${ms} ms`)
    await Bun.sleep(50)
  }
}

/**
 * Starts a primary, its synchronous standby and HAProxy in front, for this process (watchdogs stop them once `owner`
 * is gone): resolves once the standby streams synchronously and HAProxy reaches the primary.
 */
export async function startReplicatedPostgres(options: { owner?: number } = {}): Promise<ReplicatedPostgres> {
  const bin = binaries()
  const why = replicationAvailable()
  if (!bin || why) throw new Error(why ?? 'PostgreSQL is not installed')
  const owner = options.owner ?? process.pid
  const nodes: [Node, Node] = [0, 1].map((i) => ({
    name: `node${i}`,
    dir: serverDirectory(`rl-pg-node${i}-`),
    port: freePort(),
    checkPort: freePort(),
  })) as [Node, Node]
  const [primary, standby] = nodes
  const pgCtl = (node: Node, args: string[], check = true) =>
    run(bin, 'pg_ctl', ['-D', join(node.dir, 'data'), ...args], check)
  const start = (node: Node, settings: string[]) =>
    pgCtl(node, ['-l', join(node.dir, 'log'), '-o', serverOptions(node, settings), '-w', 'start'])

  // The primary: its commits wait until the standby has applied them.
  run('/usr/bin', 'cp', ['-a', pristineCluster(bin), join(primary.dir, 'data')])
  watch(bin, primary, owner)
  start(primary, [
    'wal_level=replica',
    'max_wal_senders=4',
    `synchronous_standby_names=${STANDBY}`,
    'synchronous_commit=remote_apply',
  ])

  // The standby: a base backup that streams from the primary as `standby1`.
  watch(bin, standby, owner)
  run(bin, 'pg_basebackup', [
    '-d',
    `host=${primary.dir} port=${primary.port} user=${ROLE} application_name=${STANDBY}`,
    '-D',
    join(standby.dir, 'data'),
    '-R',
    '-X',
    'stream',
    '-c',
    'fast',
    '--no-sync',
  ])
  start(standby, ['hot_standby=on'])
  const admin = new SQL({ url: socketUrl(primary, 'postgres'), max: 1 })
  await until(async () => {
    const rows = await admin`SELECT sync_state FROM pg_stat_replication WHERE application_name = ${STANDBY}`
    return rows[0]?.sync_state === 'sync'
  }, 'the standby streaming synchronously')

  const checks = nodes.map(checkServer)
  const port = freePort()
  const haproxyDir = serverDirectory('rl-haproxy-failover-')
  const config = join(haproxyDir, 'haproxy.cfg')
  writeFileSync(
    config,
    `global
  maxconn 2000

defaults
  mode tcp
  timeout connect 1s
  retries 2
  timeout client 1h
  timeout server 1h
  timeout check 1s

frontend postgres
  bind 127.0.0.1:${port}
  default_backend primary

backend primary
  option httpchk
  http-check send meth GET uri /primary ver HTTP/1.1 hdr Host localhost
  http-check expect status 200
  default-server inter ${CHECK_EVERY_MS}ms fall 1 rise 1 on-marked-down shutdown-sessions
${nodes.map((node) => `  server ${node.name} 127.0.0.1:${node.port} check port ${node.checkPort}`).join('\n')}
`,
  )
  const haproxy = Bun.spawn([PROGRAMS.haproxy, '-db', '-f', config], { stdio: ['ignore', 'ignore', 'ignore'] })
  haproxy.unref()
  // A watchdog stops it at most a second after the owner is gone, however the owner ended.
  Bun.spawn(
    [
      'bash',
      '-c',
      `while kill -0 ${owner} 2>/dev/null && kill -0 ${haproxy.pid} 2>/dev/null; do sleep 1; done
      kill ${haproxy.pid} 2>/dev/null; rm -rf '${haproxyDir}'`,
    ],
    { stdio: ['ignore', 'ignore', 'ignore'], detached: true },
  ).unref()
  const through = new SQL({ url: `postgres://${ROLE}@127.0.0.1:${port}/postgres`, max: 1, connectionTimeout: 1 })
  await until(async () => (await through`SELECT NOT pg_is_in_recovery() AS primary`)[0]?.primary === true, 'HAProxy')
  await through.close()

  let stopped = false
  return {
    port,
    url: (database) => `postgres://${ROLE}@127.0.0.1:${port}/${database}`,
    nodeUrl: (node, database) => socketUrl(nodes[node], database),
    async createDatabase(database) {
      await admin.unsafe(`CREATE DATABASE ${database}`)
      const replayed = new SQL({ url: socketUrl(standby, database), max: 1 })
      await until(async () => (await replayed`SELECT 1 AS one`)[0]?.one === 1, `${database} on the standby`)
      await replayed.close()
    },
    killPrimary() {
      admin.close().catch(() => {})
      pgCtl(primary, ['-m', 'immediate', '-w', 'stop'])
    },
    promoteStandby() {
      pgCtl(standby, ['-w', 'promote'])
    },
    stop() {
      if (stopped) return
      stopped = true
      admin.close().catch(() => {})
      for (const check of checks) check.stop()
      haproxy.kill('SIGTERM')
      for (const node of nodes) pgCtl(node, ['-m', 'immediate', '-w', 'stop'], false)
      run('/usr/bin', 'rm', ['-rf', ...nodes.map((node) => node.dir), haproxyDir], false)
    },
  }
}

/** One answer to a create during {@link failoverUnderLoad}: status 0 when no HTTP answer came at all. */
export interface CreateAnswer {
  replica: number
  status: number
  /** When it came, in ms of `performance.now()`. */
  at: number
  /** How long it took. */
  ms: number
  id?: number
  name: string
  retryAfter: string | null
}

/** What one failover under load did. */
export interface FailoverRun {
  /** Creates answered 201: acknowledged, so they must be kept. */
  acknowledged: number
  /** Of those, the ids no replica could read after the failover: must be none. */
  lost: number[]
  /** Answers that were neither 201 nor 503 with `Retry-After`: must be none. */
  unexpected: CreateAnswer[]
  /** 503s answered between the kill and the first write served after the promotion. */
  refused: number
  /** The longest a 503 took to come. */
  slowestRefusalMs: number
  /** From the kill of the primary to its standby's promotion (the wait the test chose, plus `pg_ctl promote -w`). */
  downMs: number
  /** How long `pg_ctl promote -w` took: until the standby took writes. */
  promoteMs: number
  /** From the promotion (`pg_ctl promote -w` returned) to the first 201, on any replica. */
  firstWriteMs: number
  /** From the promotion to the first 201 of the replica that served one last. */
  everyReplicaMs: number
}

/**
 * Two or more replicas (`origins`) over `cluster` under a load of creates from `clients` clients, each recording every
 * answer: after `beforeMs` of load the primary is killed, `downMs` later the standby is promoted, and once every
 * replica has served a write again (within `withinMs`), the load stops and every acknowledged artist is read back from
 * every replica.
 */
export async function failoverUnderLoad(options: {
  cluster: ReplicatedPostgres
  origins: string[]
  apiKey: string
  clients?: number
  beforeMs?: number
  downMs?: number
  withinMs?: number
}): Promise<FailoverRun> {
  const { cluster, origins, apiKey, clients = 4, beforeMs = 1500, downMs = 4000, withinMs = 30_000 } = options
  const answers: CreateAnswer[] = []
  let running = true
  const create = async (replica: number, name: string): Promise<CreateAnswer> => {
    const sent = performance.now()
    try {
      const response = await fetch(`${origins[replica]}/api/v1/artists`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json', 'x-api-key': apiKey },
        body: JSON.stringify({ name }),
        signal: AbortSignal.timeout(20_000),
      })
      const body = (await response.json().catch(() => ({}))) as { id?: number }
      const at = performance.now()
      const answer = { replica, status: response.status, at, ms: at - sent, id: body.id, name }
      return { ...answer, retryAfter: response.headers.get('retry-after') }
    } catch {
      const at = performance.now()
      return { replica, status: 0, at, ms: at - sent, name, retryAfter: null }
    }
  }
  const load = Array.from({ length: clients }, async (_, client) => {
    for (let n = 0; running; n++) {
      const answer = await create((client + n) % origins.length, `Failover ${client}-${n}`)
      answers.push(answer)
      // A refused client waits a little, as a client honouring Retry-After would, but not the whole of it.
      if (answer.status !== 201) await Bun.sleep(50)
    }
  })
  const servedSince = (since: number, replica?: number) =>
    answers.find(
      (answer) => answer.status === 201 && answer.at > since && (replica ?? answer.replica) === answer.replica,
    )
  try {
    const started = performance.now()
    await until(async () => performance.now() - started > beforeMs && servedSince(started) !== undefined, 'the load')
    const killedAt = performance.now()
    cluster.killPrimary()
    await Bun.sleep(downMs)
    const promoting = performance.now()
    cluster.promoteStandby()
    const promotedAt = performance.now()
    await until(
      async () => origins.every((_, replica) => servedSince(promotedAt, replica)),
      'a write served by every replica after the promotion',
      withinMs,
    )
    running = false
    await Promise.all(load)
    const firsts = origins.map((_, replica) => (servedSince(promotedAt, replica) as CreateAnswer).at - promotedAt)
    const acknowledged = answers.filter((answer) => answer.status === 201)
    const lost: number[] = []
    for (const { id, name } of acknowledged)
      for (const origin of origins) {
        const read = await fetch(`${origin}/api/v1/artists/${id}`, { headers: { accept: 'application/json' } })
        const body = (await read.json().catch(() => ({}))) as { name?: string }
        if (read.status !== 200 || body.name !== name) lost.push(id ?? 0)
      }
    const firstWrite = Math.min(...firsts)
    const refusals = answers.filter(
      (answer) => answer.status === 503 && answer.at > killedAt && answer.at < promotedAt + firstWrite,
    )
    return {
      acknowledged: acknowledged.length,
      lost: [...new Set(lost)],
      unexpected: answers.filter(
        (answer) => answer.status !== 201 && !(answer.status === 503 && Number(answer.retryAfter) > 0),
      ),
      refused: refusals.length,
      slowestRefusalMs: Math.max(0, ...refusals.map((answer) => answer.ms)),
      downMs: promotedAt - killedAt,
      promoteMs: promotedAt - promoting,
      firstWriteMs: firstWrite,
      everyReplicaMs: Math.max(...firsts),
    }
  } finally {
    running = false
    await Promise.all(load)
  }
}
