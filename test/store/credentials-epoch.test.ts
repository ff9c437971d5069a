import { afterAll, afterEach, beforeAll, describe, expect, test } from 'bun:test'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { SQL } from 'bun'
import { hashSecret } from '../../src/auth/secrets.ts'
import type { NewCredential } from '../../src/model/credential.ts'
import { openMemoryStore } from '../../src/store/document/memory.ts'
import { openJsonFileStore } from '../../src/store/json-file/json-file.ts'
import { migrate } from '../../src/store/sql/migrate.ts'
import { LATEST_VERSION, MIGRATIONS } from '../../src/store/sql/migrations.ts'
import { AccountChangedError, type Store } from '../../src/store/store.ts'
import { bearer, CARLOS } from '../accounts/helpers.ts'
import { testApp } from '../helpers.ts'
import { removeDir, tempDir } from '../support/binary.ts'
import { OTHER_STORED_HASH, STORED_HASH } from '../support/passwords.ts'
import { skipWithoutPostgres, type TestPostgres, testPostgres } from '../support/postgres.ts'

// The credentials epoch in the stores: a credential is inserted only while its account is enabled and still at the
// epoch the credential carries, checked in the write that inserts it; `users.startEpoch` changes the account, moves its
// epoch on and revokes its live tokens in one write. Data written before epochs reads as epoch 0. The races through the
// accounts service are in test/accounts/login-races.test.ts.

const AT = '2026-06-01T00:00:00.000Z'
const user = (email: string) => ({ name: 'U', email, passwordHash: STORED_HASH, createdAt: 'now', disabledAt: null })
const credential = (userId: number, epoch: number, kind: 'token' | 'key' = 'token'): NewCredential => ({
  userId,
  kind,
  name: kind === 'key' ? 'CI' : null,
  hash: crypto.randomUUID(),
  prefix: `rl_${kind === 'key' ? 'key' : 'tok'}_`,
  createdAt: '2026-05-01T00:00:00.000Z',
  expiresAt: kind === 'key' ? null : '2027-01-01T00:00:00.000Z',
  lastUsedAt: null,
  revokedAt: null,
  epoch,
})

/** What every backend must do with epochs, on `open()`'s store. */
function epochSuite(open: () => Promise<Store>) {
  const opened: Store[] = []
  const store = async () => {
    const opening = await open()
    opened.push(opening)
    return opening
  }
  afterEach(async () => {
    for (const each of opened.splice(0)) await each.close().catch(() => {})
  })

  test('new accounts start at epoch 0; a credential carries its epoch, 0 when its fields leave it out', async () => {
    const s = await store()
    const { id, credentialsEpoch } = await s.users.insert(user('a@b.co'))
    expect(credentialsEpoch).toBe(0)
    const { epoch: _, ...withoutEpoch } = credential(id, 0)
    expect((await s.credentials.insert(withoutEpoch)).epoch).toBe(0)
    expect((await s.credentials.insert(credential(id, 0))).epoch).toBe(0)
  })

  test('startEpoch changes the account, moves its epoch on and revokes its live tokens only, in one write', async () => {
    const s = await store()
    const { id } = await s.users.insert(user('a@b.co'))
    const other = await s.users.insert(user('b@b.co'))
    const tokens = [await s.credentials.insert(credential(id, 0)), await s.credentials.insert(credential(id, 0))]
    const key = await s.credentials.insert(credential(id, 0, 'key'))
    const theirs = await s.credentials.insert(credential(other.id, 0))
    const changed = await s.users.startEpoch(id, { passwordHash: OTHER_STORED_HASH }, AT)
    expect(changed).toMatchObject({
      revokedTokens: 2,
      user: { id, passwordHash: OTHER_STORED_HASH, credentialsEpoch: 1 },
    })
    expect(await s.users.get(id)).toMatchObject({
      passwordHash: OTHER_STORED_HASH,
      credentialsEpoch: 1,
      disabledAt: null,
    })
    for (const token of tokens) expect((await s.credentials.findByHash(token.hash))?.revokedAt).toBe(AT)
    expect((await s.credentials.findByHash(key.hash))?.revokedAt).toBeNull()
    expect((await s.credentials.findByHash(theirs.hash))?.revokedAt).toBeNull()
    expect((await s.users.get(other.id))?.credentialsEpoch).toBe(0)
    expect((await s.users.startEpoch(id, {}, AT))?.user.credentialsEpoch).toBe(2)
    expect(await s.users.startEpoch(999, {}, AT)).toBeUndefined()
  })

  test('insert refuses an older epoch, a disabled account and an unknown one, and stores nothing then', async () => {
    const s = await store()
    const { id } = await s.users.insert(user('a@b.co'))
    await s.users.startEpoch(id, {}, AT)
    await expect(s.credentials.insert(credential(id, 0))).rejects.toBeInstanceOf(AccountChangedError)
    await expect(s.credentials.insert(credential(id, 2))).rejects.toBeInstanceOf(AccountChangedError)
    await expect(
      s.credentials.insert(credential(id, 0, 'key'), { max: 100, whenFull: 'refuse' }),
    ).rejects.toBeInstanceOf(AccountChangedError)
    expect(await s.credentials.listByUser(id)).toEqual([])
    expect((await s.credentials.insert(credential(id, 1))).epoch).toBe(1)
    await s.users.update(id, { disabledAt: AT })
    await expect(s.credentials.insert(credential(id, 1))).rejects.toBeInstanceOf(AccountChangedError)
    // Disabling does not move the epoch, so enabling brings back what the account had (SECURITY.md).
    expect((await s.users.get(id))?.credentialsEpoch).toBe(1)
    await s.users.update(id, { disabledAt: null })
    expect((await s.credentials.insert(credential(id, 1))).epoch).toBe(1)
    await expect(s.credentials.insert(credential(999, 0))).rejects.toBeInstanceOf(AccountChangedError)
    expect(await s.credentials.listByUser(id)).toHaveLength(2)
  })

  test('a reset point keeps epochs: restoring it brings them back', async () => {
    const s = await store()
    const { id } = await s.users.insert(user('a@b.co'))
    const token = await s.credentials.insert(credential(id, 0))
    await s.users.startEpoch(id, {}, AT)
    const snapshot = await s.snapshot()
    await s.users.startEpoch(id, {}, AT)
    await s.restore(snapshot)
    expect((await s.users.get(id))?.credentialsEpoch).toBe(1)
    expect((await s.credentials.findByHash(token.hash))?.epoch).toBe(0)
  })
}

