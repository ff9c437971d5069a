import { constants, copyFileSync, existsSync, mkdirSync, renameSync, rmSync } from 'node:fs'
import { open } from 'node:fs/promises'
import { basename, dirname, join, resolve } from 'node:path'
import type { StoreDocument } from '../model/store-document.ts'
import { checkDataDirectory } from '../store/json-file/data-directory.ts'
import { DurableJsonFile, syncDirectory } from '../store/json-file/durable-file.ts'
import { lockDataFile } from '../store/json-file/lock.ts'
import { randomSuffix } from '../store/json-file/owned-file.ts'
import { readDataFile } from './read-data-file.ts'

/**
 * The name the data file (and, with `.journal`, its journal) is kept under after a restore (or, with `by` `copy`, a
 * copy) replaced it.
 */
export const asideName = (file: string, at: Date, by: 'restore' | 'copy' = 'restore') =>
  `${file}.before-${by}-${at.toISOString().replace(/[:.]/g, '-')}`

/**
 * Copies `from` to `to` whole or not at all: to a temporary name (one the server's clean-up of leftovers knows),
 * fsynced, then renamed. A copy, not a second name (a hard link): the server refuses a data file with two names.
 */
async function keepCopy(from: string, to: string): Promise<void> {
  const temp = join(dirname(to), `.${basename(to)}.${randomSuffix()}.tmp`)
  try {
    copyFileSync(from, temp, constants.COPYFILE_EXCL)
    const handle = await open(temp, 'r')
    try {
      await handle.sync()
    } finally {
      await handle.close()
    }
    renameSync(temp, to)
  } catch (error) {
    rmSync(temp, { force: true })
    throw error
  }
}

/**
 * Replaces the data file `file` (and its journal) with `content`, all or nothing, and keeps what it replaces aside:
 * answers the names the old data file and journal are kept under (the journal's is the data file's and `.journal`),
 * none when there were none. Holds the data file's lock throughout (a server that owns the file makes this throw
 * `DataFileLockedError` naming its pid, before anything is touched). The steps, each of which leaves the old data
 * or the new one at `file`, never a mix, whenever the process is killed:
 * 1. the data file and journal are copied to the aside names (the originals stay in place);
 * 2. a journal with entries is folded into the data file (written whole, renamed over it), then removed: the data
 *    file alone now holds the old data (replaying the journal again would be harmless, so a kill between is too);
 * 3. the new document is written to a temporary file, fsynced, and renamed over the data file.
 * A damaged old data file cannot be folded: its journal is removed without it (both are kept aside).
 */
export async function restoreDataFile(file: string, content: StoreDocument): Promise<string[]> {
  const location = prepareDataDirectory(file)
  const release = lockDataFile(location)
  try {
    return await replaceDataFile(location, content, 'restore')
  } finally {
    release()
  }
}

/** Creates the directory of the data file `file` if needed and checks it as a server would; answers the full path. */
export function prepareDataDirectory(file: string): string {
  const location = resolve(file)
  mkdirSync(dirname(location), { recursive: true, mode: 0o755 })
  checkDataDirectory(location)
  return location
}

/**
 * The steps of {@link restoreDataFile} for a caller that already holds the lock of `location` (a full path): keeps the
 * old data file and journal aside under the names of {@link asideName} for `by`, and answers them.
 */
export async function replaceDataFile(
  location: string,
  content: StoreDocument,
  by: 'restore' | 'copy',
): Promise<string[]> {
  const journal = `${location}.journal`
  const name = asideName(location, new Date(), by)
  const aside: string[] = []
  for (const [path, kept] of [
    [location, name],
    [journal, `${name}.journal`],
  ] as const)
    if (existsSync(path)) {
      await keepCopy(path, kept)
      aside.push(kept)
    }
  if (aside.length > 0) await syncDirectory(dirname(location))
  const target = new DurableJsonFile(location)
  if (existsSync(journal)) {
    const old = readDataFile(location)
    if (old.document && old.problems.length === 0) await target.write(old.document)
    rmSync(journal)
    await syncDirectory(dirname(location))
  }
  await target.write(content)
  return aside
}
