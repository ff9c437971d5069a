/**
 * The artists' histories in every backend: the in-memory document store, a JSON data file (its journal replayed
 * after a crash, its compaction, a clean close) and PostgreSQL. Every write of the catalogue adds a change, in the
 * same step, with who made it; a refused write adds none; a history holds its artist's and its albums' changes,
 * newest first, at most HISTORY_PER_ARTIST; a snapshot and a restore carry it, and a load (the seed) records nothing.
 */
import { describe, expect, test } from 'bun:test'
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs'
import type { Album } from '../../src/model/album.ts'
import { HISTORY_PER_ARTIST } from '../../src/model/history.ts'
import { readDataFile } from '../../src/ops/read-data-file.ts'
import type { ChangeEvent } from '../../src/store/changes.ts'
import { artistTag, StaleVersionError } from '../../src/store/entity-tag.ts'
import { openJsonFileStore } from '../../src/store/json-file/json-file.ts'
import type { Store } from '../../src/store/store.ts'
import { everyStore } from '../support/every-store.ts'

const { backends, opened, dataFile, crashCopy } = everyStore()

const ALL = { limit: 100, offset: 0 }

/** Artist 1 (Spinetta) with album 1 (Artaud); artist 2 (Charly) with album 2: loaded, so with no history. */
async function seeded(open: () => Promise<Store>) {
  const store = await open()
  opened.push(store)
  await store.load([
    { name: 'Spinetta', image: null, albums: [{ name: 'Artaud', year: 1973, image: null }] },
    { name: 'Charly', image: null, albums: [{ name: 'Clics modernos', year: 1983, image: null }] },
  ])
  return store
}

/** The kinds and authors of an artist's history, newest first. */
const summary = async (store: Store, artistId: number) =>
  (await store.artists.history(artistId, ALL))?.items.map((change) => `${change.kind} ${change.by}`)

