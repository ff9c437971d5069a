import { describe, expect, test } from 'bun:test'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import legends from '../../data/legends.json' with { type: 'json' }
import type { Album } from '../../src/model/album.ts'
import { parseCatalogue, seedStore } from '../../src/seed/seed.ts'
import { openMemoryStore } from '../../src/store/document/memory.ts'
import { openJsonFileStore } from '../../src/store/json-file/json-file.ts'
import type { Store } from '../../src/store/store.ts'
import { removeDir, tempDir } from '../support/binary.ts'
import { countingStore } from '../support/stores.ts'

const everything = { limit: Number.MAX_SAFE_INTEGER, offset: 0 }

/** Every artist and album a store holds, in id order. */
async function contents(store: Store) {
  const artists = (await store.artists.list(everything)).items
  const albums: Album[] = []
  for (const artist of artists) albums.push(...((await store.albums.listByArtist(artist.id, everything))?.items ?? []))
  return structuredClone({ artists, albums })
}

describe('seedStore with the built-in catalogue', () => {
  test('fills an empty store with every artist and album, in one durable write', async () => {
    const { store, state } = countingStore()
    expect(await seedStore(store, true)).toEqual({ seeded: true, artists: 32, albums: 307 })
    expect(state.writes).toBe(1)
    expect((await store.artists.list(everything)).total).toBe(32)
  })

  test('assigns the same ids on every run: artists, then albums, in file order from 1', async () => {
    const first = openMemoryStore()
    const second = openMemoryStore()
    await seedStore(first, true)
    await seedStore(second, true)
    const { artists, albums } = await contents(first)
    expect(await contents(second)).toEqual({ artists, albums })
    expect(artists.map((artist) => [artist.id, artist.name])).toEqual(
      legends.artists.map((artist, i) => [i + 1, artist.name]),
    )
    expect(albums.map((album) => album.id)).toEqual(albums.map((_, i) => i + 1))
    expect(albums.map((album) => album.name)).toEqual(legends.artists.flatMap((a) => a.albums.map((b) => b.name)))
  })

  test('seeding twice gives the same state: a store with data is left alone, and says why', async () => {
    const { store, state } = countingStore()
    await seedStore(store, true)
    const once = await contents(store)
    expect(await seedStore(store, true)).toEqual({
      seeded: false,
      reason: 'the store was written before (--seed fills only a new store)',
    })
    expect(await contents(store)).toEqual(once)
    expect(state.writes).toBe(1)
  })

  test('leaves alone a store that holds anything, even a single artist', async () => {
    const store = openMemoryStore()
    await store.artists.insert({ name: 'Mine' })
    expect((await seedStore(store, true)).seeded).toBe(false)
    expect((await store.artists.list(everything)).total).toBe(1)
  })

  test('leaves alone a data file that held data, though it holds none now: its counters say it was written', async () => {
    const dir = tempDir()
    try {
      const file = join(dir, 'db.json')
      const held = { version: 1, counters: { artists: 3, albums: 0, users: 0, credentials: 0 } }
      writeFileSync(file, JSON.stringify({ ...held, artists: [], albums: [], users: [], credentials: [] }))
      const store = await openJsonFileStore(file)
      try {
        expect(await store.isEmpty()).toBe(true)
        expect(await seedStore(store, true)).toEqual({
          seeded: false,
          reason: 'the store was written before (--seed fills only a new store)',
        })
        expect((await store.artists.list(everything)).total).toBe(0)
      } finally {
        await store.close()
      }
    } finally {
      removeDir(dir)
    }
  })

  test('points every image at the generated cover of its own record', async () => {
    const store = openMemoryStore()
    await seedStore(store, true)
    const { artists, albums } = await contents(store)
    for (const artist of artists) expect(artist.image).toBe(`/covers/artists/${artist.id}.svg`)
    for (const album of albums) expect(album.image).toBe(`/covers/albums/${album.id}.svg`)
  })
})

