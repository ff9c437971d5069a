import type { SQL } from 'bun'
import { LATEST_VERSION, MIGRATIONS, type Migration } from './migrations.ts'
import { inTransaction, sqlState } from './retry.ts'

/** How `migrate` behaves; the defaults suit a replica starting up. */
export interface MigrateOptions {
  /** Who migrates, recorded with the lease and in `rl_migrations` (a replica's host and process id). */
  owner: string
  /** How long a lease lasts without being renewed: a replica that dies while migrating frees it after this. */
  leaseMs?: number
  /** How long to wait for another replica's migration before giving up. */
  waitMs?: number
  /** How often a waiting replica looks again. */
  pollMs?: number
  /** The migrations to apply; the project's own by default (tests pass their own). */
  migrations?: readonly Migration[]
}

/** What one call of `migrate` did. */
export interface MigrateOutcome {
  /** The versions this call applied; empty when the schema was already current or another replica migrated it. */
  applied: number[]
  version: number
}

/** Raised when the schema cannot be brought to this build's version. */
export class MigrationError extends Error {
  override name = 'MigrationError'
}

// 42P07: the table exists. 23505 or 42710: a concurrent CREATE TABLE of the same name lost the race on the
// catalogue's unique index, or on the row type PostgreSQL makes for the table. Either way, the table is there.
const ALREADY_CREATED = new Set(['42P07', '23505', '42710'])

/** Creates `rl_schema`, the one row that holds the schema's version and its lease, if no replica has yet. */
async function ensureSchemaRow(sql: SQL): Promise<void> {
  const [found] = await sql`SELECT to_regclass('rl_schema') IS NOT NULL AS present`
  if (!found?.present)
    try {
      await sql`CREATE TABLE rl_schema (
        id INT PRIMARY KEY CHECK (id = 1),
        version INT NOT NULL,
        lease_owner TEXT,
        lease_until TIMESTAMPTZ
      )`
    } catch (error) {
      if (!ALREADY_CREATED.has(sqlState(error) ?? '')) throw error
    }
  await sql`INSERT INTO rl_schema (id, version) VALUES (1, 0) ON CONFLICT (id) DO NOTHING`
}

/** Takes the lease if it is free or expired; the schema's version when taken, else undefined. */
async function takeLease(sql: SQL, owner: string, leaseMs: number): Promise<number | undefined> {
  const [row] = await sql`
    UPDATE rl_schema
    SET lease_owner = ${owner}, lease_until = now() + ${`${leaseMs} milliseconds`}::interval
    WHERE id = 1 AND (lease_owner IS NULL OR lease_until < now())
    RETURNING version`
  return row ? Number(row.version) : undefined
}

/** Applies one migration under the lease and records it; throws if the lease was lost meanwhile. */
async function apply(sql: SQL, migration: Migration, owner: string, leaseMs: number): Promise<void> {
  const lease = `${leaseMs} milliseconds`
  for (const statement of migration.statements) {
    await sql.unsafe(statement)
    // Renewed after each statement, so a long migration keeps its lease and a dead one loses it.
    const [held] = await sql`
      UPDATE rl_schema SET lease_until = now() + ${lease}::interval
      WHERE id = 1 AND lease_owner = ${owner} RETURNING id`
    if (!held) throw new MigrationError(`lost the schema lease while applying migration ${migration.version}`)
  }
  await inTransaction(sql, async (tx) => {
    await tx`INSERT INTO rl_migrations (version, name, applied_by) VALUES (${migration.version}, ${migration.name}, ${owner})`
    const [moved] = await tx`
      UPDATE rl_schema SET version = ${migration.version}
      WHERE id = 1 AND lease_owner = ${owner} AND version = ${migration.version - 1} RETURNING id`
    if (!moved) throw new MigrationError(`lost the schema lease before recording migration ${migration.version}`)
  })
}

/**
 * Brings the database's schema to this build's version. Any number of replicas may call it at the same moment:
 * the one that takes the lease row applies the missing migrations, one by one, each recorded exactly once; the
 * others wait until the version is current (or the lease expires, when its holder died, and one of them takes
 * over). A database ahead of this build (a newer replica migrated it) is refused.
 */
export async function migrate(sql: SQL, options: MigrateOptions): Promise<MigrateOutcome> {
  const { owner, leaseMs = 30_000, waitMs = 60_000, pollMs = 100, migrations = MIGRATIONS } = options
  const latest = migrations.at(-1)?.version ?? LATEST_VERSION
  const deadline = Date.now() + waitMs
  await ensureSchemaRow(sql)
  for (;;) {
    const version = await takeLease(sql, owner, leaseMs)
    if (version !== undefined) {
      const applied: number[] = []
      try {
        if (version > latest)
          throw new MigrationError(
            `the database's schema is at version ${version}, newer than this build's ${latest}: upgrade this replica`,
          )
        for (const migration of migrations.filter((each) => each.version > version)) {
          await apply(sql, migration, owner, leaseMs)
          applied.push(migration.version)
        }
      } finally {
        // A release that fails (the connection is gone) must not hide why the migration stopped; the lease expires.
        await sql`UPDATE rl_schema SET lease_owner = NULL, lease_until = NULL WHERE id = 1 AND lease_owner = ${owner}`.catch(
          () => {},
        )
      }
      return { applied, version: Math.max(version, latest) }
    }
    const [row] = await sql`SELECT version, lease_owner FROM rl_schema WHERE id = 1`
    const current = Number(row?.version)
    if (current > latest)
      throw new MigrationError(
        `the database's schema is at version ${current}, newer than this build's ${latest}: upgrade this replica`,
      )
    if (current === latest) return { applied: [], version: current }
    if (Date.now() > deadline)
      throw new MigrationError(
        `waited ${waitMs} ms for the schema migration held by ${row?.lease_owner ?? 'another replica'}`,
      )
    await Bun.sleep(pollMs)
  }
}
