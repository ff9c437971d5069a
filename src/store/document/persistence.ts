import { type Static, Type } from '@sinclair/typebox'
import type { StoreMetrics } from '../../metrics/metrics.ts'
import { COLLECTIONS, StoreDocument, type StoredDocument } from '../../model/store-document.ts'
import { lazyCheck } from './document.ts'

const { counters, artists, albums, users, credentials, idempotency, history } = StoreDocument.properties

/**
 * The records one group commit created or changed (whole records: replay is an upsert), and the counters after it:
 * a line of a data file's journal, in the document's own schema. Lines written by earlier builds may hold records in
 * their older forms, as the data file may.
 */
export const JournalEntry = Type.Object({
  counters,
  artists: Type.Optional(artists),
  albums: Type.Optional(albums),
  users: Type.Optional(users),
  credentials: Type.Optional(credentials),
  /** Answers kept for idempotency keys in this commit. */
  idempotency,
  /** Changes added to the artists' histories, whole: replay appends them (the store keeps each artist's last ones). */
  history,
  /** Records removed by the commit, by id (albums only: nothing else is ever removed but dead credentials). */
  removed: Type.Optional(Type.Object({ albums: Type.Optional(Type.Array(Type.Integer({ minimum: 1 }))) })),
})

/** A journal line, as read. */
export type JournalEntry = Static<typeof JournalEntry>

/** Checks a journal line against {@link JournalEntry}, compiled at its first use. */
export const journalEntryCheck = lazyCheck(JournalEntry)

/**
 * How a {@link DocumentStore}'s changes reach (or do not reach) a disk. `snapshot` functions return the document as
 * it is at that moment, in fresh arrays of unchanging records, so it can be written while serving goes on.
 */
export interface Persistence {
  /** Makes one group commit's changes durable. */
  commit(entry: JournalEntry, snapshot: () => StoreDocument): Promise<void>
  /** Makes a whole new document durable (a restore). */
  replace(document: StoreDocument): Promise<void>
  /** Saves everything and releases the data file. */
  close(document: StoreDocument): Promise<void>
  /** From now on counts fsyncs, compactions and sizes into `metrics` (a data file's; memory has none). */
  instrument?(metrics: StoreMetrics): void
}

/** Persistence for `:memory:`: nothing to save. */
export const inMemory: Persistence = {
  commit: async () => {},
  replace: async () => {},
  close: async () => {},
}

/** Index of the record with `id` in an array sorted by id, or -1. */
export function indexById(records: readonly { id: number }[], id: number): number {
  let low = 0
  let high = records.length - 1
  while (low <= high) {
    const middle = (low + high) >>> 1
    const current = (records[middle] as { id: number }).id
    if (current === id) return middle
    if (current < id) low = middle + 1
    else high = middle - 1
  }
  return -1
}

/** Puts `record` into `records` (sorted by id), replacing the one with its id; returns the one replaced. */
export function upsert<R extends { id: number }>(records: R[], record: R): R | undefined {
  const last = records[records.length - 1]
  if (!last || last.id < record.id) {
    records.push(record)
    return undefined
  }
  const at = indexById(records, record.id)
  if (at >= 0) {
    const previous = records[at]
    records[at] = record
    return previous
  }
  // Not reached by the store (ids only grow), but replaying a journal must not depend on that.
  let position = records.findIndex((each) => each.id > record.id)
  if (position < 0) position = records.length
  records.splice(position, 0, record)
  return undefined
}

/**
 * Replays journal entries onto a document: records are upserted, then those removed removed, changes of the
 * histories added once, counters only move forward. Entries written
 * by earlier builds are brought to the current form with the rest of the document (upgrade.ts).
 */
export function replay(document: StoredDocument, entries: readonly JournalEntry[]): void {
  // Changes are added, not upserted: one the document holds already (a compaction that wrote the data file and died
  // before it emptied the journal) is not added again. Ids only grow, in the file and along the journal.
  let lastChange = 0
  for (const change of document.history ?? []) lastChange = Math.max(lastChange, change.id)
  for (const entry of entries) {
    for (const name of COLLECTIONS) {
      document.counters[name] = Math.max(document.counters[name], entry.counters[name])
      for (const record of entry[name] ?? []) upsert(document[name] as { id: number }[], record)
    }
    // In order: a later answer for the same key replaces an earlier one as the store loads them.
    if (entry.idempotency) document.idempotency = [...(document.idempotency ?? []), ...entry.idempotency]
    for (const id of entry.removed?.albums ?? []) {
      const at = indexById(document.albums, id)
      if (at >= 0) document.albums.splice(at, 1)
    }
    for (const change of entry.history ?? [])
      if (change.id > lastChange) {
        document.history ??= []
        document.history.push(change)
        lastChange = change.id
      }
  }
}
