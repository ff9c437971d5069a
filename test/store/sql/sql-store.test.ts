import { describe, expect, test } from 'bun:test'
import { SQL } from 'bun'
import type { CatalogueEntry } from '../../../src/model/catalogue.ts'
import type { Credential } from '../../../src/model/credential.ts'
import type { New } from '../../../src/model/form.ts'
import type { AlbumSort, ArtistSort } from '../../../src/model/search.ts'
import { openMemoryStore } from '../../../src/store/document/memory.ts'
import { openSqlStore, type SqlStore, type SqlStoreOptions } from '../../../src/store/sql/sql-store.ts'
import {
  CredentialLimitError,
  DatabaseUnavailableError,
  DuplicateEmailError,
  type Store,
} from '../../../src/store/store.ts'
import { sqlTestFile, type TestPostgres } from '../../support/postgres.ts'

let pg: TestPostgres
// A server of this file's own: some tests stop it.
const { skip, opened, pools, emptyDatabase } = sqlTestFile(
  (server) => {
    pg = server
  },
  { own: true },
)

/** A store over `database` (by default an empty one, see {@link emptyDatabase}), closed after the test: one replica. */
async function replica(database?: string, options: SqlStoreOptions = {}): Promise<SqlStore> {
  const store = await openSqlStore(pg.url(database ?? (await emptyDatabase())), {
    pool: 4,
    waitMs: 5000,
    ...options,
  })
  opened.push(store)
  return store
}

/** Two replicas over one empty database. */
async function twoReplicas(): Promise<[SqlStore, SqlStore]> {
  const database = await emptyDatabase()
  return [await replica(database), await replica(database)]
}

/** A plain connection to `database`, to look at what the store wrote. */
function inspect(database: string): SQL {
  const sql = new SQL({ url: pg.url(database), max: 2 })
  pools.push(sql)
  return sql
}

// Names that exercise the name key: ñ after n, accents and case ignored, numbers by value, a character outside the
// BMP, look-alike names that tie (ordered by id).
const NAMES: [string, string | undefined][] = [
  ['Ñandú Blues', 'Los Ñandúes'],
  ['Nando', undefined],
  ['nandu', 'Sui Generis'],
  ['Ávila', undefined],
  ['avila', 'Serú Girán'],
  ['Zeta', 'La Máquina de Hacer Pájaros'],
  ['Disco 2', undefined],
  ['Disco 10', 'Almendra'],
  ['disco 02', undefined],
  ['Charly García', 'Serú Girán'],
  ['CHARLY GARCIA', undefined],
  ['Émilie', 'Pescado Rabioso'],
  ['🎸 Guitarra', undefined],
  ['\uffef Último', undefined],
  ['Oscar', 'Virus'],
  ['oscar', 'VIRUS'],
  ['Spinetta', 'Invisible'],
  ['Luis Alberto Spinetta', 'Almendra'],
  ['Ｆｕｌｌ Width', undefined],
  ['Niño', 'los niños'],
]

const artistFields = ([name, band]: [string, string | undefined], i: number) => ({
  name,
  band,
  description: i % 3 === 0 ? `Artist number ${i}` : undefined,
  image: i % 4 === 0 ? `/covers/artists/${i}.svg` : undefined,
})

const YEARS = [1973, undefined, 1983, 1973, undefined, 2001, 1969]
const ALBUMS = ['Artaud', 'Clics modernos', 'Ñandú', 'artaud 2', 'Artaud 10', 'Música', 'Yendo de la cama al living']

/** Feeds the same writes to a store, one at a time (so ids match), and returns the id of the artist with albums. */
async function feed(store: Store): Promise<number> {
  for (const [i, entry] of NAMES.entries()) await store.artists.insert(artistFields(entry, i))
  const artistId = 10
  for (const [i, name] of ALBUMS.entries())
    await store.albums.insert({ artistId, name, year: YEARS[i], image: i === 2 ? '/covers/albums/x.svg' : undefined })
  await store.albums.insert({ artistId: 3, name: 'Otro', year: 1990 })
  return artistId
}

const exact = (value: unknown) => JSON.parse(JSON.stringify(value))

