import { lstatSync, statSync } from 'node:fs'
import { dirname } from 'node:path'
import { DataFileError } from './errors.ts'
import { foreignFileProblem } from './owned-file.ts'

const OTHERS_WRITE = 0o022
const STICKY = 0o1000

/**
 * Refuses, with a {@link DataFileError}, a data directory where another user could put a link or a file of theirs in
 * the place of the data file, its journal or its lock: one that group or others may write in, unless it is sticky
 * (like /tmp), where no one can remove or rename another's files; and any of those files, if present, that is a
 * link or not this user's own. The files are checked again each time one is opened; this says it once, up front.
 *
 * @example
 * checkDataDirectory('/srv/rock-legends/db.json') // throws when /srv/rock-legends is 0777 without the sticky bit
 */
export function checkDataDirectory(location: string): void {
  // Without POSIX owners and modes (Windows) there is nothing to check.
  if (process.getuid === undefined) return
  const directory = dirname(location)
  const { mode } = statSync(directory)
  if ((mode & OTHERS_WRITE) !== 0 && (mode & STICKY) === 0)
    throw new DataFileError(
      `${directory}, the directory of ${location}, may be written by other users (mode ${(mode & 0o7777).toString(8).padStart(4, '0')}) and is not sticky, so they could replace the data file, its journal or its lock: run \`chmod go-w ${directory}\` (or \`chmod +t\`), or choose another directory`,
    )
  for (const path of [location, `${location}.journal`, `${location}.lock`]) {
    const stats = lstatSync(path, { throwIfNoEntry: false })
    const problem = stats && foreignFileProblem(path, stats)
    if (problem) throw new DataFileError(problem)
  }
}
