import { lstatSync, readFileSync, statSync } from 'node:fs'
import type { StoreDocument, StoredDocument } from '../model/store-document.ts'
import { upgradeDocument } from '../model/upgrade.ts'
import { type JournalEntry, journalEntryCheck, replay } from '../store/document/persistence.ts'
import { foreignFileProblem } from '../store/json-file/owned-file.ts'
import { type Problem, storeProblems } from './store-problems.ts'

/** What {@link readDataFile} found: the document with its journal replayed, when both could be read, and why not. */
export interface DataFileRead {
  /**
   * The data file's document with every whole journal entry replayed, in this build's form: what a server would start
   * on.
   */
  document?: StoreDocument
  problems: Problem[]
  /** What is worth saying but is not a problem (a torn last journal line, which a server drops). */
  notes: string[]
  /** Whether the data file exists at all. */
  exists: boolean
}

/** The text of `path`, or undefined when there is no such file; other errors are problems. */
function textOf(path: string, problems: Problem[]): string | undefined {
  try {
    return readFileSync(path, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    problems.push({ where: path, what: `cannot be read: ${(error as Error).message}` })
    return undefined
  }
}

/** The whole entries of a journal's text, each line that is damaged named as a problem. */
function journalEntries(path: string, text: string, problems: Problem[], notes: string[]): JournalEntry[] {
  const entries: JournalEntry[] = []
  let offset = 0
  let line = 1
  while (offset < text.length) {
    const end = text.indexOf('\n', offset)
    if (end < 0) {
      notes.push(
        `${path}: the last ${Buffer.byteLength(text.slice(offset))} bytes are an incomplete line, a write that was never acknowledged; the server drops them at its next start`,
      )
      break
    }
    let value: unknown
    try {
      value = JSON.parse(text.slice(offset, end))
    } catch {
      value = undefined
    }
    if (journalEntryCheck().Check(value)) entries.push(value)
    else {
      const first = value === undefined ? undefined : journalEntryCheck().Errors(value).First()
      problems.push({
        where: `${path}:${line} (byte ${Buffer.byteLength(text.slice(0, offset))})`,
        what: first ? `not a journal entry: ${first.path || '/'}: ${first.message}` : 'not a JSON line',
      })
    }
    offset = end + 1
    line += 1
  }
  return entries
}

/** The identity of a file's current version: a compaction replaces the data file by a rename, a new inode. */
const identity = (path: string) => {
  const stats = statSync(path, { throwIfNoEntry: false })
  return stats ? `${stats.ino}:${stats.mtimeMs}:${stats.size}` : 'none'
}

/**
 * Reads the data file `file` and its journal as a server would start on them, without taking the lock and without
 * changing anything (a torn last journal line is left where it is), and names every problem of either, and of the two
 * together. A server that owns the file may fold the journal into it meanwhile: the two are read again until the
 * data file is the same before and after.
 */
export function readDataFile(file: string): DataFileRead {
  for (let attempt = 0; ; attempt++) {
    const before = identity(file)
    const read = readOnce(file)
    if (identity(file) === before || attempt >= 5) return read
  }
}

function readOnce(file: string): DataFileRead {
  const problems: Problem[] = []
  const notes: string[] = []
  const journalPath = `${file}.journal`
  // What a server would refuse to open (a link, a file with two names) is a problem too; whose the files are is not
  // judged here: the server may run as another user than this command.
  for (const path of [file, journalPath]) {
    const stats = lstatSync(path, { throwIfNoEntry: false })
    const mine = stats?.uid === process.getuid?.()
    const refused = stats && (mine || !stats.isFile()) ? foreignFileProblem(path, stats) : undefined
    if (refused) problems.push({ where: path, what: refused })
  }
  const text = textOf(file, problems)
  const journalText = textOf(journalPath, problems)
  const entries = journalText === undefined ? [] : journalEntries(journalPath, journalText, problems, notes)
  if (text === undefined) {
    if (problems.length === 0 && entries.length > 0)
      problems.push({ where: journalPath, what: `exists, but ${file} does not: a journal alone is not complete` })
    return { problems, notes, exists: false }
  }
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    problems.push({ where: file, what: `is not JSON: ${(error as Error).message}` })
    return { problems, notes, exists: true }
  }
  const own = storeProblems(value).map(({ where, what }) => ({ where: `${file}: ${where}`, what }))
  if (own.length > 0 || problems.length > 0) return { problems: [...problems, ...own], notes, exists: true }
  const document = value as StoredDocument
  if (entries.length > 0) {
    replay(document, entries)
    for (const { where, what } of storeProblems(document))
      problems.push({ where: `${file} with ${journalPath} replayed: ${where}`, what })
  }
  // The answers kept for idempotency keys are the running server's, never the records': a backup, a copy or a
  // restore's copy aside leaves them out, as `snapshot()` does.
  delete document.idempotency
  return { document: upgradeDocument(document), problems, notes, exists: true }
}
