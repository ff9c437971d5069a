/**
 * The guard against a start that would silently replace lost data. A data file that is missing is created empty, as
 * on a first start; but when the place shows that it existed (the lock of a server that served over it remains, a
 * restore's copy of it lies beside it, or the scheduled backups' directory holds backups of this user's), the file
 * was lost, and a new empty store, seeded with the demo catalogue or not, would serve in its place while the next
 * scheduled backups rotated the good ones away. So such a start is refused, saying how to restore; starting afresh
 * there takes `--allow-new-data`. `rock-legends users add`, which may make the data file before the first start,
 * asks the same.
 */
import { existsSync, readdirSync } from 'node:fs'
import { basename, dirname, join, resolve } from 'node:path'
import { lockShowsServed } from '../store/json-file/lock.ts'
import { backupsIn } from './scheduled-backups.ts'

/** The entries of `dir`, or none when it cannot be read (not a directory, no permission): it then shows nothing. */
function entriesOf(dir: string, read: (dir: string) => string[]): string[] {
  try {
    return read(dir)
  } catch {
    return []
  }
}

/**
 * Why a missing data file at `file` was lost rather than never made, or `undefined` when nothing shows it existed.
 * `backupDir` is where scheduled backups go, when they are scheduled.
 */
export function lostDataFileProblem(file: string, backupDir?: string): string | undefined {
  const location = resolve(file)
  if (existsSync(location)) return undefined
  const signs: string[] = []
  if (lockShowsServed(location))
    signs.push(`its lock file ${location}.lock remains from a server that served over it and did not stop cleanly`)
  const name = basename(location)
  const directory = dirname(location)
  const aside = entriesOf(directory, readdirSync).filter((entry) => entry.startsWith(`${name}.before-restore-`))
  if (aside.length > 0) signs.push(`${join(directory, aside.sort().at(-1) as string)} is a restore's copy of it`)
  const backups = backupDir === undefined ? undefined : resolve(backupDir)
  const found = backups === undefined ? [] : entriesOf(backups, backupsIn)
  const newest = found.at(-1)
  if (backups && newest)
    signs.push(`${backups} holds ${found.length} backup${found.length === 1 ? '' : 's'} (the newest ${newest})`)
  if (signs.length === 0) return undefined
  const restore =
    backups && newest
      ? `\`rock-legends restore ${join(backups, newest)} --data ${location}\``
      : `\`rock-legends restore BACKUP --data ${location}\``
  return `${location} is missing, but it existed: ${signs.join('; ')}. Nothing was started, so nothing was replaced. To get the data back, restore a backup: ${restore}. To start a new, empty store there instead, start the server once with --allow-new-data.`
}
