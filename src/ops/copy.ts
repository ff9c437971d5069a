import { existsSync } from 'node:fs'
import { resolve } from 'node:path'
import pkg from '../../package.json' with { type: 'json' }
import { printLine } from '../log.ts'
import { COLLECTIONS, type StoreDocument } from '../model/store-document.ts'
import { DataFileError, DataFileLockedError } from '../store/json-file/errors.ts'
import { isDatabaseUrl } from '../store/open-store.ts'
import { writeBackupFile } from './backup-file.ts'
import { canonicalJson, contentChecksum, encodeBackup } from './backup-format.ts'
import { refuseConnectedDatabase, refuseOwnedFile } from './owners.ts'
import { readDataFile } from './read-data-file.ts'
import { RefusedError } from './refused-error.ts'
import { count, holdsRecords, listProblems, storeName } from './report.ts'
import { asideName, prepareDataDirectory, replaceDataFile } from './restore-data-file.ts'
import { type Problem, storeProblems } from './store-problems.ts'

/** What `rock-legends copy` is asked: the two stores, and whether a target that holds records may be replaced. */
export interface CopyRequest {
  /** The store to copy, a data file or a `postgres://` URL; it is left as it is. */
  from: string
  /** The store to fill, a data file or a `postgres://` URL. */
  to: string
  replace?: boolean
}

/** What one end of a copy holds now: its content when it could be read whole, and every problem. */
interface Reading {
  content?: StoreDocument
  problems: Problem[]
  exists: boolean
}

/** One end of a copy, held for the whole copy: no server can start on it meanwhile (a data file's lock). */
interface End {
  name: string
  read(): Promise<Reading>
  /** Replaces what it holds with `content`, all or nothing; answers where what it held is kept (none: nothing). */
  replace(content: StoreDocument, old: Reading): Promise<string[]>
  close(): Promise<void>
}

/** Why a store must not be in use, for each end, and what to do (`first`: stop the server, or the replicas). */
const WHY = {
  from: (first: string) =>
    `a copy reads a store only while no server uses it (one serving meanwhile could take writes the copy would miss); stop ${first} first`,
  to: (first: string) => `a copy fills a store only while no server uses it; stop ${first} first`,
} as const

/** A data file, locked as a server locks it; the target's directory is created if needed. */
async function fileEnd(file: string, role: 'from' | 'to'): Promise<End> {
  const { lockDataFile } = await import('../store/json-file/lock.ts')
  const location = role === 'to' ? prepareDataDirectory(file) : resolve(file)
  let release: () => void
  try {
    release = lockDataFile(location)
  } catch (error) {
    if (error instanceof DataFileError || error instanceof DataFileLockedError) throw error
    throw new RefusedError(`cannot take the lock of ${file}: ${(error as Error).message}`)
  }
  return {
    name: file,
    async read() {
      const read = readDataFile(location)
      for (const note of read.notes) printLine(`note: ${note}`)
      const content = read.problems.length === 0 ? read.document : undefined
      return { content, problems: read.problems, exists: read.exists || read.problems.length > 0 }
    },
    async replace(content) {
      try {
        return await replaceDataFile(location, content, 'copy')
      } catch (error) {
        if (error instanceof DataFileError || error instanceof DataFileLockedError) throw error
        // Every step leaves the old data or the new (restore-data-file.ts): a failure before the last rename, the old.
        throw new RefusedError(
          `the copy stopped: ${(error as Error).message}; ${file} holds the old data or the new, never a mix (rock-legends verify --data ${file} says it is sound; ${file}.before-copy-TIME beside it is what it held)`,
        )
      }
    },
    close: async () => release(),
  }
}

/** A database, opened as a replica would open it (migrated to this build's schema). */
async function databaseEnd(url: string): Promise<End> {
  const { forgetResetPoint, openDatabase, readDatabase, restoreDatabase } = await import('./database.ts')
  const name = await storeName(url)
  const store = await openDatabase(url)
  return {
    name,
    async read() {
      const content = await readDatabase(store)
      return { content, problems: storeProblems(content), exists: true }
    },
    async replace(content, old) {
      const kept: string[] = []
      if (old.content && holdsRecords(old.content)) {
        // Saved whole before anything is changed: a failure here changes nothing.
        const aside = resolve(`${asideName('rock-legends', new Date(), 'copy')}.json`)
        const meta = { takenAt: new Date().toISOString(), store: 'postgresql' as const, build: pkg.version }
        await writeBackupFile(aside, encodeBackup(meta, old.content))
        kept.push(aside)
      }
      try {
        await forgetResetPoint(url)
        await restoreDatabase(store, content)
      } catch (error) {
        throw new RefusedError(
          `the copy stopped: ${(error as Error).message}; ${name} holds the old data or the new, never a mix (one transaction)${kept.length > 0 ? `; what it held is kept in ${kept[0]}` : ''}`,
        )
      }
      return kept
    },
    close: () => store.close(),
  }
}

