/**
 * Scheduled backups of a running server (`--backup-every`): every interval, a backup of the store taken while the
 * server serves (`onlineBackup`: a moment's snapshot, then the text a thousand records at a time), written to the
 * backup directory under a name with its time (`rock-legends-20261125T210500Z.json`), whole or not at all
 * (`writeBackupFile`: a temporary name, fsync, rename); then the oldest past `keep` are removed. A backup that fails is
 * logged and tried again a minute later (or at the next interval, if sooner), and leaves no file under a final name.
 */
import { mkdirSync, readdirSync } from 'node:fs'
import { rm } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import type { Store } from '../store/store.ts'
import { writeBackupFile } from './backup-file.ts'
import type { StoreKind } from './backup-format.ts'
import { onlineBackup } from './online-backup.ts'

/** When and where scheduled backups go. */
export interface BackupSchedule {
  everyMs: number
  dir: string
  /** How many backups to keep; the oldest beyond go. */
  keep: number
}

/** What the schedule reports: each backup written, and each failure (it is tried again). */
export interface BackupEvents {
  written(file: string, ms: number): void
  failed(error: unknown): void
}

/** The names scheduled backups are written under: their time, so that the names sort as the times do. */
const NAME = /^rock-legends-\d{8}T\d{6}Z\.json$/

/** How soon a failed backup is tried again, at most. */
const RETRY_MS = 60_000

/** The directory's scheduled backups, oldest first. */
export function scheduledBackups(dir: string): string[] {
  return readdirSync(dir)
    .filter((name) => NAME.test(name))
    .sort()
}

/**
 * Starts taking backups of `store` on `schedule`; the directory is made (mode 0700: backups hold password hashes) at
 * once, so a directory that cannot be made stops the start-up. `stop()` ends the schedule and waits for a backup in
 * progress.
 */
export function scheduleBackups(store: Store, kind: StoreKind, schedule: BackupSchedule, events: BackupEvents) {
  const dir = resolve(schedule.dir)
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  let timer: ReturnType<typeof setTimeout> | undefined
  let running: Promise<void> | undefined
  let stopped = false

  const take = async (): Promise<boolean> => {
    const started = performance.now()
    try {
      const { takenAt, pieces } = await onlineBackup(store, kind)
      let file = join(dir, `rock-legends-${takenAt.replaceAll(/[-:]|\.\d+/g, '')}.json`)
      // Two backups in one second (a very short interval): the second waits for the next name.
      if (scheduledBackups(dir).includes(file.slice(dir.length + 1))) return true
      await writeBackupFile(file, pieces)
      events.written(file, performance.now() - started)
      for (const old of scheduledBackups(dir).slice(0, -schedule.keep)) {
        file = join(dir, old)
        await rm(file, { force: true })
      }
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
