/**
 * Scheduled backups (`--backup-every`, `--backup-dir`, `--backup-keep`) against the compiled executable: backups are
 * written while the server serves, each sound (`rock-legends verify`), the oldest removed past the number kept; a
 * backup that fails is logged, leaves no file under a final name, and is tried again.
 */
import { describe, expect, test } from 'bun:test'
import {
  chmodSync,
  chownSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { join } from 'node:path'
import { binaryFixtures, canDropPrivileges, NOBODY, runBinary } from '../support/binary.ts'
import { skipWithoutPostgres, testPostgres } from '../support/postgres.ts'

const { directory, serve } = binaryFixtures('rock-legends-scheduled-', 'scheduled-backups-service-key')

const NAME = /^rock-legends-\d{8}T\d{6}Z\.json$/

/** Waits until `check` holds, polling; fails the test after `ms`. */
async function until(check: () => boolean, ms: number, what: string) {
  const deadline = Date.now() + ms
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await Bun.sleep(100)
  }
}

describe('scheduled backups', () => {
  test('are written while the server serves, each sound; the oldest go past --backup-keep', async () => {
    const dir = directory()
    const backups = join(dir, 'backups')
    const server = await serve(join(dir, 'db.json'), [
      '--seed',
      '--backup-every',
      '1s',
      '--backup-dir',
      backups,
      '--backup-keep',
      '2',
      '--log',
      'json',
    ])
    // The directory is made at start-up, readable by its owner alone (backups hold password hashes).
    expect(statSync(backups).mode & 0o777).toBe(0o700)
    let written = 0
    await until(
      () => {
        written = readdirSync(backups).filter((name) => NAME.test(name)).length
        return written === 2
      },
      15_000,
      'two backups',
    )
    // A third, then the oldest goes: wait for a name not seen yet.
    const first = readdirSync(backups).filter((name) => NAME.test(name))
    await until(
      () => readdirSync(backups).some((name) => NAME.test(name) && !first.includes(name)),
      15_000,
      'a third backup',
    )
    await Bun.sleep(300)
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200)
    // Stopped before the check: a backup a second rotates the oldest away faster than two runs of verify read them.
    await server.stop()
    const kept = readdirSync(backups)
    expect(kept.filter((name) => NAME.test(name))).toHaveLength(2)
    expect(kept.filter((name) => !NAME.test(name))).toEqual([])
    for (const name of kept) expect((await runBinary(['verify', join(backups, name)])).code).toBe(0)
    expect(await server.stderr()).toContain('backup written to')
  }, 60_000)

  test('files planted under backup names are never removed nor followed, and the log names each', async () => {
    const dir = directory()
    const backups = join(dir, 'backups')
    mkdirSync(backups, { mode: 0o700 })
    const outside = join(dir, 'precious.txt')
    writeFileSync(outside, 'not to be touched')
    // Newer than any real backup: counted by name, they used to push every real one out as soon as it was written.
    const planted = ['rock-legends-20990101T000000Z.json', 'rock-legends-20990102T000000Z.json']
    for (const name of planted) writeFileSync(join(backups, name), 'planted')
    symlinkSync(outside, join(backups, 'rock-legends-20000101T000000Z.json'))
    const others = 'rock-legends-20000102T000000Z.json'
    if (canDropPrivileges) {
      writeFileSync(join(backups, others), '{"format":"rock-legends-backup"}')
      chownSync(join(backups, others), NOBODY, NOBODY)
    }
    const server = await serve(join(dir, 'db.json'), [
      '--backup-every',
      '1s',
      '--backup-dir',
      backups,
      '--backup-keep',
      '2',
      '--log',
      'pretty',
    ])
    const real = () => readdirSync(backups).filter((name) => NAME.test(name) && !name.startsWith('rock-legends-2099'))
    await until(() => real().filter((name) => !name.startsWith('rock-legends-2000')).length >= 2, 15_000, 'two')
    const first = real()
    await until(() => real().some((name) => !first.includes(name)), 15_000, 'a third backup')
    await Bun.sleep(300)
    await server.stop()
    const names = readdirSync(backups)
    for (const name of [...planted, 'rock-legends-20000101T000000Z.json']) expect(names).toContain(name)
    if (canDropPrivileges) expect(names).toContain(others)
    expect(readFileSync(outside, 'utf8')).toBe('not to be touched')
    // The server's own: the newest 2 (all of today, so the day's and week's newest are among them).
    const own = names.filter(
      (name) => NAME.test(name) && name.startsWith(`rock-legends-${new Date().getUTCFullYear()}`),
    )
    expect(own).toHaveLength(2)
    const log = await server.stderr()
    expect(log).toContain(
      `left alone ${join(backups, planted[0] as string)}, which this server did not write: not a backup`,
    )
    expect(log).toContain(
      `${join(backups, 'rock-legends-20000101T000000Z.json')}, which this server did not write: a link`,
    )
    if (canDropPrivileges)
      expect(log).toContain(`${join(backups, others)}, which this server did not write: a file of another user`)
    expect(log).toContain('backup removed: ')
  }, 60_000)

  test('a file planted under the next name does not stop a backup: it is written under another, and said so', async () => {
    const dir = directory()
    const backups = join(dir, 'backups')
    mkdirSync(backups, { mode: 0o700 })
    // The names of the next 20 seconds.
    const stamp = (at: number) => new Date(at).toISOString().replaceAll(/[-:]|\.\d+/g, '')
    const now = Date.now()
    const planted = Array.from({ length: 20 }, (_, i) => `rock-legends-${stamp(now + i * 1000)}.json`)
    for (const name of planted) writeFileSync(join(backups, name), 'planted')
    const server = await serve(join(dir, 'db.json'), [
      '--backup-every',
      '1s',
      '--backup-dir',
      backups,
      '--log',
      'pretty',
    ])
    const numbered = () => readdirSync(backups).filter((name) => /Z-2\.json$/.test(name))
    await until(() => numbered().length >= 1, 15_000, 'a backup under a numbered name')
    await server.stop()
    for (const name of planted) expect(readFileSync(join(backups, name), 'utf8')).toBe('planted')
    for (const name of numbered()) expect((await runBinary(['verify', join(backups, name)])).code).toBe(0)
    expect(await server.stderr()).toContain('not a backup; this backup is written under another name')
  }, 60_000)

  test("the directory is made the user's alone when it is not (0700), and refused when another's is open", async () => {
    const dir = directory()
    const backups = join(dir, 'backups')
    mkdirSync(backups)
    chmodSync(backups, 0o1777)
    const server = await serve(join(dir, 'db.json'), [
      '--backup-every',
      '1h',
      '--backup-dir',
      backups,
      '--log',
      'pretty',
    ])
    expect(statSync(backups).mode & 0o7777).toBe(0o700)
    await server.stop()
    expect(await server.stderr()).toContain(`made the backup directory ${backups} 0700 (it was 1777)`)
    if (!canDropPrivileges) return
    // Another user's directory that anyone may write in: nothing this server writes there is safe.
    const shared = join(dir, 'shared')
    mkdirSync(shared)
    chownSync(shared, NOBODY, NOBODY)
    chmodSync(shared, 0o1777)
    const refused = await runBinary([
      '--data',
      join(dir, 'db.json'),
      '--port',
      '0',
      '--backup-every',
      '1h',
      '--backup-dir',
      shared,
    ])
    expect(refused.code).toBe(2)
    expect(refused.stderr).toContain(
      `the backup directory ${shared} (mode 1777, owned by uid ${NOBODY}) is not this user's`,
    )
    expect(refused.stderr).not.toContain('    at ')
  }, 60_000)

  test('a backup that fails is logged, leaves no file, and is tried again', async () => {
    const dir = directory()
    const backups = join(dir, 'backups')
    const server = await serve(join(dir, 'db.json'), [
      '--seed',
      '--backup-every',
      '1s',
      '--backup-dir',
      backups,
      '--log',
      'json',
    ])
    // The directory goes, and a file takes its name: every backup fails until it is back.
    rmSync(backups, { recursive: true })
    writeFileSync(backups, 'not a directory')
    await Bun.sleep(2500)
    rmSync(backups)
    mkdirSync(backups)
    await until(() => readdirSync(backups).some((name) => NAME.test(name)), 15_000, 'a backup after the failures')
    expect(readdirSync(backups).filter((name) => !NAME.test(name))).toEqual([])
    await server.stop()
    const log = await server.stderr()
    expect(log).toContain('a scheduled backup failed; it is tried again within a minute')
    expect(log).toContain('backup written to')
  }, 60_000)

  test('--backup-dir and --backup-keep need --backup-every; the values are checked', async () => {
    for (const args of [
      ['--backup-dir', 'x'],
      ['--backup-every', '0s'],
      ['--backup-every', '1h', '--backup-keep', '0'],
    ]) {
      const { code, stderr } = await runBinary(['--data', ':memory:', ...args])
      expect(code).toBe(2)
      expect(stderr).toContain('--backup-')
    }
  })
})

describe.skipIf(skipWithoutPostgres())('scheduled backups over PostgreSQL', () => {
  test('a replica with --backup-every writes sound backups of the database', async () => {
    const postgres = await testPostgres()
    const url = postgres.url(await postgres.freshDatabase())
    const dir = directory()
    await serve(url, ['--seed', '--backup-every', '1s', '--backup-dir', dir])
    await until(() => readdirSync(dir).some((name) => NAME.test(name)), 15_000, 'a backup')
    const [name] = readdirSync(dir).filter((each) => NAME.test(each))
    const verified = await runBinary(['verify', join(dir, name as string)])
    expect(verified.code).toBe(0)
    expect(verified.stdout).toContain('from a postgresql store')
  }, 60_000)
})
