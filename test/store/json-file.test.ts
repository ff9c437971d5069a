import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { StoreDocument } from '../../src/model/store-document.ts'
import { DataFileLockedError } from '../../src/store/json-file/errors.ts'
import { DataFileError, openJsonFileStore } from '../../src/store/json-file/json-file.ts'
import { StoreUnavailableError } from '../../src/store/store.ts'
import { removeDir, tempDir } from '../support/binary.ts'
import { countingStore } from '../support/stores.ts'

let dir: string
let file: string
beforeEach(() => {
  dir = tempDir()
  file = join(dir, 'db.json')
})
afterEach(() => removeDir(dir))

const artist = (name: string) => ({ name })

describe('openJsonFileStore', () => {
  test('loads a data file and journal written by version 0.1, whose unset fields are null, and serves them left out', async () => {
    const legacy = {
      version: 1,
      counters: { artists: 2, albums: 1, users: 0, credentials: 0 },
      artists: [{ id: 1, name: 'Pappo', description: null, image: null, band: 'Riff' }],
      albums: [{ id: 1, artistId: 1, name: 'Pappo’s Blues', year: null, image: null }],
      users: [],
      credentials: [],
    }
    writeFileSync(file, JSON.stringify(legacy))
    const entry = {
      counters: legacy.counters,
      artists: [{ id: 2, name: 'Nebbia', description: 'x', image: null, band: null }],
    }
    writeFileSync(`${file}.journal`, `${JSON.stringify(entry)}\n`)
    const store = await openJsonFileStore(file)
    expect(JSON.stringify((await store.artists.list({ limit: 10, offset: 0 })).items)).toBe(
      '[{"id":1,"name":"Pappo","band":"Riff"},{"id":2,"name":"Nebbia","description":"x"}]',
    )
    // An album of a build before kinds is a studio album.
    expect(JSON.stringify(await store.albums.get(1))).toBe(
      '{"id":1,"artistId":1,"name":"Pappo’s Blues","kind":"studio"}',
    )
    await store.close()
    expect(readFileSync(file, 'utf8')).not.toContain('null')
  })

  test('creates a missing file (and its directory) holding an empty document', async () => {
    const nested = join(dir, 'a', 'b', 'db.json')
    const store = await openJsonFileStore(nested)
    await store.close()
    expect(JSON.parse(readFileSync(nested, 'utf8'))).toEqual({
      version: 1,
      counters: { artists: 0, albums: 0, users: 0, credentials: 0 },
      artists: [],
      albums: [],
      users: [],
      credentials: [],
    })
  })

  test('an acknowledged write is in the journal before the promise resolves, and in the data file after close', async () => {
    const store = await openJsonFileStore(file)
    const created = await store.artists.insert(artist('Pappo'))
    const entries = readFileSync(`${file}.journal`, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
    expect(entries).toEqual([
      {
        counters: { artists: 1, albums: 0, users: 0, credentials: 0 },
        artists: [created],
        // The artist's history, in the same line: durable with the write it describes.
        history: [{ id: 1, at: expect.any(String), by: 'operator', kind: 'artist-created', artist: created }],
      },
    ])
    await store.close()
    const onDisk = JSON.parse(readFileSync(file, 'utf8')) as StoreDocument
    expect(onDisk.artists).toEqual([created])
    expect(onDisk.counters.artists).toBe(1)
    expect(readFileSync(`${file}.journal`, 'utf8')).toBe('')
  })

  test('concurrent writes are all kept, with unique increasing ids, across a reopen', async () => {
    const first = await openJsonFileStore(file)
    const created = await Promise.all(Array.from({ length: 50 }, (_, i) => first.artists.insert(artist(`A${i}`))))
    await first.close()
    expect(new Set(created.map((each) => each.id)).size).toBe(50)
    const second = await openJsonFileStore(file)
    const { items, total } = await second.artists.list({ limit: 100, offset: 0 })
    expect(total).toBe(50)
    expect(items.map((each) => each.id)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1))
    const next = await second.artists.insert(artist('after'))
    expect(next.id).toBe(51)
    await second.close()
  })

  test('counters never go back: ids are not reused', async () => {
    const store = await openJsonFileStore(file)
    await store.albums.insert({ artistId: 1, name: 'ignored' })
    const a = await store.artists.insert(artist('A'))
    await store.close()
    const reopened = await openJsonFileStore(file)
    expect((await reopened.artists.insert(artist('B'))).id).toBe(a.id + 1)
    await reopened.close()
  })

  test.each([
    ['not JSON', '{"version": 1,'],
    ['JSON of the wrong shape', '{"hello": "world"}'],
    ['an unknown version', '{"version": 2, "counters": {}, "artists": []}'],
    ['an empty file', ''],
    [
      'ids out of order',
      JSON.stringify({
        version: 1,
        counters: { artists: 2, albums: 0, users: 0, credentials: 0 },
        artists: [
          { id: 2, name: 'B', description: null, image: null, band: null },
          { id: 1, name: 'A', description: null, image: null, band: null },
        ],
        albums: [],
        users: [],
        credentials: [],
      }),
    ],
    [
      'an id above its counter',
      JSON.stringify({
        version: 1,
        counters: { artists: 0, albums: 0, users: 0, credentials: 0 },
        artists: [{ id: 1, name: 'A', description: null, image: null, band: null }],
        albums: [],
        users: [],
        credentials: [],
      }),
    ],
  ])('refuses %s, naming the file, and leaves it untouched', async (_, content) => {
    writeFileSync(file, content)
    const error = await openJsonFileStore(file).catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(DataFileError)
    expect((error as Error).message).toContain(file)
    expect(readFileSync(file, 'utf8')).toBe(content)
    expect(existsSync(`${file}.lock`)).toBe(false)
  })

  test('a second store on the same file is refused while the first is open', async () => {
    const first = await openJsonFileStore(file)
    await expect(openJsonFileStore(file)).rejects.toBeInstanceOf(DataFileLockedError)
    await first.close()
    const again = await openJsonFileStore(file)
    await again.close()
  })

  test('a lock left by a process that is gone is taken over', async () => {
    const dead = Bun.spawnSync(['true']).pid
    writeFileSync(`${file}.lock`, `${dead}\n`)
    const store = await openJsonFileStore(file)
    expect(readFileSync(`${file}.lock`, 'utf8')).toBe(`${process.pid}\n`)
    await store.close()
    expect(existsSync(`${file}.lock`)).toBe(false)
  })

  test('temporary files left by a crash are removed on open', async () => {
    writeFileSync(join(dir, '.db.json.abc123.tmp'), 'half a document')
    const store = await openJsonFileStore(file)
    await store.close()
    expect(readdirSync(dir).sort()).toEqual(['db.json'])
  })

  test('last-used times touched in memory are saved on close', async () => {
    const store = await openJsonFileStore(file)
    const user = await store.users.insert({
      name: 'U',
      email: 'u@example.com',
      passwordHash: 'x',
      createdAt: 'now',
      disabledAt: null,
    })
    const credential = await store.credentials.insert({
      userId: user.id,
      kind: 'key',
      name: 'ci',
      hash: 'ab',
      prefix: 'rl_key_',
      createdAt: 'then',
      expiresAt: null,
      lastUsedAt: null,
      revokedAt: null,
    })
    store.credentials.noteUse(credential.id, 'just now')
    await store.close()
    const onDisk = JSON.parse(readFileSync(file, 'utf8')) as StoreDocument
    expect(onDisk.credentials[0]?.lastUsedAt).toBe('just now')
  })
})

