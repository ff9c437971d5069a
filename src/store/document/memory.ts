import type { StoreDocument } from '../../model/store-document.ts'
import type { ChangeHub } from '../changes.ts'
import type { Store } from '../store.ts'
import { copyLists } from './document.ts'
import { DocumentStore } from './document-store.ts'
import { inMemory } from './persistence.ts'

/** A store that lives and dies with the process (`--data :memory:`): for tests, demos and fixtures. */
export function openMemoryStore(): Store {
  return new DocumentStore(null, inMemory)
}

/**
 * A store in memory that starts as `snapshot` (from a document store), announcing its changes on `changes`. It
 * shares the snapshot's records, which no store edits in place (records.ts freezes them), and copies only the lists
 * that hold them: a fixture namespace starts in time and memory proportional to the number of records, never to
 * their size, and the snapshot stays as it was.
 */
export function openMemoryStoreFrom(snapshot: StoreDocument, changes?: ChangeHub): DocumentStore {
  return new DocumentStore(copyLists(snapshot), inMemory, changes)
}