describe.skipIf(skip)('SqlStore answers as the document store does', () => {
  const artistSorts: ArtistSort[] = ['id', 'name', '-name']
  const albumSorts: AlbumSort[] = ['id', 'year', '-year', 'name']
  const queries = ['', 'garcia', 'GARCÍA', 'ñ', 'n', 'disco', '2', 'serú', 'zz', 'ｆｕｌｌ', 'virus', '\u0000']
  const pages = [
    { limit: 3, offset: 0 },
    { limit: 3, offset: 2 },
    { limit: 100, offset: 0 },
    { limit: 5, offset: 50 },
  ]

  test('lists, searches and orders artists and albums alike, page by page, totals included', async () => {
    const sql = await replica()
    const memory = openMemoryStore()
    const artistId = await feed(sql)
    await feed(memory)
    for (const q of queries)
      for (const sort of artistSorts)
        for (const page of pages) {
          const [got, want] = await Promise.all([
            sql.artists.list(page, { q, sort }),
            memory.artists.list(page, { q, sort }),
          ])
          expect({ q, sort, page, ...exact(got) }).toEqual({ q, sort, page, ...exact(want) })
        }
    for (const q of ['', 'artaud', 'ARTAUD', 'musica', 'ñ', 'x', '\u0000'])
      for (const sort of albumSorts)
        for (const page of pages) {
          const got = await sql.albums.listByArtist(artistId, page, { q, sort })
          const want = await memory.albums.listByArtist(artistId, page, { q, sort })
          expect({ q, sort, page, ...exact(got) }).toEqual({ q, sort, page, ...exact(want) })
        }
    // Real content, not two empty answers.
    const byName = await sql.artists.list({ limit: 100, offset: 0 }, { sort: 'name' })
    expect(byName.total).toBe(NAMES.length)
    const names = byName.items.map((artist) => artist.name)
    expect(names.slice(0, 7)).toEqual([
      'Ávila',
      'avila',
      'Charly García',
      'CHARLY GARCIA',
      'Disco 2',
      'disco 02',
      'Disco 10',
    ])
    // JavaScript's order (UTF-16 code units), not UTF-8's: the guitar's surrogates come before U+FFEF.
    expect(names.slice(-2)).toEqual(['🎸 Guitarra', '\uffef Último'])
    // ñ after every n…, before o.
    expect(names.slice(names.indexOf('Nando'), names.indexOf('Oscar'))).toEqual([
      'Nando',
      'nandu',
      'Niño',
      'Ñandú Blues',
    ])
    expect((await sql.albums.listByArtist(artistId, { limit: 10, offset: 0 }))?.total).toBe(ALBUMS.length)
  })

  test('records: fresh objects, unset fields left out, unknown ids undefined', async () => {
    const sql = await replica()
    const memory = openMemoryStore()
    await feed(sql)
    await feed(memory)
    for (const id of [1, 2, 4, 13, 20]) {
      const got = await sql.artists.get(id)
      expect(JSON.stringify(got)).toBe(JSON.stringify(await memory.artists.get(id)))
      expect(got).not.toBe(await sql.artists.get(id))
    }
    for (const id of [1, 2, 3, 8]) expect(exact(await sql.albums.get(id))).toEqual(exact(await memory.albums.get(id)))
    const artist = (await sql.artists.get(1)) as object
    expect(Object.values(artist)).not.toContain(null)
    for (const id of [0, -1, 999, 2 ** 60, 1.5]) {
      expect(await sql.artists.get(id)).toBeUndefined()
      expect(await sql.albums.get(id)).toBeUndefined()
      expect(await sql.albums.listByArtist(id, { limit: 10, offset: 0 })).toBeUndefined()
    }
    expect(await sql.albums.listByArtist(2, { limit: 10, offset: 0 })).toEqual({ items: [], total: 0 })
  })

  test('replace: every field but the id, left-out fields unset, unknown artist undefined; order follows', async () => {
    const sql = await replica()
    const memory = openMemoryStore()
    await feed(sql)
    await feed(memory)
    const replacement = { id: 1, name: 'Aaa Primero', band: 'Nueva' }
    expect(exact(await sql.artists.replace(replacement))).toEqual(exact(await memory.artists.replace(replacement)))
    expect(exact(await sql.artists.get(1))).toEqual({ id: 1, name: 'Aaa Primero', band: 'Nueva' })
    expect(await sql.artists.replace({ id: 999, name: 'Nadie' })).toBeUndefined()
    const page = { limit: 4, offset: 0 }
    for (const q of ['', 'nueva', 'ñandú'])
      expect(exact(await sql.artists.list(page, { q, sort: 'name' }))).toEqual(
        exact(await memory.artists.list(page, { q, sort: 'name' })),
      )
    expect((await sql.artists.list(page)).total).toBe(NAMES.length)
  })

  test('albums of an unknown artist resolve undefined, without failing others in the same batch', async () => {
    const sql = await replica()
    const artist = await sql.artists.insert({ name: 'Pappo' })
    const outcomes = await Promise.all([
      sql.albums.insert({ artistId: artist.id, name: 'Riff' }),
      sql.albums.insert({ artistId: 77, name: 'Nobody' }),
      sql.albums.insert({ artistId: artist.id, name: 'Pappo’s Blues', year: 1971 }),
    ])
    expect(outcomes.map((album) => album && exact(album))).toEqual([
      { id: 1, artistId: artist.id, name: 'Riff', kind: 'studio' },
      undefined,
      { id: 2, artistId: artist.id, name: 'Pappo’s Blues', year: 1971, kind: 'studio' },
    ])
    expect((await sql.albums.listByArtist(artist.id, { limit: 10, offset: 0 }))?.total).toBe(2)
  })
})