let dir: string
beforeAll(() => {
  dir = tempDir()
})
afterAll(() => removeDir(dir))

describe('the document store in memory', () => epochSuite(async () => openMemoryStore()))
describe('the document store over a JSON data file', () =>
  epochSuite(async () => openJsonFileStore(join(dir, `${crypto.randomUUID()}.json`))))

describe('data files written before credentials epochs', () => {
  test('users without credentialsEpoch and credentials without epoch, in the file and the journal, read as 0', async () => {
    const file = join(dir, 'old.json')
    const token = 'rl_tok_planted-token-from-before'
    const old = (id: number, email: string) => ({
      id,
      name: 'Carlos',
      email,
      passwordHash: STORED_HASH,
      createdAt: 'then',
      disabledAt: null,
    })
    writeFileSync(
      file,
      JSON.stringify({
        version: 1,
        counters: { artists: 0, albums: 0, users: 1, credentials: 1 },
        artists: [],
        albums: [],
        users: [old(1, CARLOS.email)],
        credentials: [
          {
            id: 1,
            userId: 1,
            kind: 'token',
            name: null,
            hash: hashSecret(token),
            prefix: token.slice(0, 11),
            createdAt: 'then',
            expiresAt: null,
            lastUsedAt: null,
            revokedAt: null,
          },
        ],
      }),
    )
    const entry = { counters: { artists: 0, albums: 0, users: 2, credentials: 1 }, users: [old(2, 'b@b.co')] }
    writeFileSync(`${file}.journal`, `${JSON.stringify(entry)}\n`)
    const store = await openJsonFileStore(file)
    try {
      expect((await store.users.get(1))?.credentialsEpoch).toBe(0)
      expect((await store.users.get(2))?.credentialsEpoch).toBe(0)
      expect((await store.credentials.findByHash(hashSecret(token)))?.epoch).toBe(0)
      const { call } = testApp(store)
      expect((await call('/api/v1/user/me', { headers: bearer(token) })).status).toBe(200)
      await store.users.startEpoch(1, {}, AT)
      expect((await call('/api/v1/user/me', { headers: bearer(token) })).status).toBe(401)
    } finally {
      await store.close()
    }
    // Written back with the fields, and read again as they were.
    const saved = JSON.parse(readFileSync(file, 'utf8'))
    expect(saved.users.map((each: { credentialsEpoch: number }) => each.credentialsEpoch)).toEqual([1, 0])
    expect(saved.credentials[0].epoch).toBe(0)
    const reopened = await openJsonFileStore(file)
    expect((await reopened.users.get(1))?.credentialsEpoch).toBe(1)
    await reopened.close()
  })

  test('a negative or fractional epoch is not a usable data file', async () => {
    for (const bad of [-1, 0.5, '1']) {
      const file = join(dir, `bad-${crypto.randomUUID()}.json`)
      writeFileSync(
        file,
        JSON.stringify({
          version: 1,
          counters: { artists: 0, albums: 0, users: 1, credentials: 0 },
          artists: [],
          albums: [],
          users: [
            { id: 1, name: 'C', email: 'c@b.co', passwordHash: STORED_HASH, createdAt: 'then', credentialsEpoch: bad },
          ],
          credentials: [],
        }),
      )
      await expect(openJsonFileStore(file)).rejects.toThrow('credentialsEpoch')
    }
  })
})

const skip = skipWithoutPostgres()
let pg: TestPostgres
beforeAll(async () => {
  if (!skip) pg = await testPostgres()
})

