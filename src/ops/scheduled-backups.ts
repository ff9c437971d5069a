/**
 * Scheduled backups of a running server (`--backup-every`): every interval, a backup of the store taken while the
 * server serves (`onlineBackup`: a moment's snapshot, then the text a thousand records at a time), written to the
 * backup directory under a name with its time (`rock-legends-20261125T210500Z.json`), whole or not at all
 * (`writeBackupFile`: a temporary name, fsync, rename); then the backups no generation keeps are removed
 * (src/ops/backup-generations.ts). A backup that fails is logged and tried again a minute later (or at the next
 * interval, if sooner), and leaves no file under a final name.
 *
 * The directory is this user's alone (mode 0700: backups hold password hashes), made so if it is not, and refused
 * when another user could plant or remove files in it. Only backups of this user's are ever removed, recognised by
 * what they are (a regular file of this user's, not a link, that begins as a backup does), not by their names: a
 * file planted under a backup's name is left alone, and said so.
 */
import {
  chmodSync,
  closeSync,
  constants,
  fstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readSync,
  statSync,
} from 'node:fs'
import { rm } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { READ_EXISTING } from '../store/json-file/owned-file.ts'
import type { Store } from '../store/store.ts'
import { BackupDirError } from './backup-dir-error.ts'
import { writeBackupFile } from './backup-file.ts'
import { BACKUP_FORMAT, type StoreKind } from './backup-format.ts'
import { backupsToRemove, type DatedBackup } from './backup-generations.ts'
import { onlineBackup } from './online-backup.ts'

/** When and where scheduled backups go. */
export interface BackupSchedule {
  everyMs: number
  dir: string
  /** How many of the newest backups to keep, besides the newest of each day and week (backup-generations.ts). */
  keep: number
}

/** What the schedule reports: each backup written, removed or left alone, and each failure (it is tried again). */
export interface BackupEvents {
  written(file: string, ms: number): void
  failed(error: unknown): void
  /** A backup no generation keeps any more was removed. */
  removed(file: string): void
  /** A file under a backup's name that this server did not write, left alone: `why` says what it is. */
  foreign(file: string, why: string): void
  /** The directory was this user's but others could read or write it: it is 0700 now. */
  tightened(dir: string, mode: number): void
}

/** The names scheduled backups are written under: their time (and a number, past a name taken by another file). */
const NAME = /^rock-legends-(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z(?:-\d+)?\.json$/

/** How soon a failed backup is tried again, at most. */
const RETRY_MS = 60_000

/** The number a backup's name carries after its time (`…Z-2.json`), 1 for none. */
const numberOf = (name: string) => Number(/Z-(\d+)\.json$/.exec(name)?.[1] ?? 1)

/** The directory's files under scheduled backups' names (this server's or not), oldest first. */
export function scheduledBackups(dir: string): string[] {
  return readdirSync(dir)
    .filter((name) => NAME.test(name))
    .sort((a, b) => takenAt(a).getTime() - takenAt(b).getTime() || numberOf(a) - numberOf(b))
}

/** When the backup `name` was taken, as its name says. */
function takenAt(name: string): Date {
  const [, year, month, day, hour, minute, second] = (NAME.exec(name) ?? []).map(Number)
  return new Date(Date.UTC(year ?? 0, (month ?? 1) - 1, day, hour, minute, second))
}

const OWN_START = `{"format":"${BACKUP_FORMAT}"`

/**
 * Why `file` is not a backup of this server's (`undefined` when it is): a link, not a regular file, a file of another
 * user, or one that does not begin as a backup does. Nothing is followed, and what is checked is the file opened
 * (without waiting, should it be a pipe), not its name.
 */
function notOurs(file: string): string | undefined {
  let fd: number
  try {
    fd = openSync(file, READ_EXISTING | (constants.O_NONBLOCK ?? 0))
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT') return 'gone'
    return code === 'ELOOP' || code === 'EMLINK' ? 'a link' : 'a file that cannot be read'
  }
  try {
    const stats = fstatSync(fd)
    if (!stats.isFile()) return 'not a regular file'
    const uid = process.geteuid?.()
    if (uid !== undefined && stats.uid !== uid) return `a file of another user (uid ${stats.uid})`
    const head = Buffer.alloc(OWN_START.length)
    const read = readSync(fd, head, 0, head.length, 0)
    return head.toString('utf8', 0, read) === OWN_START ? undefined : 'not a backup'
  } finally {
    closeSync(fd)
  }
}

/**
 * The backups of this user's in `dir` under scheduled backups' names, oldest first: what shows that a store was
 * backed up there. Anything else under such names (another user's file, a link, not a backup) is not counted.
 */
export function backupsIn(dir: string): string[] {
  return scheduledBackups(dir).filter((name) => notOurs(join(dir, name)) === undefined)
}

/**
 * Makes `dir` ready for backups: made if missing (0700), made 0700 if it is this user's and open to others, and
 * refused ({@link BackupDirError}) if it is not a directory, or if another user could plant or remove files in it:
 * one owned by anyone but this user or root, or by root and writable by others. Returns the mode it had when that
 * was changed.
 */
export function prepareBackupDir(dir: string): number | undefined {
  let stats: ReturnType<typeof statSync>
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 })
    stats = statSync(dir)
  } catch (error) {
    throw new BackupDirError(`cannot make the backup directory ${dir}: ${(error as Error).message}`)
  }
  if (!stats.isDirectory()) throw new BackupDirError(`the backup directory ${dir} is not a directory`)
  const uid = process.geteuid?.()
  if (uid === undefined) return undefined
  const mode = stats.mode & 0o7777
  if (stats.uid === uid) {
    if ((mode & 0o7077) === 0) return undefined
    try {
      chmodSync(dir, 0o700)
    } catch (error) {
      throw new BackupDirError(`cannot make the backup directory ${dir} 0700: ${(error as Error).message}`)
    }
    return mode
  }
  if (stats.uid !== 0 || (mode & 0o022) !== 0)
    throw new BackupDirError(
      `the backup directory ${dir} (mode ${mode.toString(8)}, owned by uid ${stats.uid}) is not this user's (uid ${uid}): another user could plant or remove backups there. Use a directory of this user's own, or let the server make one (it makes it 0700)`,
    )
  return undefined
}