describe.skipIf(skip)('SqlStore: users and credentials', () => {
  const user = (email: string) => ({
    name: 'Ana',
    email,
    passwordHash: '$argon2id$x',
    createdAt: '2025-01-01T00:00:00.000Z',
    disabledAt: null,
  })
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

  test('users: ids, folded email look-up, duplicates refused (also when racing)', async () => {
    const sql = await replica()
    const ana = await sql.users.insert(user('ana@rock.com'))
    expect(ana).toEqual({ id: 1, ...user('ana@rock.com'), credentialsEpoch: 0 })
    expect(await sql.users.get(1)).toEqual(ana)
    expect(await sql.users.get(2)).toBeUndefined()
    expect(await sql.users.findByEmail(' ＡＮＡ＠ｒｏｃｋ．com ')).toEqual(ana)
    expect(await sql.users.findByEmail('bob@rock.com')).toBeUndefined()
    await expect(sql.users.insert(user('ANA@rock.com'))).rejects.toBeInstanceOf(DuplicateEmailError)
    const race = await Promise.allSettled(Array.from({ length: 6 }, () => sql.users.insert(user('eve@rock.com'))))
    expect(race.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(1)
    for (const outcome of race)
      if (outcome.status === 'rejected') expect(outcome.reason).toBeInstanceOf(DuplicateEmailError)
    expect(await sql.isEmpty()).toBe(false)
  })

  test('credentials: insert, find, list in id order, revoke once, purge the dead (far-future dates too)', async () => {
    const sql = await replica()
    const { id: userId } = await sql.users.insert(user('ana@rock.com'))
    const live = await sql.credentials.insert(credential(userId, { expiresAt: '+275760-09-13T00:00:00.000Z' }))
    const expired = await sql.credentials.insert(credential(userId, { expiresAt: '2025-01-02T00:00:00.000Z' }))
    const key = await sql.credentials.insert(credential(userId, { kind: 'key', name: 'ci' }))
    expect(live).toMatchObject({ id: 1, userId, kind: 'token', expiresAt: '+275760-09-13T00:00:00.000Z' })
    expect(await sql.credentials.findByHash(key.hash)).toEqual(key)
    expect(await sql.credentials.findByHash('nope')).toBeUndefined()
    expect((await sql.credentials.listByUser(userId)).map((each) => each.id)).toEqual([1, 2, 3])
    const revoked = await sql.credentials.revoke(key.id, '2025-01-01T10:00:00.000Z')
    expect(revoked).toEqual({ ...key, revokedAt: '2025-01-01T10:00:00.000Z' })
    expect((await sql.credentials.revoke(key.id, '2025-01-01T11:00:00.000Z'))?.revokedAt).toBe(
      '2025-01-01T10:00:00.000Z',
    )
    expect(await sql.credentials.revoke(99, '2025-01-01T11:00:00.000Z')).toBeUndefined()
    expect(await sql.credentials.purge('2025-06-01T00:00:00.000Z')).toBe(2)
    expect(await sql.credentials.listByUser(userId)).toEqual([live])
    expect(await sql.credentials.findByHash(expired.hash)).toBeUndefined()
    // Ids are never reused.
    expect((await sql.credentials.insert(credential(userId))).id).toBe(4)
  })

  test('credential limits: refuse, or revoke the oldest, purging the dead on the way', async () => {
    const sql = await replica()
    const memory = openMemoryStore()
    for (const store of [sql, memory]) {
      const { id: userId } = await store.users.insert(user('ana@rock.com'))
      await store.credentials.insert(credential(userId, { hash: 'dead', revokedAt: '2024-01-01T00:00:00.000Z' }))
      await store.credentials.insert(credential(userId, { hash: 'a', kind: 'key' }), { max: 2, whenFull: 'refuse' })
      await store.credentials.insert(credential(userId, { hash: 'b', kind: 'key' }), { max: 2, whenFull: 'refuse' })
      await expect(
        store.credentials.insert(credential(userId, { hash: 'c', kind: 'key' }), { max: 2, whenFull: 'refuse' }),
      ).rejects.toBeInstanceOf(CredentialLimitError)
      await store.credentials.insert(credential(userId, { hash: 't1' }), { max: 1, whenFull: 'revoke-oldest' })
      await store.credentials.insert(credential(userId, { hash: 't2', createdAt: '2025-01-01T01:00:00.000Z' }), {
        max: 1,
        whenFull: 'revoke-oldest',
      })
    }
    const strip = (list: readonly Credential[]) => list.map(({ id, hash, revokedAt }) => ({ id, hash, revokedAt }))
    const got = strip(await sql.credentials.listByUser(1))
    expect(got).toEqual(strip(await memory.credentials.listByUser(1)))
    expect(got.map((each) => each.hash)).toEqual(['a', 'b', 't1', 't2'])
    expect(got[2]?.revokedAt).toBe('2025-01-01T01:00:00.000Z')
  })

  test('noteUse: shown at once, saved with the next write or on close, never a write of its own', async () => {
    const database = await pg.freshDatabase()
    const sql = await replica(database, { saveUsesEveryMs: 60_000 })
    const { id: userId } = await sql.users.insert(user('ana@rock.com'))
    const token = await sql.credentials.insert(credential(userId))
    const db = inspect(database)
    sql.credentials.noteUse(token.id, '2025-02-01T00:00:00.000Z')
    expect((await sql.credentials.findByHash(token.hash))?.lastUsedAt).toBe('2025-02-01T00:00:00.000Z')
    const [before] = await db`SELECT last_used_at FROM rl_credentials WHERE id = ${token.id}`
    expect(before.last_used_at).toBeNull()
    await sql.artists.insert({ name: 'Fito Páez' })
    const [after] = await db`SELECT last_used_at FROM rl_credentials WHERE id = ${token.id}`
    expect(after.last_used_at).toBe('2025-02-01T00:00:00.000Z')
    sql.credentials.noteUse(token.id, '2025-03-01T00:00:00.000Z')
    await sql.close()
    const reopened = await replica(database)
    expect((await reopened.credentials.findByHash(token.hash))?.lastUsedAt).toBe('2025-03-01T00:00:00.000Z')
  })

  test('noteUse: saved by the timer when no write comes', async () => {
    const database = await pg.freshDatabase()
    const sql = await replica(database, { saveUsesEveryMs: 50 })
    const { id: userId } = await sql.users.insert(user('ana@rock.com'))
    const token = await sql.credentials.insert(credential(userId))
    sql.credentials.noteUse(token.id, '2025-02-01T00:00:00.000Z')
    // Nothing else is asked of the store: the row changes once the timer has fired (asked until then, for 10 s).
    const look = inspect(database)
    const lastUsed = async () =>
      (await look`SELECT last_used_at FROM rl_credentials WHERE id = ${token.id}`)[0]?.last_used_at
    const deadline = Date.now() + 10_000
    while ((await lastUsed()) !== '2025-02-01T00:00:00.000Z' && Date.now() < deadline) await Bun.sleep(20)
    expect(await lastUsed()).toBe('2025-02-01T00:00:00.000Z')
  })
})

const CATALOGUE: CatalogueEntry[] = [
  {
    name: 'Charly García',
    band: 'Serú Girán',
    albums: [{ name: 'Clics modernos', year: 1983 }, { name: 'Piano Bar' }],
  },
  { name: 'Spinetta', image: null, albums: [{ name: 'Artaud', image: '/own.svg' }] },
  { name: 'Fito Páez', image: '/fito.svg', albums: [] },
]

describe.skipIf(skip)('SqlStore: seeding, snapshot and restore', () => {
  test('load: ids from the counters, covers from those ids, ifNeverWritten on a filled store loads nothing', async () => {
    const sql = await replica()
    expect(await sql.isEmpty()).toBe(true)
    const cover = (kind: 'artist' | 'album', id: number) => `/covers/${kind}/${id}.svg`
    expect(await sql.load(CATALOGUE, { cover, ifNeverWritten: true })).toEqual({ artists: 3, albums: 3 })
    expect(await sql.isEmpty()).toBe(false)
    expect(exact((await sql.artists.list({ limit: 10, offset: 0 })).items)).toEqual([
      { id: 1, name: 'Charly García', band: 'Serú Girán', image: '/covers/artist/1.svg' },
      { id: 2, name: 'Spinetta' },
      { id: 3, name: 'Fito Páez', image: '/fito.svg' },
    ])
    expect(exact(await sql.albums.listByArtist(1, { limit: 10, offset: 0 }, { sort: 'year' }))).toEqual({
      items: [
        { id: 1, artistId: 1, name: 'Clics modernos', year: 1983, image: '/covers/album/1.svg', kind: 'studio' },
        { id: 2, artistId: 1, name: 'Piano Bar', image: '/covers/album/2.svg', kind: 'studio' },
      ],
      total: 2,
    })
    expect(await sql.load(CATALOGUE, { ifNeverWritten: true })).toBeUndefined()
    expect(await sql.load(CATALOGUE)).toEqual({ artists: 3, albums: 3 })
    expect((await sql.artists.insert({ name: 'Next' })).id).toBe(7)
    expect((await sql.artists.list({ limit: 1, offset: 0 })).total).toBe(7)
  })

  test('ifNeverWritten: a database whose seed failed after drawing ids is still new, and is seeded', async () => {
    const database = await emptyDatabase()
    const sql = await replica(database)
    // What a seed whose transaction failed leaves: ids drawn from every sequence, no row.
    for (const sequence of ['rl_artist_ids', 'rl_album_ids', 'rl_user_ids', 'rl_credential_ids'])
      await inspect(database).unsafe(`SELECT nextval('${sequence}')`)
    expect(await sql.load(CATALOGUE, { ifNeverWritten: true })).toEqual({ artists: 3, albums: 3 })
  })

  test('snapshot, then writes, then restore: records and counters as they were', async () => {
    const sql = await replica()
    await sql.load(CATALOGUE)
    const { id: userId } = await sql.users.insert({
      name: 'A',
      email: 'a@b.co',
      passwordHash: 'h',
      createdAt: 'now',
      disabledAt: null,
    })
    const before = exact(await sql.artists.list({ limit: 10, offset: 0 }, { sort: 'name' }))
    const handle = await sql.snapshot()
    await sql.artists.insert({ name: 'Intruso' })
    await sql.albums.insert({ artistId: 1, name: 'Intruso' })
    await sql.artists.replace({ id: 1, name: 'Renamed' })
    await sql.users.insert({ name: 'B', email: 'b@b.co', passwordHash: 'h', createdAt: 'now', disabledAt: null })
    await sql.restore(handle)
    expect(exact(await sql.artists.list({ limit: 10, offset: 0 }, { sort: 'name' }))).toEqual(before)
    expect((await sql.albums.listByArtist(1, { limit: 10, offset: 0 }))?.total).toBe(2)
    expect(await sql.users.findByEmail('b@b.co')).toBeUndefined()
    expect((await sql.users.get(userId))?.email).toBe('a@b.co')
    expect((await sql.artists.insert({ name: 'After' })).id).toBe(4)
    expect(
      (await sql.users.insert({ name: 'B', email: 'b@b.co', passwordHash: 'h', createdAt: 'now', disabledAt: null }))
        .id,
    ).toBe(2)
    // Again: the snapshot restores as often as asked.
    await sql.restore(handle)
    expect((await sql.artists.list({ limit: 10, offset: 0 })).total).toBe(3)
  })
})

describe.skipIf(skip)('SqlStore: two replicas over one database', () => {
  test('concurrent creates on both never share an id, and the totals add up', async () => {
    const [a, b] = await twoReplicas()
    const created = await Promise.all(
      Array.from({ length: 60 }, (_, i) => (i % 2 ? a : b).artists.insert({ name: `Artista ${i}` })),
    )
    const ids = created.map((artist) => artist.id)
    expect(new Set(ids).size).toBe(60)
    expect(Math.max(...ids)).toBe(60)
    expect((await a.artists.list({ limit: 1, offset: 0 })).total).toBe(60)
    const albums = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        (i % 2 ? b : a).albums.insert({ artistId: 1 + (i % 3), name: `Disco ${i}` }),
      ),
    )
    expect(new Set(albums.map((album) => album?.id)).size).toBe(40)
    const totals = await Promise.all([1, 2, 3].map((id) => b.albums.listByArtist(id, { limit: 1, offset: 0 })))
    expect(totals.map((slice) => slice?.total)).toEqual([14, 13, 13])
  })

  test('a list page A read before is not served stale after a write on B: insert, replace, load, restore', async () => {
    const [a, b] = await twoReplicas()
    await a.load(CATALOGUE)
    const reset = await a.snapshot()
    const page = { limit: 10, offset: 0 }
    const names = async (query = {}) => (await a.artists.list(page, query)).items.map((artist) => artist.name)
    const first = await a.artists.list(page)
    // Nothing written meanwhile: the very same page (so the HTTP layer answers with the bytes it already has).
    expect(await a.artists.list(page)).toBe(first)
    const searched = await names({ q: 'extra' })
    expect(searched).toEqual([])

    const added = await b.artists.insert({ name: 'Extra' })
    expect((await a.artists.list(page)).total).toBe(4)
    expect(await names()).toContain('Extra')
    expect(await names({ q: 'extra' })).toEqual(['Extra'])

    await b.artists.replace({ ...added, name: 'Extra, renamed' })
    expect(await names()).toContain('Extra, renamed')
    expect(await names({ q: 'extra' })).toEqual(['Extra, renamed'])
    expect(await names({ sort: 'name' })).toContain('Extra, renamed')

    await b.load([{ name: 'Loaded', image: null, albums: [] }])
    expect(await names()).toContain('Loaded')

    await b.restore(reset)
    expect(await names()).toEqual(CATALOGUE.map((entry) => entry.name))
    expect(await names({ q: 'extra' })).toEqual([])
    // An album changes no artist page: the same objects again.
    const before = await a.artists.list(page)
    await b.albums.insert({ artistId: 1, name: 'Disco' })
    expect(await a.artists.list(page)).toBe(before)
  })

  test('a credential revoked on A is revoked on B at once', async () => {
    const [a, b] = await twoReplicas()
    const { id: userId } = await a.users.insert({
      name: 'A',
      email: 'a@b.co',
      passwordHash: 'h',
      createdAt: 'now',
      disabledAt: null,
    })
    const token = await a.credentials.insert({
      userId,
      kind: 'token',
      name: null,
      hash: 'secret-hash',
      prefix: 'rl_tok_',
      createdAt: '2025-01-01T00:00:00.000Z',
      expiresAt: '2025-01-02T00:00:00.000Z',
      lastUsedAt: null,
      revokedAt: null,
    })
    expect((await b.credentials.findByHash('secret-hash'))?.revokedAt).toBeNull()
    await a.credentials.revoke(token.id, '2025-01-01T01:00:00.000Z')
    expect((await b.credentials.findByHash('secret-hash'))?.revokedAt).toBe('2025-01-01T01:00:00.000Z')
    expect(await b.users.findByEmail('A@B.CO')).toMatchObject({ id: userId })
  })

  test('eight replicas seeding one empty database at once: exactly one loads', async () => {
    const database = await pg.freshDatabase()
    const replicas = await Promise.all(Array.from({ length: 8 }, () => replica(database)))
    const outcomes = await Promise.all(replicas.map((store) => store.load(CATALOGUE, { ifNeverWritten: true })))
    expect(outcomes.filter((outcome) => outcome !== undefined)).toEqual([{ artists: 3, albums: 3 }])
    expect((await replicas[0]?.artists.list({ limit: 100, offset: 0 }))?.total).toBe(3)
    const [count] = await inspect(database)`SELECT count(*)::int AS n FROM rl_artists`
    expect(count.n).toBe(3)
  })

  test('the reset point taken on A is what a restore on B brings back, and B asking later gets the one A took', async () => {
    const [a, b] = await twoReplicas()
    await a.load(CATALOGUE)
    const handle = await a.resetPoint()
    await b.artists.insert({ name: 'Extra' })
    // B asks for the reset point after a write: it is A's, taken first.
    const handleB = await b.resetPoint()
    await a.artists.insert({ name: 'Extra 2' })
    await b.restore(handleB)
    expect((await a.artists.list({ limit: 10, offset: 0 })).total).toBe(3)
    await a.artists.insert({ name: 'Extra 3' })
    await b.restore(handle)
    expect((await b.artists.list({ limit: 10, offset: 0 })).items.map((artist) => artist.name)).toEqual(
      CATALOGUE.map((entry) => entry.name),
    )
  })

  test('a credential limit holds across replicas under concurrency', async () => {
    const [a, b] = await twoReplicas()
    const { id: userId } = await a.users.insert({
      name: 'A',
      email: 'a@b.co',
      passwordHash: 'h',
      createdAt: 'now',
      disabledAt: null,
    })
    const attempt = (store: Store, i: number, whenFull: 'refuse' | 'revoke-oldest') =>
      store.credentials.insert(
        {
          userId,
          kind: whenFull === 'refuse' ? 'key' : 'token',
          name: null,
          hash: `${whenFull}-${i}`,
          prefix: 'rl_key_',
          createdAt: '2025-01-01T00:00:00.000Z',
          expiresAt: null,
          lastUsedAt: null,
          revokedAt: null,
        },
        { max: 3, whenFull },
      )
    const refused = await Promise.allSettled(Array.from({ length: 16 }, (_, i) => attempt(i % 2 ? a : b, i, 'refuse')))
    expect(refused.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(3)
    for (const outcome of refused)
      if (outcome.status === 'rejected') expect(outcome.reason).toBeInstanceOf(CredentialLimitError)
    await Promise.all(Array.from({ length: 16 }, (_, i) => attempt(i % 2 ? a : b, i, 'revoke-oldest')))
    const tokens = (await b.credentials.listByUser(userId)).filter((each) => each.kind === 'token')
    expect(tokens.filter((each) => each.revokedAt === null)).toHaveLength(3)
  })
})