describe.skipIf(skip)('the SQL store', () => {
  /**
   * A database of the test running, empty and migrated (`emptyDatabase`), emptied again once the suite's afterEach has
   * closed its stores. A new database per test (a copy of a template, its migrations run) costs PostgreSQL far more,
   * and the epochs are under test here, not the migrations (the last test below migrates a database of its own).
   */
  const reused = () => pg.emptyDatabase()
  const open = async () => {
    const { openSqlStore } = await import('../../src/store/sql/sql-store.ts')
    return openSqlStore(pg.url(await reused()), { pool: 3 })
  }
  epochSuite(open)

  const pools: SQL[] = []
  afterAll(async () => {
    for (const sql of pools) await sql.close()
  })

  /** A database with one account, a store over it, and a connection of the test's own beside it. */
  async function withRawConnection() {
    const database = await reused()
    const { openSqlStore } = await import('../../src/store/sql/sql-store.ts')
    const store = await openSqlStore(pg.url(database), { pool: 3 })
    const raw = new SQL({ url: pg.url(database), max: 2 })
    pools.push(raw)
    const { id } = await store.users.insert(user('a@b.co'))
    /** Resolves once some statement of the database waits for a row lock. */
    const waitingForLock = async () => {
      for (;;) {
        const [row] = await raw`SELECT count(*) AS n FROM pg_stat_activity
          WHERE datname = ${database} AND wait_event_type = 'Lock'`
        if (Number(row?.n) > 0) return
        await Bun.sleep(5)
      }
    }
    return { store, raw, id, waitingForLock }
  }

  test('an insert that locked the account first is revoked by the reset that waited for it', async () => {
    const { store, raw, id, waitingForLock } = await withRawConnection()
    // What insertCredential does, held open: the account's row locked, a token of epoch 0 inserted.
    const { promise: release, resolve } = Promise.withResolvers<void>()
    const locked = Promise.withResolvers<void>()
    const held = raw.begin(async (tx) => {
      await tx`SELECT credentials_epoch FROM rl_users WHERE id = ${id} FOR UPDATE`
      await tx`INSERT INTO rl_credentials (id, user_id, kind, hash, prefix, created_at, expires_at, epoch)
        VALUES (100, ${id}, 'token', 'held', 'rl_tok_', ${AT}, '2027-01-01T00:00:00.000Z', 0)`
      locked.resolve()
      await release
    })
    await locked.promise
    const reset = store.users.startEpoch(id, { passwordHash: OTHER_STORED_HASH }, AT)
    await waitingForLock()
    resolve()
    await held
    expect(await reset).toMatchObject({ revokedTokens: 1, user: { credentialsEpoch: 1 } })
    expect((await store.credentials.findByHash('held'))?.revokedAt).toBe(AT)
    await store.close()
  })

  test('an insert that waited for a reset holding the account reads the new epoch, and stores nothing', async () => {
    const { store, raw, id, waitingForLock } = await withRawConnection()
    // What startUserEpoch does, held open: the account's row updated (locked), its epoch moved on.
    const { promise: release, resolve } = Promise.withResolvers<void>()
    const locked = Promise.withResolvers<void>()
    const held = raw.begin(async (tx) => {
      await tx`UPDATE rl_users SET credentials_epoch = credentials_epoch + 1 WHERE id = ${id}`
      locked.resolve()
      await release
    })
    await locked.promise
    const insert = store.credentials.insert(credential(id, 0), { max: 100, whenFull: 'revoke-oldest' })
    insert.catch(() => {})
    await waitingForLock()
    resolve()
    await held
    await expect(insert).rejects.toBeInstanceOf(AccountChangedError)
    expect(await store.credentials.listByUser(id)).toEqual([])
    await store.close()
  })

  test('migration 4 adds the epochs to a database of migration 3: its accounts and credentials are at epoch 0', async () => {
    const database = await pg.freshDatabase()
    const sql = new SQL({ url: pg.url(database), max: 1 })
    pools.push(sql)
    await migrate(sql, { owner: 'release-3', migrations: MIGRATIONS.slice(0, 3) })
    await sql`INSERT INTO rl_users (id, name, email, email_key, password_hash, created_at)
      VALUES (1, 'Ana', 'ana@b.co', 'ana@b.co', 'h', 'then')`
    await sql`INSERT INTO rl_credentials (id, user_id, kind, hash, prefix, created_at)
      VALUES (1, 1, 'key', 'k', 'rl_key_', 'then')`
    const { openSqlStore } = await import('../../src/store/sql/sql-store.ts')
    const store = await openSqlStore(pg.url(database), { pool: 2 })
    expect((await sql`SELECT version FROM rl_schema`)[0].version).toBe(LATEST_VERSION)
    expect((await store.users.get(1))?.credentialsEpoch).toBe(0)
    expect((await store.credentials.findByHash('k'))?.epoch).toBe(0)
    // The hand-made row took id 1 without the store: migration 6 starts the credentials' sequence past it.
    expect((await store.credentials.insert(credential(1, 0))).epoch).toBe(0)
    await store.close()
  })
})
