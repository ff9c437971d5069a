import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { existsSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { DataFileLockedError } from '../../src/store/json-file/errors.ts'
import { fileLocks } from '../../src/store/json-file/flock.ts'
import { lockDataFile, lockOwner } from '../../src/store/json-file/lock.ts'
import { removeDir, tempDir } from '../support/binary.ts'

// The data file's lock in-process: flock is found here, a stale lock is taken over in place, and where there is no
// flock (Windows) a lock file left behind is refused with what to do. Many executables started at once over one
// file: test/store/lock-takeover.test.ts.

let dir: string
let file: string
beforeEach(() => {
  dir = tempDir('rock-legends-flock-')
  file = join(dir, 'db.json')
})
afterEach(() => removeDir(dir))

describe('the lock module in-process', () => {
  test('flock is there on this platform, and a stale lock is taken over in place: same file, our pid, mode 0600', () => {
    expect(fileLocks()).not.toBeNull()
    writeFileSync(`${file}.lock`, `${Bun.spawnSync(['true']).pid}\nurl=http://127.0.0.1:1\nkey=stale\n`, {
      mode: 0o644,
    })
    const inode = statSync(`${file}.lock`).ino
    expect(lockOwner(file)).toBeUndefined()
    const release = lockDataFile(file)
    expect(statSync(`${file}.lock`).ino).toBe(inode)
    expect(statSync(`${file}.lock`).mode & 0o777).toBe(0o600)
    expect(readFileSync(`${file}.lock`, 'utf8')).toBe(`${process.pid}\n`)
    expect(lockOwner(file)).toEqual({ pid: process.pid, running: true, url: undefined, key: undefined })
    expect(() => lockDataFile(file)).toThrow(`${file} is already open in this process`)
    release()
    expect(existsSync(`${file}.lock`)).toBe(false)
    expect(lockOwner(file)).toBeUndefined()
  })

  test('without flock (Windows), a lock file left behind is never taken over: the error says what to check and delete', () => {
    for (const text of ['', `${Bun.spawnSync(['true']).pid}\n`]) {
      writeFileSync(`${file}.lock`, text, { mode: 0o600 })
      expect(lockOwner(file, null)).toBeUndefined()
      const error = (() => {
        try {
          lockDataFile(file, null)
        } catch (caught) {
          return caught as Error
        }
      })()
      expect(error).toBeInstanceOf(DataFileLockedError)
      expect(error?.message).toContain(`make sure no rock-legends process uses ${file}, then delete ${file}.lock`)
      expect(readFileSync(`${file}.lock`, 'utf8')).toBe(text)
    }
    rmSync(`${file}.lock`)
    const release = lockDataFile(file, null)
    expect(readFileSync(`${file}.lock`, 'utf8')).toBe(`${process.pid}\n`)
    expect(lockOwner(file, null)).toMatchObject({ pid: process.pid, running: true })
    release()
    expect(existsSync(`${file}.lock`)).toBe(false)
  })
})
