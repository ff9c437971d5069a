import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { SQL } from 'bun'
import {
  connectSql,
  DatabaseUnavailableError,
  describeTarget,
  preparesStatements,
  redactUrl,
} from '../../../src/store/sql/connect.ts'
import { isDatabaseUrl } from '../../../src/store/target.ts'
import { ownPostgres, skipWithoutPostgres, type TestPostgres } from '../../support/postgres.ts'

describe('named prepared statements, by the URL', () => {
  test.each([
    ['postgres://app@db/catalogue', undefined, true],
    ['postgres://app@pooler:6543/catalogue?prepare=false', undefined, false],
    ['postgres://app@/catalogue?host=/run/postgresql&prepare=0', undefined, false],
    // A direct URL says the other one is a pooler's: off, unless the pooled URL asks for them.
    ['postgres://app@pooler:6543/catalogue', 'postgres://app@db/catalogue', false],
    ['postgres://app@pooler:6543/catalogue?prepare=true', 'postgres://app@db/catalogue', true],
  ])('%s (direct %s): %p', (url, direct, prepared) => {
    expect(preparesStatements(url, direct)).toBe(prepared)
  })
})

describe('database URLs in messages', () => {
  test.each([
    ['postgres://rl:s3cret@db.example:5433/catalogue', 'postgres://rl:***@db.example:5433/catalogue'],
    [
      'postgresql://rl:p%40ss@10.0.0.5/catalogue?sslmode=require',
      'postgresql://rl:***@10.0.0.5/catalogue?sslmode=require',
    ],
    ['postgres://rl@/catalogue?host=/run/postgresql', 'postgres://rl@/catalogue?host=/run/postgresql'],
    ['postgres://rl:s3cret@[::1', 'postgres://***@[::1'],
    ['postgres://rl:s3cret@with@at@db.example/catalogue', 'postgres://rl:***@db.example/catalogue'],
    ['postgres://rl:s3cret/with/slash@db.example/catalogue', 'postgres://rl:***@db.example/catalogue'],
    ['postgres://rl:s3cret:colon@/catalogue?host=/run/postgresql', 'postgres://rl:***@/catalogue?host=/run/postgresql'],
  ])('%s shows as %s', (url, shown) => {
    expect(redactUrl(url)).toBe(shown)
    expect(redactUrl(url)).not.toContain('s3cret')
  })

  test.each([
    ['postgres://rl:s3cret@db.example:5433/catalogue', 'db.example:5433, database catalogue'],
    ['postgres://rl@db.example/catalogue', 'db.example:5432, database catalogue'],
    ['postgres://rl@/catalogue?host=/run/postgresql', 'unix socket /run/postgresql (port 5432), database catalogue'],
    ['postgres://rl:s3cret@with@at@db.example:6000/catalogue', 'db.example:6000, database catalogue'],
  ])('%s points at %s', (url, target) => {
    expect(describeTarget(url)).toBe(target)
  })

  test.each([
    ['postgres://h/db', true],
    ['postgresql://h/db', true],
    ['POSTGRES://h/db', true],
    ['./data/db.json', false],
    [':memory:', false],
    ['postgres.json', false],
  ])('%s is a database URL: %p', (data, expected) => {
    expect(isDatabaseUrl(data)).toBe(expected)
  })
})

const skip = skipWithoutPostgres()
let pg: TestPostgres
const open: SQL[] = []
beforeAll(async () => {
  if (!skip) pg = await ownPostgres()
})
afterAll(async () => {
  await Promise.all(open.map((sql) => sql.close()))
})

/** A loopback port nothing listens on. */
function closedPort(): number {
  const server = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
  const { port } = server
  server.stop(true)
  return port
}

describe.skipIf(skip)('connectSql, over a real PostgreSQL', () => {
  test('connects over the unix socket and over TCP', async () => {
    const database = await pg.freshDatabase()
    for (const url of [pg.url(database), pg.tcpUrl(database)]) {
      const sql = await connectSql(url, { pool: 2, waitMs: 2000 })
      open.push(sql)
      const [row] = await sql`SELECT current_database() AS name`
      expect(row.name).toBe(database)
    }
  })

  test('TLS with sslmode=require: the connection is encrypted', async () => {
    // The harness turns TLS on whenever openssl is there, which Debian's postgresql package depends on.
    expect(pg.tls).toBe(true)
    const database = await pg.freshDatabase()
    const sql = await connectSql(`${pg.tcpUrl(database)}?sslmode=require`, { pool: 1, waitMs: 2000 })
    open.push(sql)
    const [row] = await sql`SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()`
    expect(row.ssl).toBe(true)
    const plain = await connectSql(`${pg.tcpUrl(database)}?sslmode=disable`, { pool: 1, waitMs: 2000 })
    open.push(plain)
    const [off] = await plain`SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()`
    expect(off.ssl).toBe(false)
  })

  test('an unreachable database: tries until the wait is over, then one line naming host, port and cause', async () => {
    const port = closedPort()
    const error = await connectSql(`postgres://rl:s3cret@127.0.0.1:${port}/catalogue`, {
      waitMs: 600,
      retryMs: 100,
    }).catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(DatabaseUnavailableError)
    const message = (error as Error).message
    expect(message).toStartWith(`cannot use the database at 127.0.0.1:${port}, database catalogue: `)
    expect(message).toContain('refused')
    expect(message).toMatch(/\((?:[2-9]|\d{2,}) attempts over/)
    expect(message).not.toContain('s3cret')
    expect(message).not.toContain('\n')
  })

  test('a database that answers with an error is not retried: no such database', async () => {
    const error = await connectSql(pg.url('no_such_database'), { waitMs: 5000 }).catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(DatabaseUnavailableError)
    expect((error as Error).message).toContain('(SQLSTATE 3D000) (1 attempt over')
  })

  test('a database that comes up during the wait is used', async () => {
    const database = await pg.freshDatabase()
    pg.stop('fast')
    try {
      const connecting = connectSql(pg.url(database), { waitMs: 15_000, retryMs: 100 })
      await Bun.sleep(500)
      pg.start()
      const sql = await connecting
      open.push(sql)
      const [row] = await sql`SELECT 1 AS one`
      expect(row.one).toBe(1)
    } finally {
      pg.start()
    }
  })
})
