/**
 * `albums.replace` and `albums.remove` in every backend: the in-memory document store, a JSON data file (its journal
 * replayed after a crash, and its compaction) and PostgreSQL. Each is conditional like `artists.replace`, announces
 * its change, keeps the artist's count of albums (`MAX_ALBUMS_PER_ARTIST`) right and never touches another artist's
 * album.
 */
import { describe, expect, test } from 'bun:test'
import { albumTag, StaleVersionError } from '../../src/store/entity-tag.ts'
import { openJsonFileStore } from '../../src/store/json-file/json-file.ts'
import { AlbumLimitError, MAX_ALBUMS_PER_ARTIST, type Store } from '../../src/store/store.ts'
import { announced } from '../support/announced.ts'
import { everyStore } from '../support/every-store.ts'

const { backends, opened, dataFile, crashCopy } = everyStore()

/** Artist 1 with albums 1 (Artaud, 1973), 2 (Pescado 2, 1973) and 3 (Alma de diamante, 1980); artist 2 with album 4. */
async function seeded(open: () => Promise<Store>) {
  const store = await open()
  opened.push(store)
  await store.load([
    {
      name: 'Spinetta',
      image: null,
      albums: [
        { name: 'Artaud', year: 1973, image: null },
        { name: 'Pescado 2', year: 1973, image: null },
        { name: 'Alma de diamante', year: 1980, image: null },
      ],
    },
    { name: 'Charly', image: null, albums: [{ name: 'Clics modernos', year: 1983, image: null }] },
  ])
  return store
}

const names = async (store: Store, sort?: 'name' | 'year') =>
  (await store.albums.listByArtist(1, { limit: 100, offset: 0 }, { sort }))?.items.map((album) => album.name)

