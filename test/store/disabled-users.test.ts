import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { SQL } from 'bun'
import { openMemoryStore } from '../../src/store/document/memory.ts'
import { openJsonFileStore } from '../../src/store/json-file/json-file.ts'
import { migrate } from '../../src/store/sql/migrate.ts'
import { LATEST_VERSION, MIGRATIONS } from '../../src/store/sql/migrations.ts'
import type { Store } from '../../src/store/store.ts'
import { removeDir, tempDir } from '../support/binary.ts'
import { OTHER_STORED_HASH, STORED_HASH } from '../support/passwords.ts'
import { skipWithoutPostgres, type TestPostgres, testPostgres } from '../support/postgres.ts'

// Accounts the operator can disable (`disabledAt`): data written before the field existed loads unchanged, and both
// backends list, update and revoke alike.

let dir: string
beforeEach(() => {
  dir = tempDir()
})
afterEach(() => removeDir(dir))

const OLD_USER = { id: 1, name: 'Ana', email: 'ana@rock-legends.com', passwordHash: STORED_HASH, createdAt: 'then' }

describe('data written before accounts could be disabled', () => {
  test('a data file and a journal whose users have no disabledAt load, as enabled accounts, and keep working', async () => {
    const file = join(dir, 'db.json')
    writeFileSync(
      file,
      JSON.stringify({
        version: 1,
        counters: { artists: 0, albums: 0, users: 1, credentials: 0 },
        artists: [],
        albums: [],
        users: [OLD_USER],
        credentials: [],
      }),
    )
    const entry = {
      counters: { artists: 0, albums: 0, users: 2, credentials: 0 },
      users: [{ ...OLD_USER, id: 2, email: 'bo@rock-legends.com' }],
    }
    writeFileSync(`${file}.journal`, `${JSON.stringify(entry)}\n`)
    const store = await openJsonFileStore(file)
    expect(await store.users.get(1)).toEqual({ ...OLD_USER, disabledAt: null, credentialsEpoch: 0 })
    expect((await store.users.findByEmail('bo@rock-legends.com'))?.disabledAt).toBeNull()
    expect(await store.users.update(2, { disabledAt: '2026-01-01T00:00:00.000Z' })).toMatchObject({ id: 2 })
    await store.close()
    const reopened = await openJsonFileStore(file)
    expect((await reopened.users.get(2))?.disabledAt).toBe('2026-01-01T00:00:00.000Z')
    expect((await reopened.users.get(1))?.disabledAt).toBeNull()
    await reopened.close()
    expect(JSON.parse(readFileSync(file, 'utf8')).users[1].disabledAt).toBe('2026-01-01T00:00:00.000Z')
  })
})

