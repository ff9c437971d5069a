/**
 * The rules both stores apply (src/store/rules.ts, `searchable` in src/model/search.ts), fed odd input the API cannot
 * send but a seed file or old data can: the document store and the SQL store answer alike.
 */
import { afterEach, beforeAll, describe, expect, test } from 'bun:test'
import type { Credential } from '../../src/model/credential.ts'
import type { New } from '../../src/model/form.ts'
import { openMemoryStore } from '../../src/store/document/memory.ts'
import { makeRoom, takesCredentialAt } from '../../src/store/rules.ts'
import { openSqlStore, type SqlStore } from '../../src/store/sql/sql-store.ts'
import { CredentialLimitError, type Store } from '../../src/store/store.ts'
import { skipWithoutPostgres, type TestPostgres, testPostgres } from '../support/postgres.ts'

const skip = skipWithoutPostgres()
let pg: TestPostgres
/** The SQL stores the test running opened. */
const opened: SqlStore[] = []

// The run's shared server (this file never stops it), not one of this process's own.
beforeAll(async () => {
  if (!skip) pg = await testPostgres()
})
// Each store closed after its test; its database is emptied then, for the next test's (`emptyDatabase`).
afterEach(async () => {
  await Promise.all(opened.splice(0).map((store) => store.close().catch(() => {})))
})

/**
 * A fresh document store and an empty SQL store, to run the same steps on: the SQL store over a database with the
 * schema and no rows (`emptyDatabase`: one an earlier test emptied, else a copy of a migrated template), the same start
 * as a new copy it migrates, for far less of PostgreSQL's work; the rules, not the migrations, are under test.
 */
async function bothStores(): Promise<{ document: Store; sql: Store }> {
  const sql = await openSqlStore(pg.url(await pg.emptyDatabase()), { pool: 2, waitMs: 5000 })
  opened.push(sql)
  return { document: openMemoryStore(), sql }
}

/** Runs `steps` on both stores and expects the same answer from each. */
async function agree<T>(steps: (store: Store) => Promise<T>): Promise<T> {
  const { document, sql } = await bothStores()
  const answer = await steps(document)
  expect(await steps(sql)).toEqual(answer)
  return answer
}

const USER = {
  name: 'Ana',
  email: 'ana@rock.com',
  passwordHash: '$argon2id$x',
  createdAt: '2025-01-01T00:00:00.000Z',
  disabledAt: null,
}
const credential = (userId: number, over: Partial<New<Credential>> = {}): New<Credential> => ({
  userId,
  kind: 'token',
  name: null,
  hash: `hash-${Math.random()}`,
  prefix: 'rl_tok_',
  createdAt: '2025-01-01T00:00:00.000Z',
  expiresAt: null,
  lastUsedAt: null,
  revokedAt: null,
  epoch: 0,
  ...over,
})
const NOW = '2025-06-01T00:00:00.000Z'

