import { mkdirSync, statSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { Low } from 'lowdb'
import { type Document, documentProblem } from './document.ts'
import { DocumentStore } from './document-store.ts'
import { DataFileError, DurableJsonFile } from './durable-file.ts'
import { Journal, type JournalEntry } from './journal.ts'
import { lockDataFile } from './lock.ts'
import { type Persistence, replay } from './persistence.ts'
import type { Store } from './store.ts'

export { DataFileError } from './durable-file.ts'

/** Tuning of {@link openJsonFileStore}. */
export interface JsonFileOptions {
  /**
   * Fold the journal into the data file once it holds this many bytes, or as many as the data file, whichever is
   * more: compaction costs the catalogue's size, so it must be rare when the catalogue is large.
   */
  compactAfterBytes?: number
}

const DEFAULT_COMPACT_AFTER = 8 * 1024 * 1024

/**
 * Durable persistence over a data file and its journal: each group commit appends one fsynced journal line (cost:
 * the size of the change); now and then, in the background, a snapshot is written over the data file and the
 * journal entries it contains are dropped. Replaying an entry twice is harmless, so a crash at any point of a
 * compaction leaves a file and a journal that together hold every acknowledged write.
 */
class JsonFilePersistence implements Persistence {
  private compacting: Promise<void> | undefined
  private dataBytes: number

  constructor(
    private readonly file: DurableJsonFile,
    private readonly journal: Journal,
    private readonly compactAfter: number,
    private readonly release: () => void,
  ) {
    this.dataBytes = statSync(file.file, { throwIfNoEntry: false })?.size ?? 0
  }

  async commit(entry: JournalEntry, snapshot: () => Document): Promise<void> {
    await this.journal.append(entry)
    // Taken right after the append, before the next batch is applied: exactly the durable state.
    if (!this.compacting && this.journal.bytes >= Math.max(this.compactAfter, this.dataBytes))
      this.compactSoon(snapshot())
  }

  /** Starts folding the journal into the data file without making anyone wait for it. */
  compactSoon(document: Document): void {
    this.compacting ??= this.compact(document)
      // A failed compaction loses nothing (the journal still holds it all); it is simply tried again later.
      .catch(() => {})
      .finally(() => {
        this.compacting = undefined
      })
  }

  private async compact(document: Document): Promise<void> {
    const covered = this.journal.bytes
    await this.file.write(document)
    this.dataBytes = statSync(this.file.file).size
    await this.journal.dropBefore(covered)
  }

  async replace(document: Document): Promise<void> {
    await this.compacting
    await this.compact(document)
  }

  async close(document: Document): Promise<void> {
    try {
      await this.compacting
      if (this.journal.bytes > 0) await this.compact(document)
    } finally {
      await this.journal.close()
      this.release()
    }
  }
}

/**
 * Opens (or creates) the data file at `path` for this process alone, replaying its journal. Throws
 * {@link DataFileError} when the file or journal cannot be used, leaving both untouched, and `DataFileLockedError`
 * when another process holds them.
 */
export async function openJsonFileStore(path: string, options: JsonFileOptions = {}): Promise<Store> {
  const location = resolve(path)
  mkdirSync(dirname(location), { recursive: true })
  const release = lockDataFile(location)
  try {
    const file = new DurableJsonFile(location)
    file.removeLeftovers()
    const db = new Low<Document>(file, null as unknown as Document)
    await db.read()
    const journal = new Journal(location)
    const entries = await journal.read()
    const created = db.data === null
    if (db.data && entries.length > 0) {
      replay(db.data, entries)
      const problem = documentProblem(db.data)
      if (problem) throw new DataFileError(`${journal.path} does not fit ${location}: ${problem}`)
    }
    const persistence = new JsonFilePersistence(
      file,
      journal,
      options.compactAfterBytes ?? DEFAULT_COMPACT_AFTER,
      release,
    )
    const store = new DocumentStore(db, persistence)
    if (created) {
      // A journal without its data file cannot be trusted to be complete.
      if (entries.length > 0) throw new DataFileError(`${journal.path} exists but ${location} does not`)
      await file.write(db.data)
    } else if (entries.length > 0) persistence.compactSoon(structuredClone(db.data))
    return store
  } catch (error) {
    release()
    throw error
  }
}
