/**
 * Which scheduled backups to keep: generations, not only the newest few, so that an accident noticed after days or
 * weeks can still be undone. As restic's `forget --keep-last N --keep-daily 7 --keep-weekly 5` counts them: the
 * newest `keep`, then the newest backup of each of the last 7 days that have one, then the newest of each of the
 * last 5 weeks (Monday to Sunday, UTC) that have one; a backup chosen by any rule is kept. Days and weeks without a
 * backup (a server stopped for a while) are skipped rather than counted, so a pause never empties a generation.
 */

/** How many days and weeks keep their newest backup, besides the newest `keep`. */
export const DAILY_GENERATIONS = 7
export const WEEKLY_GENERATIONS = 5

/** A scheduled backup's name, and the moment it was taken (which its name says). */
export interface DatedBackup {
  name: string
  takenAt: Date
}

const DAY_MS = 86_400_000

/** The UTC day of `date`, as a number of days since the epoch. */
const dayOf = (date: Date) => Math.floor(date.getTime() / DAY_MS)

/** The week of `date`, weeks starting on Monday (the epoch was a Thursday: Monday 1970-01-05 starts week 1). */
const weekOf = (date: Date) => Math.floor((dayOf(date) + 3) / 7)

/**
 * The backups of `backups` to remove: every one that none of the rules keeps. `keep` is at least 1, so the newest
 * backup is never removed.
 */
export function backupsToRemove(backups: readonly DatedBackup[], keep: number): DatedBackup[] {
  const newestFirst = [...backups].sort((a, b) => b.takenAt.getTime() - a.takenAt.getTime())
  const kept = new Set<DatedBackup>(newestFirst.slice(0, Math.max(1, keep)))
  for (const [period, count] of [
    [dayOf, DAILY_GENERATIONS],
    [weekOf, WEEKLY_GENERATIONS],
  ] as const) {
    const seen = new Set<number>()
    for (const backup of newestFirst) {
      if (seen.size >= count) break
      const at = period(backup.takenAt)
      if (seen.has(at)) continue
      seen.add(at)
      kept.add(backup)
    }
  }
  return newestFirst.filter((backup) => !kept.has(backup)).reverse()
}