describe.skipIf(skip)('SqlStore: batching', () => {
  test('200 concurrent inserts on one replica take far fewer transactions, each acknowledged row stored', async () => {
    const database = await pg.freshDatabase()
    const sql = await replica(database)
    const artist = await sql.artists.insert({ name: 'Base' })
    const before = sql.batchTransactions
    const created = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        i % 2 ? sql.artists.insert({ name: `Artista ${i}` }) : sql.albums.insert({ artistId: artist.id, name: `${i}` }),
      ),
    )
    const transactions = sql.batchTransactions - before
    expect(transactions).toBeGreaterThan(0)
    expect(transactions).toBeLessThanOrEqual(10)
    const artistIds = created.filter((_, i) => i % 2).map((record) => record?.id)
    const albumIds = created.filter((_, i) => i % 2 === 0).map((record) => record?.id)
    expect(new Set(artistIds).size).toBe(100)
    expect(new Set(albumIds).size).toBe(100)
    const db = inspect(database)
    const [rows] =
      await db`SELECT (SELECT count(*)::int FROM rl_artists) AS artists, (SELECT count(*)::int FROM rl_albums) AS albums`
    expect(rows).toEqual({ artists: 101, albums: 100 })
    expect((await sql.artists.list({ limit: 1, offset: 0 })).total).toBe(101)
    expect((await sql.albums.listByArtist(artist.id, { limit: 1, offset: 0 }))?.total).toBe(100)
    for (const record of created)
      expect(record && (await ('artistId' in record ? sql.albums : sql.artists).get(record.id))).toEqual(record)
  })

  test('a record the database refuses fails alone: the rest of its batch is stored', async () => {
    const sql = await replica()
    const outcomes = await Promise.allSettled([
      sql.artists.insert({ name: 'Uno' }),
      sql.artists.insert({ name: 'Dos' }),
      sql.artists.insert({ name: 'Tres' }),
      sql.artists.insert({ name: 'Nul\u0000' }),
      sql.artists.insert({ name: 'Cuatro' }),
    ])
    expect(outcomes.map((outcome) => outcome.status)).toEqual([
      'fulfilled',
      'fulfilled',
      'fulfilled',
      'rejected',
      'fulfilled',
    ])
    const names = (await sql.artists.list({ limit: 10, offset: 0 })).items.map((artist) => artist.name)
    expect(names.toSorted()).toEqual(['Cuatro', 'Dos', 'Tres', 'Uno'])
  })
})

