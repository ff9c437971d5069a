import { describe, expect, test } from 'bun:test'
import { Low, Memory } from 'lowdb'
import type { Album } from '../../src/model/album.ts'
import type { StoreDocument } from '../../src/model/store-document.ts'
import type { Batch } from '../../src/store/document/batch.ts'
import { emptyDocument } from '../../src/store/document/document.ts'
import { GroupCommit } from '../../src/store/document/group-commit.ts'
import type { JournalEntry, Persistence } from '../../src/store/document/persistence.ts'
import { Records } from '../../src/store/document/records.ts'

/**
 * Records over an empty document, and a persistence whose commits wait for `release()`, recording each journal
 * entry; a commit fails while `fail` is set, as a full disk would.
 */
function slowStore() {
  const state = { entries: [] as JournalEntry[], fail: false, release: () => {} }
  const persist = () => {
    const { promise, resolve, reject } = Promise.withResolvers<void>()
    const fail = state.fail
    state.release = () => (fail ? reject(new Error('disk full')) : resolve())
    return promise
  }
  const persistence: Persistence = {
    commit: (entry) => {
      state.entries.push(entry)
      return persist()
    },
    replace: persist,
    close: async () => {},
  }
  const records = new Records(new Low<StoreDocument>(new Memory<StoreDocument>(), emptyDocument()))
  return { state, records, commits: new GroupCommit(records, persistence) }
}

/** A change that adds an artist named `name` and returns `result`. */
const add =
  <T>(name: string, result: T) =>
  (batch: Batch) => {
    batch.put('artists', { id: batch.nextId('artists'), name })
    return result
  }

const names = (records: Records) => records.doc.artists.map((artist) => artist.name)
const tick = () => Bun.sleep(0)

describe('GroupCommit', () => {
  test('changes submitted while a commit is in flight share the next one', async () => {
    const { state, commits } = slowStore()
    const first = commits.submit(add('first', 'first'))
    await tick()
    const waiting = Array.from({ length: 10 }, (_, i) => commits.submit(add(`artist ${i}`, i)))
    expect(state.entries).toHaveLength(1)
    state.release()
    expect(await first).toBe('first')
    await tick()
    expect(state.entries).toHaveLength(2)
    state.release()
    expect(await Promise.all(waiting)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9])
    expect(state.entries).toHaveLength(2)
    expect(state.entries[1]?.artists?.map((artist) => artist.id)).toEqual([2, 3, 4, 5, 6, 7, 8, 9, 10, 11])
    expect(state.entries[1]?.counters.artists).toBe(11)
  })

  test('changes are applied in order, and acknowledged only after the commit that carries them', async () => {
    const { state, records, commits } = slowStore()
    const log: string[] = []
    const done = commits.submit((batch) => {
      add('one', null)(batch)
      log.push('applied')
    })
    done.then(() => log.push('acknowledged'))
    await tick()
    expect(log).toEqual(['applied'])
    expect(names(records)).toEqual(['one'])
    state.release()
    await done
    await tick()
    expect(log).toEqual(['applied', 'acknowledged'])
  })

  test('a change that throws fails alone', async () => {
    const { state, records, commits } = slowStore()
    const bad = commits
      .submit(() => {
        throw new Error('duplicate')
      })
      .catch((error: Error) => error.message)
    const good = commits.submit(add('good', 'ok'))
    await tick()
    state.release()
    expect(await bad).toBe('duplicate')
    expect(await good).toBe('ok')
    expect(state.entries).toHaveLength(1)
    expect(names(records)).toEqual(['good'])
  })

  test('a batch that changes nothing is acknowledged without a commit', async () => {
    const { state, commits } = slowStore()
    expect(await commits.submit(() => 'nothing to save')).toBe('nothing to save')
    expect(state.entries).toHaveLength(0)
  })

  test('a failed commit takes back and refuses every change in it, counters too; the next one goes through', async () => {
    const { state, records, commits } = slowStore()
    const events: string[] = []
    state.fail = true
    const a = commits.submit(add('a', 'a')).catch((error: Error) => events.push(`a: ${error.message}`))
    const b = commits.submit(add('b', 'b')).catch((error: Error) => events.push(`b: ${error.message}`))
    await tick()
    expect(names(records)).toEqual(['a', 'b'])
    state.release()
    await Promise.all([a, b])
    expect(events).toEqual([
      'a: the change could not be saved: disk full',
      'b: the change could not be saved: disk full',
    ])
    expect(names(records)).toEqual([])
    expect(records.doc.counters.artists).toBe(0)
    state.fail = false
    const later = commits.submit(add('later', 'later'))
    await tick()
    state.release()
    expect(await later).toBe('later')
    expect(records.doc.artists).toEqual([{ id: 1, name: 'later' }])
  })

  test('a failed commit puts a removed album back, with its artist and its place in the list', async () => {
    const { state, records, commits } = slowStore()
    const albums = (batch: Batch) => {
      batch.put('artists', { id: batch.nextId('artists'), name: 'Spinetta' })
      for (const name of ['Artaud', 'Pescado 2', 'Kamikaze'])
        batch.put('albums', { id: batch.nextId('albums'), artistId: 1, name })
    }
    const loaded = commits.submit(albums)
    await tick()
    state.release()
    await loaded
    state.fail = true
    const removal = commits
      .submit((batch) => batch.remove('albums', records.album(2) as Album))
      .catch((error: Error) => error.message)
    await tick()
    expect(records.albumsOf(1)?.map((album) => album.id)).toEqual([1, 3])
    expect(state.entries.at(-1)?.removed).toEqual({ albums: [2] })
    state.release()
    expect(await removal).toBe('the change could not be saved: disk full')
    expect(records.doc.albums.map((album) => album.id)).toEqual([1, 2, 3])
    expect(records.albumsOf(1)?.map((album) => album.name)).toEqual(['Artaud', 'Pescado 2', 'Kamikaze'])
  })

  test('bookkeeping noted while a commit is in flight rides with the next one', async () => {
    const { state, records, commits } = slowStore()
    const first = commits.submit(add('first', 1))
    await tick()
    commits.pending.note('artists', { id: 1, name: 'noted' })
    state.release()
    await first
    expect(state.entries[0]?.artists).toEqual([{ id: 1, name: 'first' }])
    const second = commits.submit(add('second', 2))
    await tick()
    state.release()
    await second
    expect(state.entries[1]?.artists).toEqual([
      { id: 1, name: 'noted' },
      { id: 2, name: 'second' },
    ])
    expect(names(records)).toEqual(['noted', 'second'])
  })

  test('idle() waits for every pending commit', async () => {
    const { state, commits } = slowStore()
    commits.submit(add('one', 1))
    await tick()
    commits.submit(add('two', 2))
    let idle = false
    const waiting = commits.idle().then(() => {
      idle = true
    })
    state.release()
    await tick()
    expect(idle).toBe(false)
    state.release()
    await waiting
    expect(idle).toBe(true)
  })
})
