import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import {
  chmodSync,
  chownSync,
  existsSync,
  linkSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { join } from 'node:path'
import { DataFileError, openJsonFileStore } from '../../src/store/json-file/json-file.ts'
import { lockDataFile } from '../../src/store/json-file/lock.ts'
import { StoreUnavailableError } from '../../src/store/store.ts'
import { removeDir, tempDir } from '../support/binary.ts'

// A local user who can write in the data directory plants a symbolic link (or a file of theirs) where the store will
// create or reopen a file, to have the server write into a file of the attacker's choosing. Real files, real links;
// each attack must end in a refusal, with the link's target untouched.

const OTHER_USER = 65534 // nobody
const isRoot = process.getuid?.() === 0

let dir: string
let file: string
let victim: string
const VICTIM = 'a file of the victim, which the server must never write\n'
beforeEach(() => {
  dir = tempDir()
  file = join(dir, 'db.json')
  // The file the attacker aims at lives elsewhere: only the link to it is in the data directory.
  victim = join(tempDir(), 'victim.txt')
  writeFileSync(victim, VICTIM)
})
afterEach(() => {
  removeDir(dir)
  removeDir(join(victim, '..'))
})

const artist = (name: string) => ({ name })
const names = async (path: string) => {
  const store = await openJsonFileStore(path)
  const result = (await store.artists.list({ limit: 100, offset: 0 })).items.map((each) => each.name)
  await store.close()
  return result
}

/** A data file holding one artist, closed: its journal exists (empty) beside it. */
async function existingStore() {
  const store = await openJsonFileStore(file)
  await store.artists.insert(artist('Kept'))
  await store.close()
}

function expectVictimUntouched() {
  expect(readFileSync(victim, 'utf8')).toBe(VICTIM)
  expect(statSync(victim).nlink).toBe(1)
}

async function refusal(path = file): Promise<Error> {
  const error = await openJsonFileStore(path).catch((caught: unknown) => caught)
  expect(error).toBeInstanceOf(DataFileError)
  return error as Error
}

describe('a symbolic link planted where the store opens a file, at start', () => {
  test.each(['db.json', 'db.json.journal', 'db.json.lock'])(
    'at %s: start-up is refused, naming the link; its target is untouched',
    async (name) => {
      if (name !== 'db.json') await existingStore()
      rmSync(join(dir, name), { force: true })
      symlinkSync(victim, join(dir, name))
      const error = await refusal()
      expect(error.message).toBe(
        `${join(dir, name)} is a symbolic link; the server never follows one to its files (someone may have planted it): remove it, or give --data the real file`,
      )
      expectVictimUntouched()
      expect(lstatSync(join(dir, name)).isSymbolicLink()).toBe(true)
      // The lock is released: once the link is gone, the store opens.
      rmSync(join(dir, name))
      expect(await names(file)).toEqual(name === 'db.json' ? [] : ['Kept'])
    },
  )

  test('a dangling link at the journal (it would have created the file it points to) is refused; nothing is created', async () => {
    await existingStore()
    rmSync(`${file}.journal`)
    const target = join(victim, '..', 'created-through-a-link')
    symlinkSync(target, `${file}.journal`)
    expect((await refusal()).message).toContain(`${file}.journal is a symbolic link`)
    expect(existsSync(target)).toBe(false)
  })

  test('the lock module on its own refuses a link at the lock, and leaves it (and its target) alone', () => {
    symlinkSync(victim, `${file}.lock`)
    expect(() => lockDataFile(file)).toThrow(DataFileError)
    expect(() => lockDataFile(file)).toThrow(`${file}.lock is a symbolic link`)
    expect(lstatSync(`${file}.lock`).isSymbolicLink()).toBe(true)
    expectVictimUntouched()
  })
})

describe('a symbolic link planted while the store runs', () => {
  test.each([
    ['to an existing file', () => victim],
    ['dangling (creating would follow it)', () => join(victim, '..', 'created-through-a-link')],
  ])(
    'at the journal, %s: the write is refused (503), the target untouched; writes resume once it is gone',
    async (_, target) => {
      const store = await openJsonFileStore(file)
      // A fresh store creates its journal at the first write: the attacker is there first.
      expect(existsSync(`${file}.journal`)).toBe(false)
      const aim = target()
      symlinkSync(aim, `${file}.journal`)
      const refused = await store.artists.insert(artist('Refused')).catch((caught: unknown) => caught)
      expect(refused).toBeInstanceOf(StoreUnavailableError)
      expect((refused as Error).message).toContain(`${file}.journal`)
      if (aim === victim) expectVictimUntouched()
      else expect(existsSync(aim)).toBe(false)
      rmSync(`${file}.journal`)
      expect((await store.artists.insert(artist('After'))).id).toBe(1)
      await store.close()
      expect(await names(file)).toEqual(['After'])
      expectVictimUntouched()
    },
  )

  test('at the fixed name compaction used to write (.db.json.journal.tmp): it is never written through', async () => {
    const store = await openJsonFileStore(file, { compactAfterBytes: 1 })
    const planted = join(dir, '.db.json.journal.tmp')
    symlinkSync(victim, planted)
    for (let i = 0; i < 10; i++) await store.artists.insert(artist(`A${i}`))
    // Folded in the background while serving, and once more on close: each time with a temporary file of its own.
    const folded = () => JSON.parse(readFileSync(file, 'utf8')).artists.length
    for (let i = 0; i < 200 && folded() === 0; i++) await Bun.sleep(10)
    expect(folded()).toBeGreaterThan(0)
    await store.close()
    expect(statSync(`${file}.journal`).size).toBe(0)
    expectVictimUntouched()
    expect(JSON.parse(readFileSync(file, 'utf8')).artists).toHaveLength(10)
    // The link is an attacker's leftover, not ours to follow; it is still a link, to the untouched file.
    expect(lstatSync(planted).isSymbolicLink()).toBe(true)
  })
})

describe('files that are not the store’s own', () => {
  test.each(['db.json', 'db.json.journal'])(
    'a second hard link to %s is refused: the server would write through it',
    async (name) => {
      await existingStore()
      const other = join(victim, '..', 'other-name')
      linkSync(join(dir, name), other)
      try {
        const before = readFileSync(other, 'utf8')
        expect((await refusal()).message).toBe(
          `${join(dir, name)} has 2 hard links; the server opens only files with one name: replace it with a copy (cp) of itself`,
        )
        expect(readFileSync(other, 'utf8')).toBe(before)
      } finally {
        rmSync(other)
      }
    },
  )

  test('a directory at the journal’s place is refused', async () => {
    await existingStore()
    rmSync(`${file}.journal`)
    mkdirSync(`${file}.journal`)
    expect((await refusal()).message).toBe(`${file}.journal is not a regular file`)
  })

  test.skipIf(!isRoot).each(['db.json', 'db.json.journal', 'db.json.lock'])(
    '%s belonging to another user is refused, and left as it is (needs root to give it away)',
    async (name) => {
      await existingStore()
      const path = join(dir, name)
      if (name === 'db.json.lock') writeFileSync(path, '1\n')
      chownSync(path, OTHER_USER, OTHER_USER)
      const before = readFileSync(path, 'utf8')
      expect((await refusal()).message).toBe(
        `${path} belongs to another user (uid ${OTHER_USER}, this process runs as uid 0); the server opens only its own files: run it as that user, or start on a copy of the file`,
      )
      expect(readFileSync(path, 'utf8')).toBe(before)
      expect(statSync(path).uid).toBe(OTHER_USER)
    },
  )

  test.skipIf(!isRoot)('a leftover temporary file of another user is not ours to remove', async () => {
    const theirs = join(dir, '.db.json.0123456789abcdef.tmp')
    const ours = join(dir, '.db.json.fedcba9876543210.tmp')
    writeFileSync(theirs, 'theirs')
    writeFileSync(ours, 'ours')
    chownSync(theirs, OTHER_USER, OTHER_USER)
    expect(await names(file)).toEqual([])
    expect(readdirSync(dir).sort()).toEqual(['.db.json.0123456789abcdef.tmp', 'db.json'])
  })
})

describe('the data directory', () => {
  test.each([
    ['world-writable', 0o777, '0777'],
    ['group-writable', 0o770, '0770'],
    ['writable by others only', 0o703, '0703'],
  ])(
    '%s and not sticky: start-up is refused with one line saying how to fix it; nothing is created',
    async (_, mode, shown) => {
      const shared = join(dir, 'shared')
      mkdirSync(shared)
      chmodSync(shared, mode)
      const error = await refusal(join(shared, 'db.json'))
      expect(error.message).toBe(
        `${shared}, the directory of ${join(shared, 'db.json')}, may be written by other users (mode ${shown}) and is not sticky, so they could replace the data file, its journal or its lock: run \`chmod go-w ${shared}\` (or \`chmod +t\`), or choose another directory`,
      )
      expect(readdirSync(shared)).toEqual([])
    },
  )

  test('sticky and world-writable (like /tmp), holding our own files: it works, across a restart', async () => {
    const shared = join(dir, 'shared')
    mkdirSync(shared)
    chmodSync(shared, 0o1777)
    const path = join(shared, 'db.json')
    const store = await openJsonFileStore(path)
    await store.artists.insert(artist('A'))
    expect(statSync(`${path}.lock`).mode & 0o777).toBe(0o600)
    expect(statSync(`${path}.journal`).mode & 0o777).toBe(0o600)
    expect(statSync(path).mode & 0o777).toBe(0o600)
    await store.close()
    expect(await names(path)).toEqual(['A'])
  })

  test.skipIf(!isRoot)('sticky and world-writable, with a journal another user put there first: refused', async () => {
    const shared = join(dir, 'shared')
    mkdirSync(shared)
    chmodSync(shared, 0o1777)
    const path = join(shared, 'db.json')
    expect(await names(path)).toEqual([])
    writeFileSync(`${path}.journal`, '')
    chownSync(`${path}.journal`, OTHER_USER, OTHER_USER)
    expect((await refusal(path)).message).toContain(`${path}.journal belongs to another user (uid ${OTHER_USER}`)
  })

  test('a missing directory is created writable by its owner alone, whatever the umask', async () => {
    const previous = process.umask(0)
    try {
      const path = join(dir, 'new', 'db.json')
      expect(await names(path)).toEqual([])
      expect(statSync(join(dir, 'new')).mode & 0o777).toBe(0o755)
    } finally {
      process.umask(previous)
    }
  })
})
