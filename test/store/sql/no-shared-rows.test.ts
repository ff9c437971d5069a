/**
 * No row that every write of a kind must lock until its commit. Each test holds open, on a connection of its own, a
 * transaction that has written the way a replica does (as if its commit were slow to flush to disk), and checks that a
 * write of the same kind through another replica (a store over the same database) does not wait for it. Writes that
 * must take turns still do: albums of one artist (its maximum), credentials of one account (its epoch).
 */
import { describe, expect, test } from 'bun:test'
import { SQL } from 'bun'
import type { NewCredential } from '../../../src/model/credential.ts'
import type { NewUser } from '../../../src/model/user.ts'
import { insertCredential } from '../../../src/store/sql/credentials.ts'
import { openSqlStore } from '../../../src/store/sql/sql-store.ts'
import { WriteBatcher } from '../../../src/store/sql/writes.ts'
import { sqlTestFile, type TestPostgres } from '../../support/postgres.ts'

let pg: TestPostgres
const { skip, opened, pools, emptyDatabase } = sqlTestFile((server) => {
  pg = server
})

/** How long a write through the other replica may take while the held transaction is open: it must not wait. */
const WITHIN_MS = 1000
const TIMED_OUT: unique symbol = Symbol('timed out')

/** What `write` resolves with, or {@link TIMED_OUT} if it takes longer than {@link WITHIN_MS}. */
async function withinASecond<T>(write: Promise<T>): Promise<T | typeof TIMED_OUT> {
  write.catch(() => {})
  return Promise.race([write, Bun.sleep(WITHIN_MS).then((): typeof TIMED_OUT => TIMED_OUT)])
}

/** The plain connections to each database, kept for the next test that takes it: a new pool starts new backends. */
const kept = new Map<string, SQL>()
/**
 * A database with one replica over it, and a plain connection for the transaction held open. The database has the
 * schema and no rows (`reusedDatabase`: one an earlier test emptied, else a copy of a migrated template): the same
 * start as a new copy the replica migrates, for far less of PostgreSQL's work.
 */
async function setUp() {
  const database = await emptyDatabase()
  const replica = await openSqlStore(pg.url(database), { pool: 4, waitMs: 5000 })
  opened.push(replica)
  let raw = kept.get(database)
  if (!raw) {
    raw = new SQL({ url: pg.url(database), max: 2 })
    kept.set(database, raw)
    pools.push(raw)
  }
  return { database, replica, raw }
}

/**
 * Runs `write` in a transaction of `raw` and keeps it open, uncommitted, until `release` is called: a replica's
 * batch whose commit is slow to flush. `written` resolves once `write` is done.
 */
function holdOpen<T>(raw: SQL, write: (tx: SQL) => Promise<T>) {
  const release = Promise.withResolvers<void>()
  const written = Promise.withResolvers<T>()
  const committed = raw.begin(async (tx) => {
    written.resolve(await write(tx as unknown as SQL))
    await release.promise
  })
  committed.catch((error: unknown) => written.reject(error))
  return { written: written.promise, release: () => release.resolve(), committed }
}

/** A write batcher of the store's own code whose every statement runs in `tx`: a replica's batch, held open. */
const batcherIn = (tx: SQL) =>
  new WriteBatcher(
    (work) => work(tx),
    (work) => work(tx),
    (error) => error,
  )

const credential = (userId: number, hash: string): NewCredential => ({
  userId,
  kind: 'key',
  name: 'ci',
  hash,
  prefix: 'rl_key_',
  createdAt: '2026-11-25T12:00:00.000Z',
  expiresAt: null,
  lastUsedAt: null,
  revokedAt: null,
  epoch: 0,
})

const user = (email: string): NewUser => ({
  name: 'Ana',
  email,
  passwordHash: 'hash',
  createdAt: '2026-11-25T12:00:00.000Z',
  disabledAt: null,
})

