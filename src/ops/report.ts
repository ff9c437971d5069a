import { printLine } from '../log.ts'
import { COLLECTIONS, type StoreDocument } from '../model/store-document.ts'
import { isDatabaseUrl } from '../store/open-store.ts'
import type { Problem } from './store-problems.ts'

/** The most problems listed one per line: past that, a count says how many more. */
const MAX_LISTED = 1000

/** How many records of each collection `content` holds, e.g. `33 artists, 12 albums, 1 user, 2 credentials`. */
export const count = (content: StoreDocument) =>
  COLLECTIONS.map((name) => `${content[name].length} ${content[name].length === 1 ? name.slice(0, -1) : name}`).join(
    ', ',
  )

/** Whether `content` holds any record at all (counters alone do not count). */
export const holdsRecords = (content: StoreDocument) => COLLECTIONS.some((name) => content[name].length > 0)

/** Lists `problems`, one a line, and how many there are. */
export function listProblems(label: string, problems: readonly Problem[]): void {
  for (const { where, what } of problems.slice(0, MAX_LISTED)) printLine(`${where}: ${what}`)
  if (problems.length > MAX_LISTED) printLine(`… and ${problems.length - MAX_LISTED} more`)
  printLine(`${label}: ${problems.length} problem${problems.length === 1 ? '' : 's'} found`)
}

/** The store's name for messages: a database's host, port and name (never its password), or the file as given. */
export async function storeName(data: string): Promise<string> {
  if (!isDatabaseUrl(data)) return data
  const { describeTarget } = await import('../store/sql/connect.ts')
  return `the database at ${describeTarget(data)}`
}