describe.each(backends)('the history over %s', (_, skipped, open) => {
  test.skipIf(skipped)('each kind of write is recorded with who made it and when, newest first', async () => {
    const store = await seeded(open)
    expect(await store.artists.history(1, ALL)).toEqual({ items: [], total: 0 })
    const before = Date.now()
    const created = await store.artists.insert({ name: 'Pappo' }, 'service')
    await store.artists.replace({ id: created.id, name: 'Pappo', band: 'Riff' }, undefined, 'user:4/token:9')
    const album = await store.albums.insert({ artistId: created.id, name: 'Riff I' }, undefined, 'user:4/key:2')
    await store.albums.replace({ ...(album as Album), year: 1980 }, undefined, 'user:5/token:11')
    await store.albums.remove(created.id, album?.id as number, undefined, 'service')
    const { items, total } = (await store.artists.history(created.id, ALL)) ?? { items: [], total: -1 }
    expect(total).toBe(5)
    expect(items.map((change) => [change.kind, change.by])).toEqual([
      ['album-deleted', 'service'],
      ['album-updated', 'user:5/token:11'],
      ['album-created', 'user:4/key:2'],
      ['artist-updated', 'user:4/token:9'],
      ['artist-created', 'service'],
    ])
    // Newest first: ids fall, times never rise.
    for (let i = 1; i < items.length; i++) {
      expect((items[i] as { id: number }).id).toBeLessThan((items[i - 1] as { id: number }).id)
      expect(Date.parse(items[i]?.at as string)).toBeLessThanOrEqual(Date.parse(items[i - 1]?.at as string))
    }
    expect(Date.parse(items[4]?.at as string)).toBeGreaterThanOrEqual(before - 1000)
    expect(Date.parse(items[0]?.at as string)).toBeLessThanOrEqual(Date.now() + 1000)
    // The record as it became; for a removal, the album as it was.
    expect(items[4]?.artist).toEqual({ id: created.id, name: 'Pappo' } as never)
    expect(items[3]?.artist).toEqual({ id: created.id, name: 'Pappo', band: 'Riff' } as never)
    expect(items[1]?.album).toEqual({
      id: album?.id,
      artistId: created.id,
      name: 'Riff I',
      year: 1980,
      kind: 'studio',
    } as never)
    expect(items[0]?.album).toEqual(items[1]?.album as never)
    expect(items[0]?.artist).toBeUndefined()
    // Another artist's history is its own; an unknown artist has none.
    expect(await summary(store, 1)).toEqual([])
    expect(await store.artists.history(99, ALL)).toBeUndefined()
  })

  test.skipIf(skipped)('the event stream says each change with the time and author its history says', async () => {
    const store = await seeded(open)
    const events: ChangeEvent[] = []
    const subscription = await store.changes.subscribe({ change: (event) => events.push(event), end: () => {} })
    const created = await store.artists.insert({ name: 'Moris' }, 'service')
    const album = await store.albums.insert({ artistId: created.id, name: 'Treinta minutos de vida' }, undefined, 'u')
    await store.albums.remove(created.id, album?.id as number, undefined, 'user:3/token:4')
    // Over SQL the events arrive as the feed reads them, shortly after the commits; a change of the setup may still
    // be delivered after the subscription: only this artist's count.
    const its = () =>
      events.filter(({ change }) =>
        change.kind === 'reset'
          ? false
          : 'album' in change
            ? change.album.artistId === created.id
            : change.artist.id === created.id,
      )
    for (let wait = 0; its().length < 3 && wait < 100; wait++) await Bun.sleep(20)
    subscription.cancel()
    const { items } = (await store.artists.history(created.id, ALL)) ?? { items: [] }
    expect(its().map((event) => [event.change.kind, event.by, event.at])).toEqual(
      items.toReversed().map((change) => [change.kind, change.by, Date.parse(change.at)]),
    )
  })

  test.skipIf(skipped)('a write without an author is the operator’s; a refused write records nothing', async () => {
    const store = await seeded(open)
    await store.artists.replace({ id: 1, name: 'Luis Alberto Spinetta' })
    const stale = store.artists.replace({ id: 1, name: 'Lost' }, { ifMatch: ['"nope"'] }, 'service')
    await expect(stale).rejects.toBeInstanceOf(StaleVersionError)
    await expect(
      store.albums.insert({ artistId: 1, name: 'Lost' }, { ifMatch: ['"nope"'] }, 'service'),
    ).rejects.toBeInstanceOf(StaleVersionError)
    expect(await store.albums.remove(2, 1, undefined, 'service')).toBeUndefined()
    expect(await store.artists.replace({ id: 99, name: 'Nadie' }, undefined, 'service')).toBeUndefined()
    expect(await summary(store, 1)).toEqual(['artist-updated operator'])
    const tag = artistTag((await store.artists.get(1)) as never)
    await store.albums.insert({ artistId: 1, name: 'Pescado 2' }, { ifMatch: [tag] }, 'user:1/token:1')
    expect(await summary(store, 1)).toEqual(['album-created user:1/token:1', 'artist-updated operator'])
  })

  test.skipIf(skipped)('pages like every list: limit, offset and the total', async () => {
    const store = await seeded(open)
    for (let i = 1; i <= 7; i++) await store.artists.replace({ id: 2, name: `Charly ${i}` }, undefined, 'service')
    const first = await store.artists.history(2, { limit: 3, offset: 0 })
    const second = await store.artists.history(2, { limit: 3, offset: 3 })
    const last = await store.artists.history(2, { limit: 3, offset: 6 })
    expect(first?.total).toBe(7)
    expect(first?.items.map((change) => change.artist?.name)).toEqual(['Charly 7', 'Charly 6', 'Charly 5'])
    expect(second?.items.map((change) => change.artist?.name)).toEqual(['Charly 4', 'Charly 3', 'Charly 2'])
    expect(last?.items.map((change) => change.artist?.name)).toEqual(['Charly 1'])
    expect((await store.artists.history(2, { limit: 3, offset: 9 }))?.items).toEqual([])
  })

  test.skipIf(skipped)(`keeps the newest ${HISTORY_PER_ARTIST} changes of each artist`, async () => {
    const store = await seeded(open)
    const writes = HISTORY_PER_ARTIST + 5
    for (let i = 1; i <= writes; i++) {
      // Half on the artist, half on its album: one bound for both.
      if (i % 2) await store.artists.replace({ id: 1, name: `Spinetta ${i}` }, undefined, 'service')
      else await store.albums.replace({ id: 1, artistId: 1, name: `Artaud ${i}` }, undefined, 'service')
    }
    await store.artists.replace({ id: 2, name: 'Charly' }, undefined, 'service')
    const history = await store.artists.history(1, ALL)
    expect(history?.total).toBe(HISTORY_PER_ARTIST)
    const names = history?.items.map((change) => change.artist?.name ?? change.album?.name)
    expect(names?.[0]).toBe(`Spinetta ${writes}`)
    expect(names?.at(-1)).toBe('Artaud 6')
    expect((await store.artists.history(2, ALL))?.total).toBe(1)
  })

  test.skipIf(skipped)(
    'a snapshot carries the histories, a restore brings them back; a load records none',
    async () => {
      const store = await seeded(open)
      await store.artists.replace({ id: 1, name: 'Flaco' }, undefined, 'user:3/token:4')
      await store.albums.remove(2, 2, undefined, 'service')
      const backup = await store.snapshot()
      expect(backup.history?.map((change) => change.kind)).toEqual(['artist-updated', 'album-deleted'])
      await store.artists.replace({ id: 1, name: 'Later' }, undefined, 'service')
      await store.restore(backup)
      expect(await summary(store, 1)).toEqual(['artist-updated user:3/token:4'])
      expect(await summary(store, 2)).toEqual(['album-deleted service'])
      // Ids of changes are not given again after a restore of an older state.
      await store.artists.replace({ id: 1, name: 'After' }, undefined, 'service')
      const [newest] = (await store.artists.history(1, ALL))?.items ?? []
      expect(newest?.id).toBeGreaterThan(Math.max(...(backup.history ?? []).map((change) => change.id)) + 1)
      // Restored into another store of the same kind, as a backup is.
      const other = await open()
      opened.push(other)
      await other.restore(backup)
      expect(await summary(other, 1)).toEqual(['artist-updated user:3/token:4'])
    },
  )

  test.skipIf(skipped)(
    `a restore keeps each artist's newest ${HISTORY_PER_ARTIST} changes of a longer history`,
    async () => {
      const store = await seeded(open)
      await store.artists.replace({ id: 2, name: 'Charly' }, undefined, 'service')
      const backup = await store.snapshot()
      const [charly] = backup.history ?? []
      // A history longer than a store keeps, as a data file read offline (its journal not yet cut) may give one.
      const longer = Array.from({ length: HISTORY_PER_ARTIST + 7 }, (_, i) => ({
        id: i + 1,
        at: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
        by: 'service',
        kind: 'artist-updated' as const,
        artist: { id: 1, name: `Spinetta ${i + 1}` },
      }))
      await store.restore({ ...backup, history: [...longer, { ...(charly as NonNullable<typeof charly>), id: 500 }] })
      const history = await store.artists.history(1, ALL)
      expect(history?.total).toBe(HISTORY_PER_ARTIST)
      expect(history?.items[0]?.artist?.name).toBe(`Spinetta ${HISTORY_PER_ARTIST + 7}`)
      expect(history?.items.at(-1)?.artist?.name).toBe('Spinetta 8')
      expect(await summary(store, 2)).toEqual(['artist-updated service'])
    },
  )
})