describe.skipIf(skip)('SqlStore: faults', () => {
  test('database stopped: reads, writes and check fail fast with DatabaseUnavailableError; back, it serves again', async () => {
    const database = await pg.freshDatabase()
    const url = `postgres://rl:s3cret@127.0.0.1:${pg.port}/${database}`
    const sql = await openSqlStore(url, { pool: 3, waitMs: 3000 })
    opened.push(sql)
    const kept = await sql.artists.insert({ name: 'Antes' })
    pg.stop('fast')
    try {
      for (const attempt of [
        () => sql.artists.get(kept.id),
        () => sql.artists.list({ limit: 10, offset: 0 }),
        () => sql.artists.insert({ name: 'Durante' }),
        () => sql.users.findByEmail('a@b.co'),
        () => sql.check(),
      ]) {
        const started = Date.now()
        const error = await attempt().catch((caught: unknown) => caught)
        expect(Date.now() - started).toBeLessThan(4000)
        expect(error).toBeInstanceOf(DatabaseUnavailableError)
        expect((error as Error).message).toContain(`127.0.0.1:${pg.port}, database ${database}`)
        expect((error as Error).message).not.toContain('s3cret')
      }
    } finally {
      pg.start()
    }
    // No reopening: the pool connects again by itself.
    let served: unknown
    const deadline = Date.now() + 10_000
    while (Date.now() < deadline) {
      served = await sql.artists.get(kept.id).catch((error: unknown) => error)
      if (!(served instanceof Error)) break
      await Bun.sleep(100)
    }
    expect(served).toEqual(kept)
    await sql.check()
    expect((await sql.artists.insert({ name: 'Después' })).id).toBe(2)
    expect((await sql.artists.list({ limit: 10, offset: 0 })).total).toBe(2)
  })

  test('a statement past the statement timeout fails with DatabaseUnavailableError, and nothing is half-written', async () => {
    const database = await pg.freshDatabase()
    const sql = await replica(database, { statementTimeoutMs: 300 })
    const db = inspect(database)
    const error = await db.begin(async (tx) => {
      // Holds every stripe of the artists' tally, as a stuck reset elsewhere would.
      await tx`SELECT stripe FROM rl_tallies FOR UPDATE`
      const started = Date.now()
      const caught = await sql.artists.insert({ name: 'Esperando' }).catch((reason: unknown) => reason)
      expect(Date.now() - started).toBeLessThan(3000)
      return caught
    })
    expect(error).toBeInstanceOf(DatabaseUnavailableError)
    expect((error as Error).message).toContain('statement timeout')
    expect((await sql.artists.list({ limit: 10, offset: 0 })).total).toBe(0)
    expect(await sql.artists.get(1)).toBeUndefined()
  })

  test('an unreachable database at open: DatabaseUnavailableError naming the target, not the password', async () => {
    const server = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
    const port = server.port
    server.stop(true)
    const error = await openSqlStore(`postgres://rl:s3cret@127.0.0.1:${port}/db`, { waitMs: 300 }).catch(
      (caught: unknown) => caught,
    )
    expect(error).toBeInstanceOf(DatabaseUnavailableError)
    expect((error as Error).message).toContain(`127.0.0.1:${port}`)
    expect((error as Error).message).not.toContain('s3cret')
  })
})
