import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { SQL } from 'bun'
import { MigrationError, migrate } from '../../../src/store/sql/migrate.ts'
import { LATEST_VERSION, MIGRATIONS, type Migration } from '../../../src/store/sql/migrations.ts'
import { openSqlStore } from '../../../src/store/sql/sql-store.ts'
import { skipWithoutPostgres, type TestPostgres, testPostgres } from '../../support/postgres.ts'

const skip = skipWithoutPostgres()
let pg: TestPostgres
const open: SQL[] = []

/** A connection pool of its own to `database`, as each replica has. */
function connect(database: string, max = 2): SQL {
  const sql = new SQL({ url: pg.url(database), max })
  open.push(sql)
  return sql
}

beforeAll(async () => {
  if (!skip) pg = await testPostgres()
})
afterAll(async () => {
  await Promise.all(open.map((sql) => sql.close()))
})

describe.skipIf(skip)('migrate, over a real PostgreSQL', () => {
  test('an empty database gets every migration, recorded once, and a second run changes nothing', async () => {
    const database = await pg.freshDatabase()
    const sql = connect(database)
    expect(await migrate(sql, { owner: 'replica-a' })).toEqual({
      applied: MIGRATIONS.map((migration) => migration.version),
      version: LATEST_VERSION,
    })
    expect(await migrate(sql, { owner: 'replica-a' })).toEqual({ applied: [], version: LATEST_VERSION })
    const recorded = await sql`SELECT version, applied_by FROM rl_migrations ORDER BY version`
    expect([...recorded]).toEqual(MIGRATIONS.map(({ version }) => ({ version, applied_by: 'replica-a' })))
    const tables = await sql`SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'`
    expect(tables.map((row: { table_name: string }) => row.table_name).sort()).toEqual(
      [
        'rl_albums',
        'rl_artists',
        'rl_attempts',
        'rl_counters',
        'rl_credentials',
        'rl_events',
        'rl_idempotency',
        'rl_history',
        'rl_migrations',
        'rl_schema',
        'rl_snapshots',
        'rl_tallies',
        'rl_users',
      ].sort(),
    )
  })

  // Five times over: the races (two CREATE TABLEs of rl_schema, two leases) end differently from run to run.
  test.each([1, 2, 3, 4, 5])(
    'eight replicas racing on an empty database (#%i): exactly one migrates, the others wait and then go on',
    async () => {
      const database = await pg.freshDatabase()
      const outcomes = await Promise.all(
        Array.from({ length: 8 }, (_, i) => migrate(connect(database, 1), { owner: `replica-${i}`, pollMs: 20 })),
      )
      const migrators = outcomes.filter((outcome) => outcome.applied.length > 0)
      expect(migrators).toHaveLength(1)
      expect(outcomes.every((outcome) => outcome.version === LATEST_VERSION)).toBe(true)
      const sql = connect(database)
      const [row] = await sql`SELECT count(*)::int AS n FROM rl_migrations`
      expect(row.n).toBe(MIGRATIONS.length)
    },
  )

  // A slow migration of its own, so that the waiting and the take-over can be seen.
  const slow: Migration[] = [
    { version: 1, name: 'a table', statements: MIGRATIONS[0]?.statements.slice(0, 1) ?? [] },
    { version: 2, name: 'slow', statements: ['SELECT pg_sleep(0.3)', 'CREATE TABLE IF NOT EXISTS slow_done (id INT)'] },
  ]

  test('a replica waits for the one migrating, and reports its version once it is done', async () => {
    const database = await pg.freshDatabase()
    const first = migrate(connect(database), { owner: 'first', migrations: slow })
    // Once the first holds the lease (asked for up to 10 s).
    const look = connect(database)
    const holder = async () =>
      (await look`SELECT to_regclass('rl_schema') IS NOT NULL AS present`)[0]?.present
        ? (await look`SELECT lease_owner FROM rl_schema WHERE id = 1`)[0]?.lease_owner
        : undefined
    for (let i = 0; i < 1000 && (await holder()) !== 'first'; i++) await Bun.sleep(10)
    // Started while the first holds the lease: it applies nothing, and returns only once version 2 is there.
    const second = await migrate(connect(database), { owner: 'second', migrations: slow, pollMs: 20 })
    expect(second).toEqual({ applied: [], version: 2 })
    const [done] = await connect(database)`SELECT to_regclass('slow_done') IS NOT NULL AS present`
    expect(done.present).toBe(true)
    expect((await first).applied).toEqual([1, 2])
  })

  test('when the migrating replica dies, its lease expires and another one finishes the job', async () => {
    const database = await pg.freshDatabase()
    const sql = connect(database)
    // What a replica that died half-way leaves: the lease taken, the version not moved.
    await migrate(sql, { owner: 'setup', migrations: slow.slice(0, 1) })
    await sql`UPDATE rl_schema SET lease_owner = 'dead', lease_until = now() + interval '300 milliseconds' WHERE id = 1`
    const outcome = await migrate(connect(database), { owner: 'survivor', migrations: slow, pollMs: 20 })
    expect(outcome).toEqual({ applied: [2], version: 2 })
    const [row] = await sql`SELECT applied_by FROM rl_migrations WHERE version = 2`
    expect(row.applied_by).toBe('survivor')
  })

  test('a waiting replica gives up after its wait, naming who holds the lease', async () => {
    const database = await pg.freshDatabase()
    const sql = connect(database)
    await migrate(sql, { owner: 'setup', migrations: slow.slice(0, 1) })
    await sql`UPDATE rl_schema SET lease_owner = 'stuck', lease_until = now() + interval '1 hour' WHERE id = 1`
    await expect(migrate(sql, { owner: 'late', migrations: slow, waitMs: 150, pollMs: 20 })).rejects.toThrow(
      'waited 150 ms for the schema migration held by stuck',
    )
  })

  test('a database migrated by a newer build is refused', async () => {
    const database = await pg.freshDatabase()
    const sql = connect(database)
    await migrate(sql, { owner: 'newer', migrations: slow })
    await expect(migrate(sql, { owner: 'older', migrations: slow.slice(0, 1) })).rejects.toBeInstanceOf(MigrationError)
  })

  test('a database written by the schema of migration 4 (ids and totals in counter rows) keeps working after 5 and 6', async () => {
    const database = await pg.freshDatabase()
    const sql = connect(database)
    // What a build of migration 4 leaves: migrations 1 to 4, the counters it keeps (past what the rows show, as
    // credentials purged leave them), and a reset point whose counters come from those rows.
    await migrate(sql, { owner: 'release-4', migrations: MIGRATIONS.slice(0, 4) })
    await sql`INSERT INTO rl_counters (name, value) VALUES ('artists', 3), ('albums', 2), ('users', 1),
      ('credentials', 5), ('artists.count', 3), ('artists.version', 41)
      ON CONFLICT (name) DO UPDATE SET value = excluded.value`
    for (const [id, name] of [
      [1, 'Almendra'],
      [2, 'Manal'],
      [3, 'Vox Dei'],
    ] as const)
      await sql`INSERT INTO rl_artists (id, name, name_key, folded_name, folded_band, album_count)
        VALUES (${id}, ${name}, ${Buffer.from(name)}, ${name.toLowerCase()}, '', ${id === 1 ? 2 : 0})`
    await sql`INSERT INTO rl_albums (id, artist_id, name, name_key, folded_name)
      VALUES (1, 1, 'Almendra', ${Buffer.from('a')}, 'almendra'), (2, 1, 'Almendra II', ${Buffer.from('b')}, 'almendra ii')`
    await sql`INSERT INTO rl_users (id, name, email, email_key, password_hash, created_at)
      VALUES (1, 'Ana', 'ana@b.co', 'ana@b.co', 'h', '2026-11-25T00:00:00.000Z')`
    const resetPoint = {
      version: 1,
      counters: { artists: 2, albums: 2, users: 0, credentials: 0 },
      artists: [
        { id: 1, name: 'Almendra' },
        { id: 2, name: 'Manal' },
      ],
      albums: [
        { id: 1, artistId: 1, name: 'Almendra' },
        { id: 2, artistId: 1, name: 'Almendra II' },
      ],
      users: [],
      credentials: [],
    }
    await sql`INSERT INTO rl_snapshots (name, document) VALUES ('reset', ${JSON.stringify(resetPoint)})`

    const store = await openSqlStore(pg.url(database), { pool: 2 })
    try {
      expect((await sql`SELECT version FROM rl_schema`)[0].version).toBe(LATEST_VERSION)
      // The totals and the ids go on from the counters.
      const page = await store.artists.list({ limit: 10, offset: 0 })
      expect(page.total).toBe(3)
      expect(page.items.map((artist) => artist.name)).toEqual(['Almendra', 'Manal', 'Vox Dei'])
      expect((await store.albums.listByArtist(1, { limit: 10, offset: 0 }))?.total).toBe(2)
      expect((await store.artists.insert({ name: 'Pappo' })).id).toBe(4)
      expect((await store.albums.insert({ artistId: 2, name: 'Manal' }))?.id).toBe(3)
      expect(
        (
          await store.users.insert({
            name: 'Bea',
            email: 'bea@b.co',
            passwordHash: 'h',
            createdAt: 'now',
            disabledAt: null,
          })
        ).id,
      ).toBe(2)
      const key = await store.credentials.insert({
        userId: 1,
        kind: 'key',
        name: null,
        hash: 'k',
        prefix: 'rl_key_',
        createdAt: '2026-11-25T00:00:00.000Z',
        expiresAt: null,
        lastUsedAt: null,
        revokedAt: null,
      })
      expect(key.id).toBe(6)
      expect((await store.artists.list({ limit: 10, offset: 0 })).total).toBe(4)
      // The old counter rows are gone: a replica of the earlier build still running fails its writes loudly.
      expect((await sql`SELECT count(*)::int AS n FROM rl_counters`)[0].n).toBe(0)
      // The reset point written by the earlier build restores its state and its ids.
      await store.restore(await store.resetPoint())
      expect((await store.artists.list({ limit: 10, offset: 0 })).total).toBe(2)
      expect((await store.artists.insert({ name: 'Después del reset' })).id).toBe(3)
      expect((await store.albums.insert({ artistId: 1, name: 'Otro' }))?.id).toBe(3)
      // Applying 6 again (a migrator that died before recording it) moves no sequence back.
      for (const statement of MIGRATIONS[5]?.statements ?? []) await sql.unsafe(statement)
      expect((await store.artists.insert({ name: 'Otra vez' })).id).toBe(4)
    } finally {
      await store.close()
    }
  })

  test('the URL over TCP works as the one over the unix socket', async () => {
    const database = await pg.freshDatabase()
    const sql = new SQL({ url: pg.tcpUrl(database), max: 1 })
    open.push(sql)
    expect((await migrate(sql, { owner: 'tcp' })).version).toBe(LATEST_VERSION)
  })
})