describe('over a JSON data file', () => {
  test('the history survives a crash (the journal), a compaction and a clean close (the data file)', async () => {
    const file = dataFile()
    const store = await seeded(() => openJsonFileStore(file))
    await store.artists.replace({ id: 1, name: 'Flaco' }, undefined, 'user:3/token:4')
    await store.albums.insert({ artistId: 1, name: 'Pescado 2' }, undefined, 'service')
    // A copy of the data file and journal while the store is open stands in for what a killed process leaves.
    const copy = crashCopy(file)
    for (const path of [copy, file]) {
      if (path === file) await store.close()
      const again = await openJsonFileStore(path)
      opened.push(again)
      expect(await summary(again, 1)).toEqual(['album-created service', 'artist-updated user:3/token:4'])
      await again.artists.replace({ id: 1, name: 'Again' }, undefined, 'service')
      expect((await again.artists.history(1, ALL))?.items[0]?.id).toBe(3)
      await again.close()
    }
    // Closed: folded into the data file, where the history is kept in id order.
    const saved = JSON.parse(readFileSync(file, 'utf8'))
    expect(saved.history.map((change: { id: number }) => change.id)).toEqual([1, 2, 3])
  })

  test('a compaction that died before emptying the journal: the changes it folded in are not added twice', async () => {
    const file = dataFile()
    const store = await seeded(() => openJsonFileStore(file))
    await store.artists.replace({ id: 1, name: 'Flaco' }, undefined, 'service')
    await store.albums.remove(1, 1, undefined, 'service')
    const copy = dataFile()
    copyFileSync(`${file}.journal`, `${copy}.journal`)
    // The data file as the compaction writes it (the journal folded in), and the journal still whole beside it.
    const folded = readDataFile(file)
    expect(folded.problems).toEqual([])
    writeFileSync(copy, JSON.stringify(folded.document))
    const read = readDataFile(copy)
    expect(read.document?.history?.map((change) => change.id)).toEqual([1, 2])
    const again = await openJsonFileStore(copy)
    opened.push(again)
    expect(await summary(again, 1)).toEqual(['album-deleted service', 'artist-updated service'])
  })

  test(`a journal longer than ${HISTORY_PER_ARTIST} changes of one artist is cut to them when read`, async () => {
    const file = dataFile()
    const store = await seeded(() => openJsonFileStore(file))
    for (let i = 1; i <= HISTORY_PER_ARTIST + 3; i++)
      await store.artists.replace({ id: 1, name: `Flaco ${i}` }, undefined, 'service')
    const copy = crashCopy(file)
    const again = await openJsonFileStore(copy)
    opened.push(again)
    const history = await again.artists.history(1, { limit: 1, offset: 0 })
    expect(history?.total).toBe(HISTORY_PER_ARTIST)
    expect(history?.items[0]?.artist?.name).toBe(`Flaco ${HISTORY_PER_ARTIST + 3}`)
  })
})
