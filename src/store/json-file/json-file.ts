import { accessSync, constants, mkdirSync, statSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import type { StoreMetrics } from '../../metrics/metrics.ts'
import type { StoreDocument, StoredDocument } from '../../model/store-document.ts'
import { upgradeDocument } from '../../model/upgrade.ts'
import { documentProblem, emptyDocument } from '../document/document.ts'
import { DocumentStore } from '../document/document-store.ts'
import { type Persistence, replay } from '../document/persistence.ts'
import type { Store } from '../store.ts'
import { checkDataDirectory } from './data-directory.ts'
import { DurableJsonFile } from './durable-file.ts'
import { DataFileError, DataFileLockedError, damagedDataFile } from './errors.ts'
import { type FileSystem, nodeFileSystem } from './file-system.ts'
import { Journal, type JournalEntry, type TornLine } from './journal.ts'
import { lockDataFile } from './lock.ts'

export { DataFileError } from './errors.ts'

/** Tuning of {@link openJsonFileStore}. */
export interface JsonFileOptions {
  /**
   * Fold the journal into the data file once it holds this many bytes, or as many as the data file, whichever is
   * more: compaction costs the catalogue's size, so it must be rare when the catalogue is large.
   */
  compactAfterBytes?: number
  /** The file operations writes go through; tests pass one that fails on purpose (see `file-system.ts`). */
  fs?: FileSystem
  /** How often to try a commit again while the disk refuses them, in ms (availability.ts). */
  probeEveryMs?: number
  /** Hears of the torn last line of the journal, cut off as the store opens (the server logs it). */
  tornLine?: (line: TornLine) => void
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
  /**
   * The durable state the latest commit left while a compaction was running, and where the journal then ended: the
   * next one to fold in once that compaction is over, if the journal is still due. Without it, the writes acknowledged
   * while a compaction the disk then refused was running would wait in the journal for some later write to start
   * another, and the last write before a quiet spell has none.
   */
  private behind: { document: StoreDocument; upTo: number } | undefined
  private dataBytes: number
  private metrics: StoreMetrics | undefined

  constructor(
    private readonly file: DurableJsonFile,
    private readonly journal: Journal,
    private readonly compactAfter: number,
    private readonly release: () => void,
  ) {
    this.dataBytes = statSync(file.file, { throwIfNoEntry: false })?.size ?? 0
  }

  async commit(entry: JournalEntry, snapshot: () => StoreDocument): Promise<void> {
    await this.journal.append(entry)
    if (!this.due) return
    // Taken right after the append, before the next batch is applied: exactly the durable state.
    if (this.compacting) this.behind = { document: snapshot(), upTo: this.journal.end }
    else this.compactSoon(snapshot())
  }

  /**
   * Whether the journal has grown enough to fold: as large as the data file, or `compactAfter` if that is more, since
   * compaction costs the catalogue's size.
   */
  private get due(): boolean {
    return this.journal.bytes >= Math.max(this.compactAfter, this.dataBytes)
  }

  /** Starts folding the journal into the data file without making anyone wait for it. */
  compactSoon(document: StoreDocument): void {
    this.compacting ??= this.foldFrom(document, this.journal.end)
  }

  /**
   * Folds `document` in, then what the commits meanwhile left {@link behind} if the journal is still due (it is after a
   * failure: it still holds everything); never rejects.
   */
  private async foldFrom(document: StoreDocument, upTo: number): Promise<void> {
    let next: typeof this.behind = { document, upTo }
    while (next) {
      // A failed compaction loses nothing (the journal still holds it all); it is simply tried again.
      await this.compact(next.document, next.upTo).catch(() => {})
      next = this.due ? this.behind : undefined
      this.behind = undefined
    }
    this.compacting = undefined
  }

  /** Writes `document` over the data file, then drops the journal's entries up to `upTo`, which it holds. */
  private async compact(document: StoredDocument, upTo = this.journal.end): Promise<void> {
    try {
      await this.file.write(document)
      await this.journal.dropBefore(upTo)
      // Only now: a compaction that wrote the data file but could not shorten the journal is still owed.
      this.dataBytes = statSync(this.file.file).size
    } catch (error) {
      this.metrics?.compactionFailures.inc()
      throw error
    }
    this.metrics?.compactions.inc()
  }

  instrument(metrics: StoreMetrics): void {
    this.metrics = metrics
    this.journal.metrics = metrics
    // The data file's size as the disk has it now: a stat per scrape, never per request.
    metrics.files = {
      journalBytes: () => this.journal.bytes,
      dataFileBytes: () => statSync(this.file.file, { throwIfNoEntry: false })?.size ?? 0,
    }
  }

  async replace(document: StoreDocument): Promise<void> {
    await this.compacting
    // The journal is emptied first, by folding it into the data file as the disk holds them: were the new document
    // written first and the journal then failed to empty, its entries would be replayed over the new document at
    // the next start. This way a failure at any step leaves a data file and a journal that agree.
    if (this.journal.bytes > 0) await this.compact(await this.durableDocument())
    await this.file.write(document)
    this.dataBytes = statSync(this.file.file).size
  }

  /** What the data file and the journal hold together: every acknowledged write. */
  private async durableDocument(): Promise<StoredDocument> {
    const document = (await this.file.read()) ?? emptyDocument()
    replay(document, await this.journal.read())
    return document
  }

  async close(document: StoreDocument): Promise<void> {
    try {
      await this.compacting
      if (this.journal.bytes > 0) await this.compact(document)
    } catch (error) {
      throw new DataFileError(
        `could not fold ${this.journal.path} into ${this.file.file} (${(error as Error).message}); nothing is lost: the journal holds every acknowledged write, and the next start replays it`,
      )
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
  const fs = options.fs ?? nodeFileSystem
  const release = claim(location)
  try {
    writable(location)
    writable(`${location}.journal`)
    const file = new DurableJsonFile(location, fs)
    file.removeLeftovers()
    const read = await file.read()
    const journal = new Journal(location, fs, options.tornLine)
    const entries = await journal.read()
    if (read && entries.length > 0) {
      replay(read, entries)
      const problem = documentProblem(read)
      if (problem) throw damagedDataFile(location, `${journal.path} does not fit ${location}: ${problem}`)
    }
    // Files written by earlier builds are brought to the current form (model/upgrade.ts).
    const document = read ? upgradeDocument(read) : emptyDocument()
    const persistence = new JsonFilePersistence(
      file,
      journal,
      options.compactAfterBytes ?? DEFAULT_COMPACT_AFTER,
      release,
    )
    // Copied before the store takes the kept idempotency answers out of the document into its table.
    const folded = read && entries.length > 0 ? structuredClone(document) : undefined
    const store = new DocumentStore(document, persistence, undefined, options.probeEveryMs)
    if (!read) {
      // A journal without its data file cannot be trusted to be complete.
      if (entries.length > 0) throw damagedDataFile(location, `${journal.path} exists but ${location} does not`)
      await file.write(document).catch((error: Error) => {
        throw new DataFileError(`cannot create ${location}: ${error.message}`)
      })
    } else if (folded) persistence.compactSoon(folded)
    return store
  } catch (error) {
    release()
    throw error
  }
}

/**
 * Creates the data file's directory if it is missing, checks that no other user can slip a file or link of theirs
 * into it, and locks the file. What stops any of that (a directory that cannot be created or written in, or that
 * others may write in) is a {@link DataFileError}: one line naming the place and the reason, not a stack.
 */
function claim(location: string): () => void {
  const directory = dirname(location)
  try {
    // Never writable by others, whatever the umask: the check below would refuse the directory just made.
    mkdirSync(directory, { recursive: true, mode: 0o755 })
  } catch (error) {
    throw new DataFileError(`cannot create the directory ${directory} for ${location}: ${(error as Error).message}`)
  }
  checkDataDirectory(location)
  try {
    return lockDataFile(location)
  } catch (error) {
    if (error instanceof DataFileLockedError || error instanceof DataFileError) throw error
    throw new DataFileError(
      `cannot write in ${directory}, the directory of ${location} (the server keeps its lock, journal and temporary files there): ${(error as Error).message}`,
    )
  }
}

/**
 * Refuses an existing file this process may not write: someone made it read-only on purpose, and replacing it
 * (which only needs a writable directory) would quietly undo that. Start the server on a writable copy instead.
 */
function writable(path: string): void {
  try {
    accessSync(path, constants.W_OK)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT') return
    throw new DataFileError(
      `${path} is read-only (${code}): the server would not be able to save changes to it. Make it writable, or start on a writable copy.`,
    )
  }
}
