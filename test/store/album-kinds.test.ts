import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { SQL } from 'bun'
import { openJsonFileStore } from '../../src/store/json-file/json-file.ts'
import { migrate } from '../../src/store/sql/migrate.ts'
import { LATEST_VERSION, MIGRATIONS } from '../../src/store/sql/migrations.ts'
import { asService, testApp } from '../helpers.ts'
import { removeDir, tempDir } from '../support/binary.ts'
import { skipWithoutPostgres, type TestPostgres, testPostgres } from '../support/postgres.ts'

// The kind of each album through the API, over this run's backend (ROCK_LEGENDS_TEST_BACKEND): served for every
// album, `studio` when a write leaves it out, filtered by `?kind=`; and albums stored before kinds were kept, in a
// data file or a database of migration 10, read as studio albums.

const names = (json: { data: { name: string }[] }) => json.data.map((each) => each.name)

async function withAlbums() {
  const context = testApp()
  const send = (method: string, path: string, body?: unknown) =>
    context.call(path, { method, body, headers: asService })
  await send('POST', '/api/v1/artists', { name: 'Charly García' })
  for (const body of [
    { name: 'Vida', year: 1972 },
    { name: 'Adiós Sui Generis', year: 1975, kind: 'live' },
    { name: 'Tango', year: 1986, kind: 'ep' },
    { name: 'No llores por mí, Argentina', year: 1982, kind: 'live' },
    { name: 'Pubis angelical', year: 1982, kind: 'soundtrack', image: null },
  ])
    expect((await send('POST', '/api/v1/artists/1/albums', body)).status).toBe(201)
  return { ...context, send }
}

describe('the kind of an album', () => {
  test('is served for every album: the one sent, or studio when left out or null', async () => {
    const { call, send } = await withAlbums()
    const { json } = await call('/api/v1/artists/1/albums')
    expect(json.data.map((album: { kind: string }) => album.kind)).toEqual([
      'studio',
      'live',
      'ep',
      'live',
      'soundtrack',
    ])
    const nulled = await send('POST', '/api/v1/artists/1/albums', { name: 'Clics modernos', kind: null })
    expect(nulled.json.kind).toBe('studio')
  })

  test.each([
    ['kind=live', ['Adiós Sui Generis', 'No llores por mí, Argentina'], 2],
    ['kind=live&sort=-year', ['No llores por mí, Argentina', 'Adiós Sui Generis'], 2],
    ['kind=studio', ['Vida'], 1],
    ['kind=compilation', [], 0],
    ['kind=live&year_from=1980', ['No llores por mí, Argentina'], 1],
    ['kind=ep&q=tan', ['Tango'], 1],
    ['kind=live&limit=1', ['Adiós Sui Generis'], 2],
  ])('filters the list: %s → %p, counted in meta.total', async (query, expected, total) => {
    const { call } = await withAlbums()
    const { status, json } = await call(`/api/v1/artists/1/albums?${query}`)
    expect(status).toBe(200)
    expect(names(json)).toEqual(expected)
    expect(json.meta.total).toBe(total)
  })

  test('meta.next keeps the kind', async () => {
    const { call } = await withAlbums()
    const first = await call('/api/v1/artists/1/albums?kind=live&limit=1')
    expect(first.json.meta.next).toBe('/api/v1/artists/1/albums?limit=1&offset=1&kind=live')
    expect(names((await call(first.json.meta.next)).json)).toEqual(['No llores por mí, Argentina'])
  })

  test.each(['bootleg', 'LIVE', ''])('kind=%p is a 400 problem naming the parameter and the kinds', async (kind) => {
    const { call } = await withAlbums()
    const { status, json } = await call(`/api/v1/artists/1/albums?kind=${kind}`)
    expect(status).toBe(400)
    expect(json.errors).toEqual([{ parameter: 'kind', detail: expect.stringContaining('one of studio, live, ep') }])
  })

  test('a body with an unknown kind is a 400 problem pointing at it; nothing is added', async () => {
    const { call, send } = await withAlbums()
    const refused = await send('POST', '/api/v1/artists/1/albums', { name: 'X', kind: 'bootleg' })
    expect(refused.status).toBe(400)
    expect(refused.json.errors).toEqual([{ pointer: '/kind', detail: expect.stringContaining('one of studio, live') }])
    expect((await call('/api/v1/artists/1/albums')).json.meta.total).toBe(5)
  })

  test('PUT sets it, or makes the album a studio album when left out; PATCH changes it, null makes it studio', async () => {
    const { send, call } = await withAlbums()
    const url = '/api/v1/artists/1/albums/1'
    expect((await send('PUT', url, { name: 'Vida', year: 1972, kind: 're-recordings' })).json.kind).toBe(
      're-recordings',
    )
    expect((await call(url)).json.kind).toBe('re-recordings')
    expect((await send('PUT', url, { name: 'Vida', year: 1972 })).json.kind).toBe('studio')
    expect((await send('PATCH', url, { kind: 'compilation' })).json).toMatchObject({
      name: 'Vida',
      kind: 'compilation',
    })
    expect((await send('PATCH', url, { year: 1973 })).json).toMatchObject({ year: 1973, kind: 'compilation' })
    expect((await send('PATCH', url, { kind: null })).json.kind).toBe('studio')
    expect((await send('PATCH', url, { kind: 'bootleg' })).json.errors[0].pointer).toBe('/kind')
    expect(names((await call('/api/v1/artists/1/albums?kind=studio')).json)).toEqual(['Vida'])
  })

  test('the history records the kind of each album written', async () => {
    const { send, call } = await withAlbums()
    await send('PATCH', '/api/v1/artists/1/albums/3', { kind: 'compilation' })
    const [latest] = (await call('/api/v1/artists/1/history')).json.data
    expect(latest.album).toMatchObject({ name: 'Tango', kind: 'compilation' })
  })
})