/** Whether `from` and `to` name the same store, or a data file and one of its companions. */
function sameStore(from: string, to: string): boolean {
  if (isDatabaseUrl(from) !== isDatabaseUrl(to)) return false
  if (isDatabaseUrl(from)) return from === to
  const [a, b] = [resolve(from), resolve(to)]
  return [a, `${a}.journal`, `${a}.lock`].includes(b) || [`${b}.journal`, `${b}.lock`].includes(a)
}

/** Where `after` first differs from `before`: a collection's size, or a record's id and the fields that differ. */
function firstDifference(before: StoreDocument, after: StoreDocument): string {
  for (const name of COLLECTIONS) {
    const [was, is] = [before[name], after[name]]
    if (was.length !== is.length) return `/${name} held ${was.length} records and holds ${is.length}`
    for (let at = 0; at < was.length; at++) {
      const [a, b] = [was[at] as Record<string, unknown>, is[at] as Record<string, unknown>]
      const fields = [...new Set([...Object.keys(a), ...Object.keys(b)])].filter(
        (key) => canonicalJson(a[key] ?? null) !== canonicalJson(b[key] ?? null),
      )
      // Field names only: the values may be password hashes.
      if (fields.length > 0) return `/${name}/${at} (id ${String(a.id)}): ${fields.join(', ')} differ`
    }
  }
  return `/counters or /version: ${canonicalJson(before.counters)} became ${canonicalJson(after.counters)}`
}

/**
 * `rock-legends copy --from SOURCE --to TARGET [--replace]`: moves everything the store SOURCE holds into the store
 * TARGET, ids and counters included, and checks that TARGET then holds exactly that. Throws {@link RefusedError}
 * (exit 1) without changing any record when either store is in use by a server (a data file's lock held; a database
 * with other connections), the source has problems (those `verify` finds), or the target holds records and `replace`
 * is not set (a target database may have been given this build's schema, as a replica would give it); with
 * `replace`, what the target held is kept aside first. The source is read and left as it is.
 */
export async function copyStore({ from, to, replace = false }: CopyRequest): Promise<void> {
  if (sameStore(from, to)) throw new RefusedError(`--from and --to name the same store (${from}): copy it to another`)
  // Both ends checked before anything is read or written, so a refusal changes nothing.
  for (const [store, role] of [
    [from, 'from'],
    [to, 'to'],
  ] as const) {
    if (isDatabaseUrl(store)) await refuseConnectedDatabase(store, WHY[role]('the replicas'))
    else await refuseOwnedFile(store, WHY[role]('the server'))
  }
  if (!isDatabaseUrl(from) && !existsSync(from)) throw new RefusedError(`${from} does not exist: nothing to copy`)
  const source = isDatabaseUrl(from) ? await databaseEnd(from) : await fileEnd(from, 'from')
  try {
    const read = await source.read()
    if (!read.content || read.problems.length > 0) {
      listProblems(source.name, read.problems)
      throw new RefusedError(`${source.name} has problems (above), so nothing was copied`)
    }
    const content = read.content
    const checksum = contentChecksum(content)
    printLine(`${source.name} is sound: ${count(content)}`)
    const target = isDatabaseUrl(to) ? await databaseEnd(to) : await fileEnd(to, 'to')
    try {
      const old = await target.read()
      if (!replace && old.content && holdsRecords(old.content))
        throw new RefusedError(
          `${target.name} is not empty: it holds ${count(old.content)}; copy into an empty store, or give --replace to replace it (what it holds is kept aside)`,
        )
      if (!replace && !old.content && old.exists) {
        listProblems(target.name, old.problems)
        throw new RefusedError(
          `${target.name} exists and has problems (above): give --replace to replace it (it is kept aside as it is)`,
        )
      }
      const kept = await target.replace(content, old)
      const copied = await target.read()
      const keptAside = kept.length > 0 ? `; what it held is kept in ${kept.join(' and ')}` : ''
      if (!copied.content || copied.problems.length > 0) {
        listProblems(target.name, copied.problems)
        throw new RefusedError(`${target.name} does not read back sound after the copy (above)${keptAside}`)
      }
      if (contentChecksum(copied.content) !== checksum)
        throw new RefusedError(
          `${target.name} does not read back as ${source.name} held it: ${firstDifference(content, copied.content)}${keptAside}`,
        )
      printLine(`copied ${source.name} to ${target.name}: ${count(content)}, ids and counters included`)
      printLine(`${target.name} reads back sound and the same: checksum ${checksum}`)
      printLine(
        kept.length > 0
          ? `what it held is kept in ${kept.join(' and ')}`
          : `${target.name} held no records: nothing was replaced`,
      )
      printLine(
        `${source.name} is left as it was: from now on, start ${isDatabaseUrl(to) ? "the replicas with --data and the database's URL" : `the server with --data ${to}`}`,
      )
    } finally {
      await target.close()
    }
  } finally {
    await source.close()
  }
}