describe('the migrations keep the portable-SQL rules (src/store/sql/migrations.ts)', () => {
  const statements = MIGRATIONS.flatMap((migration) => migration.statements.map((text) => [migration.version, text]))
  test.each([
    // Plain sequences are portable (rule 3); columns that make their own are not.
    ['SERIAL or IDENTITY ids', /\b(?:BIG|SMALL)?SERIAL\b|\bIDENTITY\b/i],
    ['advisory locks', /pg_(?:try_)?advisory/i],
    ['LISTEN/NOTIFY', /\b(?:LISTEN|NOTIFY)\b/i],
    ['triggers or functions', /\bCREATE\s+(?:OR\s+REPLACE\s+)?(?:TRIGGER|FUNCTION|PROCEDURE)\b/i],
    ['an expression as an ON CONFLICT target', /ON\s+CONFLICT\s*\([^)]*\(/i],
    ['enum types', /\bCREATE\s+TYPE\b/i],
  ])('no %s', (_, forbidden) => {
    expect(statements.filter(([, text]) => forbidden.test(String(text)))).toEqual([])
  })

  test('versions are numbered 1, 2, 3… without gaps', () => {
    expect(MIGRATIONS.map((migration) => migration.version)).toEqual(MIGRATIONS.map((_, i) => i + 1))
  })
})
