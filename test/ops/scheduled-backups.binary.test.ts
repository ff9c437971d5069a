/**
 * Scheduled backups (`--backup-every`, `--backup-dir`, `--backup-keep`) against the compiled executable: backups are
 * written while the server serves, each sound (`rock-legends verify`), the oldest removed past the number kept; a
 * backup that fails is logged, leaves no file under a final name, and is tried again.
 */
import { describe, expect, test } from 'bun:test'
import { mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { binaryFixtures, runBinary } from '../support/binary.ts'
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
    const kept = readdirSync(backups)
    expect(kept.filter((name) => NAME.test(name))).toHaveLength(2)
    expect(kept.filter((name) => !NAME.test(name))).toEqual([])
    for (const name of kept) expect((await runBinary(['verify', join(backups, name)])).code).toBe(0)
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200)
    await server.stop()
    expect(await server.stderr()).toContain('backup written to')
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