describe.skipIf(skip)('both stores apply the same rules to odd data', () => {
  test('the credential cap: an expiry that is not a date never comes, one at the very instant is past', async () => {
    const answer = await agree(async (store) => {
      const { id } = await store.users.insert(USER)
      // Old data: written straight to the store, as a restore or an older version could.
      await store.credentials.insert(credential(id, { name: 'never', expiresAt: 'not a date' }))
      await store.credentials.insert(credential(id, { name: 'at-now', expiresAt: NOW }))
      await store.credentials.insert(credential(id, { name: 'revoked', revokedAt: '2025-02-01T00:00:00.000Z' }))
      await store.credentials.insert(credential(id, { name: 'key', kind: 'key' }))
      await store.credentials.insert(credential(id, { name: 'live' }))
      const refused = await store.credentials
        .insert(credential(id, { name: 'refused', createdAt: NOW }), { max: 2, whenFull: 'refuse' })
        .catch((error: unknown) => error)
      expect(refused).toBeInstanceOf(CredentialLimitError)
      await store.credentials.insert(credential(id, { name: 'new', createdAt: NOW }), {
        max: 2,
        whenFull: 'revoke-oldest',
      })
      const left = await store.credentials.listByUser(id)
      return left.map(({ name, kind, revokedAt }) => ({ name, kind, revokedAt }))
    })
    expect(answer).toEqual([
      { name: 'never', kind: 'token', revokedAt: NOW },
      { name: 'key', kind: 'key', revokedAt: null },
      { name: 'live', kind: 'token', revokedAt: null },
      { name: 'new', kind: 'token', revokedAt: null },
    ])
  })

  test('revoking every live token and purging agree on the same odd expiries', async () => {
    await agree(async (store) => {
      const { id } = await store.users.insert(USER)
      await store.credentials.insert(credential(id, { name: 'never', expiresAt: 'not a date' }))
      await store.credentials.insert(credential(id, { name: 'at-now', expiresAt: NOW }))
      await store.credentials.insert(credential(id, { name: 'later', expiresAt: '+275760-09-13T00:00:00.000Z' }))
      const revoked = await store.credentials.revokeAll(id, 'token', NOW)
      const purged = await store.credentials.purge(NOW)
      return { revoked, purged, left: (await store.credentials.listByUser(id)).map(({ name }) => name) }
    })
  })

  test('a search for U+0000 alone finds everything, in artists and albums alike', async () => {
    const answer = await agree(async (store) => {
      await store.load([
        { name: 'Soda Stereo', band: 'Soda', albums: [{ name: 'Signos' }, { name: 'Canción animal' }] },
        { name: 'Charly García', albums: [{ name: 'Clics modernos' }] },
      ])
      const artists = await store.artists.list({ limit: 10, offset: 0 }, { q: '\u0000' })
      const albums = await store.albums.listByArtist(1, { limit: 10, offset: 0 }, { q: '\u0000' })
      const named = await store.albums.listByArtist(1, { limit: 10, offset: 0 }, { q: 'ANI\u0000MAL' })
      return { artists: artists.total, albums: albums?.total, named: named?.items.map(({ name }) => name) }
    })
    expect(answer).toEqual({ artists: 2, albums: 2, named: ['Canción animal'] })
  })

  test('a record’s image: given, left out (the cover), or null (none)', async () => {
    await agree(async (store) => {
      await store.load(
        [
          { name: 'Given', image: 'https://img/given.jpg', albums: [{ name: 'Left out' }] },
          { name: 'None', image: null, albums: [{ name: 'Null', image: null }] },
        ],
        { cover: (kind, id) => `https://img/${kind}/${id}.jpg` },
      )
      const artists = (await store.artists.list({ limit: 10, offset: 0 })).items.map(({ image }) => image ?? null)
      const albums = await Promise.all([1, 2].map((id) => store.albums.listByArtist(id, { limit: 10, offset: 0 })))
      return { artists, albums: albums.flatMap((page) => page?.items.map(({ image }) => image ?? null)) }
    })
  })

  test('the store is empty until an artist, an album or a user is in it; a load ifNeverWritten loads nothing once written', async () => {
    await agree(async (store) => {
      const before = await store.isEmpty()
      await store.users.insert(USER)
      return { before, after: await store.isEmpty(), loaded: await store.load([], { ifNeverWritten: true }) }
    })
  })
})

describe.skipIf(skip)('records are never edited in place: both stores hand them out frozen', () => {
  test('an assignment to an artist, an album, a user or a credential from either store throws', async () => {
    const { document, sql } = await bothStores()
    for (const store of [document, sql]) {
      await store.load([{ name: 'Spinetta', albums: [{ name: 'Artaud' }] }])
      const { id } = await store.users.insert(USER)
      await store.credentials.insert(credential(id, { hash: 'h' }))
      store.credentials.noteUse(1, NOW)
      const records = [
        await store.artists.get(1),
        (await store.artists.list({ limit: 1, offset: 0 }, { q: 'spin' })).items[0],
        await store.albums.get(1),
        await store.users.get(id),
        await store.credentials.findByHash('h'),
        (await store.credentials.listByUser(id))[0],
      ]
      for (const record of records) {
        expect(Object.isFrozen(record)).toBe(true)
        expect(() => Object.assign(record as object, { name: 'edited' })).toThrow(TypeError)
      }
    }
  })
})

describe('makeRoom, the credential cap as one pure function', () => {
  const at = (name: string, over: Partial<Credential> = {}): Credential => ({
    id: 0,
    ...credential(1, { name, ...over }),
  })

  test('dead credentials of every kind are purged; only live ones of the kind count', () => {
    const dead = at('dead', { kind: 'key', revokedAt: NOW })
    const live = [at('a'), at('b')]
    const room = makeRoom(
      [dead, at('other', { kind: 'key' }), ...live],
      { kind: 'token', createdAt: NOW },
      {
        max: 2,
        whenFull: 'revoke-oldest',
      },
    )
    expect(room).toEqual({ purge: [dead], revoke: [live[0] as Credential], refuse: false })
    expect(makeRoom(live, { kind: 'token', createdAt: NOW }, { max: 3, whenFull: 'refuse' })).toEqual({
      purge: [],
      revoke: [],
      refuse: false,
    })
    expect(makeRoom(live, { kind: 'token', createdAt: NOW }, { max: 2, whenFull: 'refuse' }).refuse).toBe(true)
  })
})

describe('takesCredentialAt, the account check before a credential is added', () => {
  test.each([
    [undefined, 0, false, 'no such account'],
    [{ disabledAt: null, credentialsEpoch: 0 }, 0, true, 'enabled, at the epoch read'],
    [{ disabledAt: null, credentialsEpoch: 1 }, 0, false, 'a password reset since'],
    [{ disabledAt: NOW, credentialsEpoch: 0 }, 0, false, 'disabled'],
  ] as const)('%o at epoch %d: %p (%s)', (user, epoch, takes) => {
    expect(takesCredentialAt(user, epoch)).toBe(takes)
  })
})