describe('seedStore with a catalogue file', () => {
  const fixture = {
    artists: [
      {
        name: '  Nebbia  ',
        band: ' ',
        image: 'https://example.com/nebbia.jpg',
        albums: [
          { name: 'Huinca', year: 1972 },
          { name: 'Sin año', image: null },
          { name: 'Local', image: '/x.png', kind: 'live' },
        ],
      },
      { name: 'Sin discos', description: 'Nothing yet.', image: null, albums: [] },
    ],
  }

  test('loads it from any path, keeping the images it gives and covering the records it leaves without', async () => {
    const dir = tempDir()
    try {
      const file = `${dir}/fixture.json`
      await Bun.write(file, JSON.stringify(fixture))
      const store = openMemoryStore()
      expect(await seedStore(store, file)).toEqual({ seeded: true, artists: 2, albums: 3 })
      // Served as JSON, as clients see them: unset fields are left out, an explicit null image stays unset.
      expect(JSON.parse(JSON.stringify(await contents(store)))).toStrictEqual({
        artists: [
          { id: 1, name: 'Nebbia', image: 'https://example.com/nebbia.jpg' },
          { id: 2, name: 'Sin discos', description: 'Nothing yet.' },
        ],
        albums: [
          { id: 1, artistId: 1, name: 'Huinca', year: 1972, image: '/covers/albums/1.svg', kind: 'studio' },
          { id: 2, artistId: 1, name: 'Sin año', kind: 'studio' },
          { id: 3, artistId: 1, name: 'Local', image: '/x.png', kind: 'live' },
        ],
      })
    } finally {
      removeDir(dir)
    }
  })

  test('a bad file is refused even when the store would not be seeded, so the mistake shows at once', async () => {
    const store = openMemoryStore()
    await seedStore(store, true)
    const dir = tempDir()
    try {
      await Bun.write(`${dir}/bad.json`, '{"artists": [{}]}')
      await expect(seedStore(store, `${dir}/bad.json`)).rejects.toThrow(`${dir}/bad.json: /artists/0/name: is required`)
    } finally {
      removeDir(dir)
    }
  })

  test('reads the editorial sources and notes of artists and albums, and stores none of them', async () => {
    const dir = tempDir()
    try {
      const sources = ['https://example.com/discography', 'A book, page 12']
      const file = `${dir}/sourced.json`
      await Bun.write(
        file,
        JSON.stringify({
          artists: [
            {
              name: 'Moris',
              band: 'Los Beatniks',
              sources,
              note: 'Checked against two discographies.',
              albums: [{ name: '30 minutos de vida', year: 1970, sources, note: 'Mandioca, 1970.' }],
            },
          ],
        }),
      )
      const store = openMemoryStore()
      expect(await seedStore(store, file)).toEqual({ seeded: true, artists: 1, albums: 1 })
      expect(JSON.parse(JSON.stringify(await contents(store)))).toStrictEqual({
        artists: [{ id: 1, name: 'Moris', band: 'Los Beatniks', image: '/covers/artists/1.svg' }],
        albums: [
          { id: 1, artistId: 1, name: '30 minutos de vida', year: 1970, image: '/covers/albums/1.svg', kind: 'studio' },
        ],
      })
    } finally {
      removeDir(dir)
    }
  })

  test('the built-in catalogue’s sources and notes stay in the file: no stored record has them', async () => {
    const store = openMemoryStore()
    await seedStore(store, true)
    const { artists, albums } = await contents(store)
    const annotated = [...artists, ...albums].filter((record) => 'sources' in record || 'note' in record)
    expect(annotated).toEqual([])
  })

  test('parseCatalogue normalises like the API: trimmed names, blank bands unset', () => {
    const [withBand, blankBand] = parseCatalogue(
      {
        artists: [
          { name: ' A ', band: '  B ', albums: [{ name: ' C ', year: null }] },
          { name: 'D', band: ' ', albums: [] },
        ],
      },
      'x',
    )
    expect(JSON.parse(JSON.stringify([withBand, blankBand]))).toStrictEqual([
      { name: 'A', band: 'B', albums: [{ name: 'C', kind: 'studio' }] },
      { name: 'D', albums: [] },
    ])
  })
})