describe.each(backends)('albums.replace and albums.remove over %s', (_, skipped, open) => {
  test.skipIf(skipped)('replace changes every field but id and artist; the lists follow', async () => {
    const store = await seeded(open)
    expect(await names(store, 'name')).toEqual(['Alma de diamante', 'Artaud', 'Pescado 2'])
    const replaced = await store.albums.replace({ id: 2, artistId: 1, name: 'Durazno sangrando' })
    // Replaced without a kind, it is a studio album.
    expect(replaced).toEqual({
      id: 2,
      artistId: 1,
      name: 'Durazno sangrando',
      year: undefined,
      image: undefined,
      kind: 'studio',
    })
    expect(await store.albums.get(2)).toEqual(replaced as never)
    expect(await names(store, 'name')).toEqual(['Alma de diamante', 'Artaud', 'Durazno sangrando'])
    // An album without a year comes last in year order.
    expect(await names(store, 'year')).toEqual(['Artaud', 'Alma de diamante', 'Durazno sangrando'])
    const found = await store.albums.listByArtist(1, { limit: 10, offset: 0 }, { q: 'durazno' })
    expect(found?.items.map((album) => album.id)).toEqual([2])
  })

  test.skipIf(skipped)("neither touches another artist's album, nor an unknown one", async () => {
    const store = await seeded(open)
    expect(await store.albums.replace({ id: 4, artistId: 1, name: 'Mine now' })).toBeUndefined()
    expect(await store.albums.remove(1, 4)).toBeUndefined()
    expect(await store.albums.replace({ id: 99, artistId: 1, name: 'Nadie' })).toBeUndefined()
    expect(await store.albums.remove(1, 99)).toBeUndefined()
    expect(await store.albums.remove(99, 1)).toBeUndefined()
    expect((await store.albums.get(4))?.name).toBe('Clics modernos')
  })

  test.skipIf(skipped)(
    'remove takes the album out of reads, lists and counts; its id is never given again',
    async () => {
      const store = await seeded(open)
      expect(await names(store, 'name')).toHaveLength(3)
      const removed = await store.albums.remove(1, 2)
      expect(removed).toMatchObject({ id: 2, artistId: 1, name: 'Pescado 2' })
      expect(await store.albums.get(2)).toBeUndefined()
      expect(await names(store)).toEqual(['Artaud', 'Alma de diamante'])
      expect(await names(store, 'name')).toEqual(['Alma de diamante', 'Artaud'])
      expect((await store.albums.listByArtist(1, { limit: 1, offset: 0 }))?.total).toBe(2)
      expect(await store.albums.remove(1, 2)).toBeUndefined()
      expect((await store.albums.insert({ artistId: 1, name: 'Nuevo' }))?.id).toBe(5)
    },
  )

  test.skipIf(skipped)('with a condition, only while it holds for the album as stored', async () => {
    const store = await seeded(open)
    const tag = albumTag((await store.albums.get(1)) as never)
    const first = await store.albums.replace({ id: 1, artistId: 1, name: 'Artaud (remastered)' }, { ifMatch: [tag] })
    expect(first?.name).toBe('Artaud (remastered)')
    const stale = store.albums.replace({ id: 1, artistId: 1, name: 'Lost' }, { ifMatch: [tag] })
    await expect(stale).rejects.toBeInstanceOf(StaleVersionError)
    await expect(store.albums.remove(1, 1, { ifMatch: [tag] })).rejects.toBeInstanceOf(StaleVersionError)
    await expect(store.albums.remove(1, 1, { ifNoneMatch: '*' })).rejects.toBeInstanceOf(StaleVersionError)
    expect((await store.albums.get(1))?.name).toBe('Artaud (remastered)')
    expect(await store.albums.remove(1, 1, { ifMatch: [albumTag(first as never)] })).toMatchObject({ id: 1 })
  })

  test.skipIf(skipped)(
    'each change is announced: album-updated with the new album, album-deleted with the old',
    async () => {
      const store = await seeded(open)
      const changes = await announced(
        store,
        async () => {
          await store.albums.replace({ id: 1, artistId: 1, name: 'Artaud', year: 1974 })
          await store.albums.remove(1, 3)
        },
        2,
      )
      expect(changes).toEqual([
        {
          kind: 'album-updated',
          album: { id: 1, artistId: 1, name: 'Artaud', year: 1974, image: undefined, kind: 'studio' },
        },
        {
          kind: 'album-deleted',
          album: { id: 3, artistId: 1, name: 'Alma de diamante', year: 1980, image: undefined, kind: 'studio' },
        },
      ] as never)
    },
  )

  test.skipIf(skipped)('a full artist takes an album again once one is removed', async () => {
    const store = await open()
    opened.push(store)
    const albums = Array.from({ length: MAX_ALBUMS_PER_ARTIST }, (_, i) => ({ name: `Disco ${i}`, image: null }))
    await store.load([{ name: 'Prolific', image: null, albums }])
    await expect(store.albums.insert({ artistId: 1, name: 'Otra' })).rejects.toBeInstanceOf(AlbumLimitError)
    await store.albums.remove(1, 7)
    expect(await store.albums.insert({ artistId: 1, name: 'Otra' })).toMatchObject({ artistId: 1, name: 'Otra' })
    await expect(store.albums.insert({ artistId: 1, name: 'Una más' })).rejects.toBeInstanceOf(AlbumLimitError)
    expect((await store.albums.listByArtist(1, { limit: 1, offset: 0 }))?.total).toBe(MAX_ALBUMS_PER_ARTIST)
  })
})

describe('over a JSON data file', () => {
  test('a replace and a remove survive a crash (the journal) and a clean close (the data file)', async () => {
    const file = dataFile()
    const store = await seeded(() => openJsonFileStore(file))
    await store.albums.replace({ id: 1, artistId: 1, name: 'Artaud', year: 1974 })
    await store.albums.remove(1, 2)
    // A copy of the data file and journal while the store is open stands in for what a killed process leaves.
    const copy = crashCopy(file)
    for (const path of [copy, file]) {
      if (path === file) await store.close()
      const again = await openJsonFileStore(path)
      opened.push(again)
      expect(await names(again)).toEqual(['Artaud', 'Alma de diamante'])
      expect((await again.albums.get(1))?.year).toBe(1974)
      expect(await again.albums.get(2)).toBeUndefined()
      expect((await again.albums.insert({ artistId: 1, name: 'Nuevo' }))?.id).toBe(5)
      await again.close()
    }
  })

  test('a removal after a replace in one group commit leaves the album removed after replay', async () => {
    const file = dataFile()
    const store = await seeded(() => openJsonFileStore(file))
    await Promise.all([
      store.albums.replace({ id: 2, artistId: 1, name: 'Renamed' }),
      store.albums.remove(1, 2),
      store.albums.insert({ artistId: 1, name: 'Nuevo' }),
    ])
    const copy = crashCopy(file)
    const again = await openJsonFileStore(copy)
    opened.push(again)
    expect(await again.albums.get(2)).toBeUndefined()
    expect(await names(again)).toEqual(['Artaud', 'Alma de diamante', 'Nuevo'])
  })
})