let dir: string
beforeAll(() => {
  dir = tempDir()
})
afterAll(() => removeDir(dir))

describe('a data file written before albums had a kind', () => {
  test('serves its albums, in the file and the journal, as studio albums, and keeps a kind written later', async () => {
    const file = join(dir, 'old.json')
    await Bun.write(
      file,
      JSON.stringify({
        version: 1,
        counters: { artists: 1, albums: 1, users: 0, credentials: 0 },
        artists: [{ id: 1, name: 'Moris' }],
        albums: [{ id: 1, artistId: 1, name: 'Las obras de Moris', year: 1981 }],
        users: [],
        credentials: [],
      }),
    )
    const entry = {
      counters: { artists: 1, albums: 2, users: 0, credentials: 0 },
      albums: [{ id: 2, artistId: 1, name: '30 minutos de vida', year: 1970 }],
    }
    await Bun.write(`${file}.journal`, `${JSON.stringify(entry)}\n`)
    const store = await openJsonFileStore(file)
    try {
      const { call } = testApp(store)
      const { json } = await call('/api/v1/artists/1/albums')
      expect(json.data.map((album: { kind: string }) => album.kind)).toEqual(['studio', 'studio'])
      const patched = await call('/api/v1/artists/1/albums/1', {
        method: 'PATCH',
        body: { kind: 'live' },
        headers: asService,
      })
      expect(patched.json.kind).toBe('live')
    } finally {
      await store.close()
    }
    const reopened = await openJsonFileStore(file)
    expect((await reopened.albums.get(1))?.kind).toBe('live')
    expect((await reopened.albums.get(2))?.kind).toBe('studio')
    await reopened.close()
  })
})

const skip = skipWithoutPostgres()
let pg: TestPostgres
beforeAll(async () => {
  if (!skip) pg = await testPostgres()
})

describe.skipIf(skip)('the SQL store', () => {
  test('migration 11 makes the albums of a database of migration 10 studio albums, and refuses an unknown kind', async () => {
    const database = await pg.freshDatabase()
    const sql = new SQL({ url: pg.url(database), max: 1 })
    try {
      await migrate(sql, { owner: 'release-10', migrations: MIGRATIONS.slice(0, 10) })
      await sql`INSERT INTO rl_artists (id, name, name_key, folded_name, folded_band, album_count)
        VALUES (1, 'Moris', '\\x00', 'moris', '', 1)`
      await sql`INSERT INTO rl_albums (id, artist_id, name, year, name_key, folded_name)
        VALUES (1, 1, 'Las obras de Moris', 1981, '\\x00', 'las obras de moris')`
      const { openSqlStore } = await import('../../src/store/sql/sql-store.ts')
      const store = await openSqlStore(pg.url(database), { pool: 2 })
      try {
        expect((await sql`SELECT version FROM rl_schema`)[0].version).toBe(LATEST_VERSION)
        expect((await store.albums.get(1))?.kind).toBe('studio')
        const { call } = testApp(store)
        expect(names((await call('/api/v1/artists/1/albums?kind=studio')).json)).toEqual(['Las obras de Moris'])
        expect(
          (await call('/api/v1/artists/1/albums/1', { method: 'PATCH', body: { kind: 'live' }, headers: asService }))
            .json.kind,
        ).toBe('live')
        expect(names((await call('/api/v1/artists/1/albums?kind=live')).json)).toEqual(['Las obras de Moris'])
        await expect(sql`UPDATE rl_albums SET kind = 'bootleg' WHERE id = 1`).rejects.toThrow('rl_albums_kind_check')
      } finally {
        await store.close()
      }
    } finally {
      await sql.close()
    }
  })
})
