import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { appendFileSync, copyFileSync, existsSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { StoreDocument } from '../../src/model/store-document.ts'
import { DataFileError, openJsonFileStore } from '../../src/store/json-file/json-file.ts'
import type { Store } from '../../src/store/store.ts'
import { removeDir, tempDir } from '../support/binary.ts'

// The journal as a crash leaves it: copies of the data file and journal taken while the store is still open stand
// in for the files a killed process leaves behind.
let dirs: string[] = []
let file: string
beforeEach(() => {
  dirs = [tempDir()]
  file = join(dirs[0] as string, 'db.json')
})
afterEach(() => {
  for (const dir of dirs) removeDir(dir)
})

const artist = (name: string) => ({ name })
const names = async (store: Store) =>
  (await store.artists.list({ limit: 100, offset: 0 })).items.map((each) => each.name)

/** Copies the data file and journal of a store that is still open, as a crash would leave them. */
function crashCopy(): string {
  const dir = tempDir()
  dirs.push(dir)
  copyFileSync(file, join(dir, 'db.json'))
  if (existsSync(`${file}.journal`)) copyFileSync(`${file}.journal`, join(dir, 'db.json.journal'))
  return join(dir, 'db.json')
}

async function until(condition: () => boolean) {
  for (let i = 0; i < 200 && !condition(); i++) await Bun.sleep(10)
  expect(condition()).toBe(true)
}

describe('the journal', () => {
  test('holds every acknowledged write when the process dies without closing', async () => {
    const store = await openJsonFileStore(file)
    await Promise.all(['A', 'B', 'C'].map((name) => store.artists.insert(artist(name))))
    await store.artists.replace({ id: 2, ...artist('B2') })
    const copy = crashCopy()
    await store.close()
    const recovered = await openJsonFileStore(copy)
    expect((await names(recovered)).sort()).toEqual(['A', 'B2', 'C'])
    expect((await recovered.artists.insert(artist('D'))).id).toBe(4)
    await recovered.close()
  })

  test('drops the torn tail of an append that was never acknowledged, and cuts it off', async () => {
    const store = await openJsonFileStore(file)
    await store.artists.insert(artist('A'))
    const copy = crashCopy()
    await store.close()
    appendFileSync(
      `${copy}.journal`,
      '{"counters":{"artists":2,"albums":0,"users":0,"credentials":0},"artists":[{"id":2,"na',
    )
    const recovered = await openJsonFileStore(copy)
    expect(await names(recovered)).toEqual(['A'])
    expect((await recovered.artists.insert(artist('B'))).id).toBe(2)
    await recovered.close()
    const reopened = await openJsonFileStore(copy)
    expect(await names(reopened)).toEqual(['A', 'B'])
    await reopened.close()
  })

  test('refuses a journal damaged in the middle, and leaves both files untouched', async () => {
    const store = await openJsonFileStore(file)
    await store.artists.insert(artist('A'))
    await store.artists.insert(artist('B'))
    const copy = crashCopy()
    await store.close()
    const lines = readFileSync(`${copy}.journal`, 'utf8').split('\n')
    const damaged = [lines[0]?.replace('"A"', '"A'), ...lines.slice(1)].join('\n')
    writeFileSync(`${copy}.journal`, damaged)
    const data = readFileSync(copy, 'utf8')
    const error = await openJsonFileStore(copy).catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(DataFileError)
    expect((error as Error).message).toContain('journal')
    expect(readFileSync(`${copy}.journal`, 'utf8')).toBe(damaged)
    expect(readFileSync(copy, 'utf8')).toBe(data)
  })

  test('a journal without its data file is refused', async () => {
    writeFileSync(`${file}.journal`, '{"counters":{"artists":1,"albums":0,"users":0,"credentials":0}}\n')
    await expect(openJsonFileStore(file)).rejects.toBeInstanceOf(DataFileError)
  })

  test('is folded into the data file in the background once it grows, losing nothing', async () => {
    const store = await openJsonFileStore(file, { compactAfterBytes: 2000 })
    for (let i = 0; i < 40; i++) await store.artists.insert(artist(`Artist ${i}`))
    // Folding is due once the journal reaches 2000 bytes or the data file's size, whichever is more; entries
    // appended while a fold runs stay in the journal until a later commit finds it over that mark again.
    await until(() => statSync(`${file}.journal`).size < Math.max(2000, statSync(file).size))
    const onDisk = JSON.parse(readFileSync(file, 'utf8')) as StoreDocument
    expect(onDisk.artists.length).toBeGreaterThan(10)
    const copy = crashCopy()
    await store.close()
    const recovered = await openJsonFileStore(copy)
    expect(await names(recovered)).toEqual(Array.from({ length: 40 }, (_, i) => `Artist ${i}`))
    await recovered.close()
  })

  test('replaying entries the data file already holds (a crash mid-compaction) changes nothing', async () => {
    const store = await openJsonFileStore(file)
    await store.artists.insert(artist('A'))
    await store.artists.replace({ id: 1, ...artist('A2') })
    await store.albums.insert({ artistId: 1, name: 'One', year: 1970 })
    const journal = readFileSync(`${file}.journal`)
    await store.close()
    writeFileSync(`${file}.journal`, journal)
    const reopened = await openJsonFileStore(file)
    expect(await names(reopened)).toEqual(['A2'])
    expect((await reopened.albums.listByArtist(1, { limit: 10, offset: 0 }))?.items.map((album) => album.name)).toEqual(
      ['One'],
    )
    expect((await reopened.artists.insert(artist('B'))).id).toBe(2)
    await reopened.close()
  })

  test('the data file stays plain JSON, one record per line', async () => {
    const store = await openJsonFileStore(file)
    await store.artists.insert(artist('A'))
    await store.artists.insert(artist('B'))
    await store.close()
    const text = readFileSync(file, 'utf8')
    expect(JSON.parse(text).artists).toHaveLength(2)
    expect(text).toContain('\n{"id":1,"name":"A"},\n{"id":2,')
  })
})