describe('a write that cannot be made durable', () => {
  async function failingStore() {
    const { store, state } = countingStore()
    await store.artists.insert(artist('kept'))
    await store.users.insert({
      name: 'U',
      email: 'u@example.com',
      passwordHash: 'x',
      createdAt: 'now',
      disabledAt: null,
    })
    state.failing = true
    return { store, state }
  }

  test('is refused and undone, with everything earlier intact; writes resume once the fault clears', async () => {
    const { store, state } = await failingStore()
    const attempts = [
      store.artists.insert(artist('lost')),
      store.artists.replace({ id: 1, ...artist('renamed') }),
      store.albums.insert({ artistId: 1, name: 'lost album' }),
      store.users.insert({ name: 'V', email: 'v@example.com', passwordHash: 'x', createdAt: 'now', disabledAt: null }),
    ]
    for (const outcome of await Promise.allSettled(attempts))
      expect(outcome.status === 'rejected' && outcome.reason).toBeInstanceOf(StoreUnavailableError)
    expect((await store.artists.list({ limit: 10, offset: 0 })).items.map((a) => a.name)).toEqual(['kept'])
    expect((await store.albums.listByArtist(1, { limit: 10, offset: 0 }))?.total).toBe(0)
    expect(await store.users.findByEmail('v@example.com')).toBeUndefined()
    state.failing = false
    expect((await store.artists.insert(artist('after'))).id).toBe(2)
    expect(
      (
        await store.users.insert({
          name: 'V',
          email: 'v@example.com',
          passwordHash: 'x',
          createdAt: 'n',
          disabledAt: null,
        })
      ).id,
    ).toBe(2)
  })
})