describe.skipIf(skip)('writes on one replica do not wait for the commits of another', () => {
  test('an artist batch held open elsewhere: a create, a replace and a list through a replica go on; totals and ids stay exact', async () => {
    const { replica, raw } = await setUp()
    const before = await replica.artists.insert({ name: 'Antes' })
    // The page is kept, with the version it was read at.
    expect((await replica.artists.list({ limit: 10, offset: 0 })).total).toBe(1)
    const held = holdOpen(raw, (tx) => batcherIn(tx).insertArtist({ name: 'Lento' }))
    try {
      const slow = await held.written
      const created = await withinASecond(replica.artists.insert({ name: 'Rápido' }))
      expect(created).not.toBe(TIMED_OUT)
      const replaced = await withinASecond(replica.artists.replace({ ...before, name: 'Antes, cambiado' }))
      expect(replaced).not.toBe(TIMED_OUT)
      // What the held transaction wrote is not there yet; what the replica committed is.
      const page = await replica.artists.list({ limit: 10, offset: 0 })
      expect(page.items.map((artist) => artist.name)).toEqual(['Antes, cambiado', 'Rápido'])
      expect(page.total).toBe(2)
      held.release()
      await held.committed
      const ids = [before.id, slow.id, (created as { id: number }).id]
      expect(new Set(ids).size).toBe(3)
      // Committed elsewhere: on this replica's next page at once, the kept page not served again.
      const after = await replica.artists.list({ limit: 10, offset: 0 })
      expect(after.total).toBe(3)
      expect(after.items.map((artist) => artist.name).sort()).toEqual(['Antes, cambiado', 'Lento', 'Rápido'])
    } finally {
      held.release()
      await held.committed.catch(() => {})
    }
  })

  test('eight writers adding artists at once, each batch on its own connection: every create lands, the total stays exact', async () => {
    const { database, replica } = await setUp()
    // Rounds of 1, 2 and 3 creates: 2 a round on average.
    const ROUNDS = 60
    const writers = Array.from({ length: 8 }, () => {
      const sql = new SQL({ url: pg.url(database), max: 1 })
      pools.push(sql)
      return new WriteBatcher(
        (work) => sql.begin((tx) => work(tx as unknown as SQL)) as never,
        (work) => work(sql),
        (error) => error,
      )
    })
    const ids = (
      await Promise.all(
        writers.map(async (writer, w) => {
          const mine: number[] = []
          for (let round = 0; round < ROUNDS; round++) {
            const batch = Array.from({ length: 1 + (round % 3) }, (_, i) =>
              writer.insertArtist({ name: `${w}.${round}.${i}` }),
            )
            const created = await Promise.all(batch)
            // One writer's batches go one at a time: its ids increase in the order they commit.
            for (const { id } of created) {
              expect(id).toBeGreaterThan(mine.at(-1) ?? 0)
              mine.push(id)
            }
          }
          return mine
        }),
      )
    ).flat()
    expect(new Set(ids).size).toBe(8 * ROUNDS * 2)
    expect((await replica.artists.list({ limit: 1, offset: 0 })).total).toBe(8 * ROUNDS * 2)
  }, 60_000)

  test('an album batch held open for one artist: albums of another artist go on; those of the same one wait their turn', async () => {
    const { replica, raw } = await setUp()
    const first = await replica.artists.insert({ name: 'Primero' })
    const second = await replica.artists.insert({ name: 'Segundo' })
    const held = holdOpen(raw, (tx) => batcherIn(tx).insertAlbum({ artistId: first.id, name: 'Lento' }))
    try {
      const slow = await held.written
      const other = await withinASecond(replica.albums.insert({ artistId: second.id, name: 'Rápido' }))
      expect(other).not.toBe(TIMED_OUT)
      // The same artist's row is held (its album maximum): that one waits for the commit.
      const same = replica.albums.insert({ artistId: first.id, name: 'Después' })
      expect(await withinASecond(same)).toBe(TIMED_OUT)
      held.release()
      await held.committed
      const after = await same
      expect(new Set([slow?.id, (other as { id: number }).id, after?.id]).size).toBe(3)
      expect((await replica.albums.listByArtist(first.id, { limit: 10, offset: 0 }))?.total).toBe(2)
    } finally {
      held.release()
      await held.committed.catch(() => {})
    }
  })

  test('a limiter hit held open for one key: hits of other keys go on; the same key waits its turn (its limit is exact)', async () => {
    const { replica, raw } = await setUp()
    const rule = { limit: 5, windowMs: 60_000 }
    const limiter = replica.limiter('login-failures-per-client', rule, Date.now)
    // What a hit does first, held open: the key's head row upserted, so locked (limiter.ts).
    const held = holdOpen(
      raw,
      (tx) => tx`
        INSERT INTO rl_attempts (limiter, subject, id, at_ms, settled)
        VALUES ('login-failures-per-client', '203.0.113.1', '', ${Date.now()}::bigint, 1)
        ON CONFLICT (limiter, subject, id) DO UPDATE SET at_ms = GREATEST(rl_attempts.at_ms, excluded.at_ms)`,
    )
    try {
      await held.written
      const other = await withinASecond(limiter.hit('203.0.113.2'))
      expect(other).not.toBe(TIMED_OUT)
      const same = limiter.hit('203.0.113.1')
      expect(await withinASecond(same)).toBe(TIMED_OUT)
      held.release()
      await held.committed
      expect((await same).attempt).toBeDefined()
    } finally {
      held.release()
      await held.committed.catch(() => {})
    }
  })

  test('a credential insert held open for one account: another account gets its credential at once', async () => {
    const { replica, raw } = await setUp()
    const ana = await replica.users.insert(user('ana@b.co'))
    const bea = await replica.users.insert(user('bea@b.co'))
    const held = holdOpen(raw, (tx) => insertCredential(tx, credential(ana.id, 'held'), undefined))
    try {
      await held.written
      const other = await withinASecond(replica.credentials.insert(credential(bea.id, 'other')))
      expect(other).not.toBe(TIMED_OUT)
      const signedUp = await withinASecond(replica.users.insert(user('cris@b.co')))
      expect(signedUp).not.toBe(TIMED_OUT)
      held.release()
      await held.committed
      expect((await replica.credentials.findByHash('held'))?.userId).toBe(ana.id)
    } finally {
      held.release()
      await held.committed.catch(() => {})
    }
  })
})