/**
 * Starts taking backups of `store` on `schedule`; the directory is prepared at once (see {@link prepareBackupDir}),
 * so a directory that cannot be used stops the start-up. `stop()` ends the schedule and waits for a backup in
 * progress.
 */
export function scheduleBackups(store: Store, kind: StoreKind, schedule: BackupSchedule, events: BackupEvents) {
  const dir = resolve(schedule.dir)
  const was = prepareBackupDir(dir)
  if (was !== undefined) events.tightened(dir, was)
  let timer: ReturnType<typeof setTimeout> | undefined
  let running: Promise<void> | undefined
  let stopped = false

  // Each file left alone is named once, not at every backup.
  const named = new Set<string>()

  /**
   * The name of a backup taken at `stamp`: its time, or, when a file that is not one of this server's holds that
   * name, its time and a number; `undefined` when this second's backup is written already (a very short interval).
   */
  const nameFor = (stamp: string): string | undefined => {
    const taken = new Set(readdirSync(dir))
    const name = `rock-legends-${stamp}.json`
    if (!taken.has(name)) return name
    const why = notOurs(join(dir, name))
    if (why === undefined) return undefined
    named.add(name)
    events.foreign(join(dir, name), `${why}; this backup is written under another name`)
    for (let n = 2; n < 100; n++)
      if (!taken.has(`rock-legends-${stamp}-${n}.json`)) return `rock-legends-${stamp}-${n}.json`
    throw new Error(`every name for the backup of ${stamp} in ${dir} is taken by a file this server did not write`)
  }

  /** Removes the backups of this server's that no generation keeps; names what it leaves alone. */
  const rotate = async () => {
    const own: DatedBackup[] = []
    for (const name of scheduledBackups(dir)) {
      const why = notOurs(join(dir, name))
      if (why === undefined) own.push({ name, takenAt: takenAt(name) })
      else if (why !== 'gone' && !named.has(name)) {
        named.add(name)
        events.foreign(join(dir, name), why)
      }
    }
    for (const { name } of backupsToRemove(own, schedule.keep)) {
      await rm(join(dir, name), { force: true })
      events.removed(join(dir, name))
    }
  }

  const take = async (): Promise<boolean> => {
    const started = performance.now()
    try {
      const { takenAt: at, pieces } = await onlineBackup(store, kind)
      const name = nameFor(at.replaceAll(/[-:]|\.\d+/g, ''))
      if (name === undefined) return true
      const file = join(dir, name)
      await writeBackupFile(file, pieces)
      events.written(file, performance.now() - started)
      await rotate()
      return true
    } catch (error) {
      events.failed(error)
      return false
    }
  }

  const next = (ms: number) => {
    if (stopped) return
    timer = setTimeout(() => {
      running = take().then((ok) => {
        running = undefined
        next(ok ? schedule.everyMs : Math.min(RETRY_MS, schedule.everyMs))
      })
    }, ms)
    // A schedule never keeps the process alive by itself.
    timer.unref?.()
  }
  next(schedule.everyMs)

  return {
    stop: async () => {
      stopped = true
      clearTimeout(timer)
      await running
    },
  }
}