/** The operator's operations every backend implements, checked on `open()`'s store. */
function operatorSuite(open: () => Promise<Store>) {
  const user = (email: string) => ({ name: 'U', email, passwordHash: STORED_HASH, createdAt: 'now', disabledAt: null })
  const token = (userId: number, expiresAt: string | null, revokedAt: string | null = null) => ({
    userId,
    kind: 'token' as const,
    name: null,
    hash: crypto.randomUUID(),
    prefix: 'rl_tok_',
    createdAt: '2026-01-01T00:00:00.000Z',
    expiresAt,
    lastUsedAt: null,
    revokedAt,
  })

  test('users.list pages every account in id order', async () => {
    const store = await open()
    for (const email of ['a@b.co', 'b@b.co', 'c@b.co']) await store.users.insert(user(email))
    const page = await store.users.list({ limit: 2, offset: 1 })
    expect(page.total).toBe(3)
    expect(page.items.map((each) => each.email)).toEqual(['b@b.co', 'c@b.co'])
    await store.close()
  })

  test('users.update changes what it is given, and nothing of an unknown account', async () => {
    const store = await open()
    const { id } = await store.users.insert(user('a@b.co'))
    expect(await store.users.update(id, { disabledAt: 'when' })).toMatchObject({
      passwordHash: STORED_HASH,
      disabledAt: 'when',
    })
    expect(await store.users.update(id, { passwordHash: OTHER_STORED_HASH })).toMatchObject({
      passwordHash: OTHER_STORED_HASH,
      disabledAt: 'when',
    })
    expect(await store.users.update(id, { disabledAt: null })).toMatchObject({ disabledAt: null })
    expect(await store.users.get(id)).toMatchObject({ passwordHash: OTHER_STORED_HASH, disabledAt: null })
    expect(await store.users.update(999, { disabledAt: 'when' })).toBeUndefined()
    await store.close()
  })

  test('credentials.revokeAll revokes the live ones of that kind only', async () => {
    const store = await open()
    const { id } = await store.users.insert(user('a@b.co'))
    const other = await store.users.insert(user('b@b.co'))
    const at = '2026-06-01T00:00:00.000Z'
    const live = await store.credentials.insert(token(id, '2027-01-01T00:00:00.000Z'))
    const forever = await store.credentials.insert(token(id, null))
    const expired = await store.credentials.insert(token(id, '2026-02-01T00:00:00.000Z'))
    const key = await store.credentials.insert({ ...token(id, null), kind: 'key' })
    const theirs = await store.credentials.insert(token(other.id, null))
    expect(await store.credentials.revokeAll(id, 'token', at)).toBe(2)
    const revoked = async (credential: { hash: string }) =>
      (await store.credentials.findByHash(credential.hash))?.revokedAt
    expect(await revoked(live)).toBe(at)
    expect(await revoked(forever)).toBe(at)
    expect(await revoked(expired)).toBeNull()
    expect(await revoked(key)).toBeNull()
    expect(await revoked(theirs)).toBeNull()
    expect(await store.credentials.revokeAll(id, 'token', at)).toBe(0)
    await store.close()
  })
}

describe('the document store', () => operatorSuite(async () => openMemoryStore()))

const skip = skipWithoutPostgres()
let pg: TestPostgres
beforeAll(async () => {
  if (!skip) pg = await testPostgres()
})

describe.skipIf(skip)('the SQL store', () => {
  /**
   * The suite's stores are over databases with the schema and no rows (`emptyDatabase`), the same start as a new copy
   * migrated, for far less of PostgreSQL's work, emptied again once the test has closed its store. The migration test
   * below takes a new one.
   */
  const open = async () => {
    const { openSqlStore } = await import('../../src/store/sql/sql-store.ts')
    return openSqlStore(pg.url(await pg.emptyDatabase()), { pool: 2 })
  }
  operatorSuite(open)

  const pools: SQL[] = []
  afterAll(async () => {
    for (const sql of pools) await sql.close()
  })

  test('migration 2 adds disabled_at to a database of migration 1: its accounts stay, enabled', async () => {
    const database = await pg.freshDatabase()
    const sql = new SQL({ url: pg.url(database), max: 1 })
    pools.push(sql)
    await migrate(sql, { owner: 'release-1', migrations: MIGRATIONS.slice(0, 1) })
    await sql`INSERT INTO rl_users (id, name, email, email_key, password_hash, created_at)
      VALUES (1, 'Ana', 'ana@b.co', 'ana@b.co', ${STORED_HASH}, 'then')`
    const { openSqlStore } = await import('../../src/store/sql/sql-store.ts')
    const store = await openSqlStore(pg.url(database), { pool: 2 })
    expect(await store.users.get(1)).toEqual({
      id: 1,
      name: 'Ana',
      email: 'ana@b.co',
      passwordHash: STORED_HASH,
      createdAt: 'then',
      disabledAt: null,
      credentialsEpoch: 0,
    })
    expect((await sql`SELECT version FROM rl_schema`)[0].version).toBe(LATEST_VERSION)
    await store.close()
  })
})
