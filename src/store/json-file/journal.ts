import { type FileHandle, rm } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'
import type { StoreMetrics } from '../../metrics/metrics.ts'
import { type JournalEntry, journalEntryCheck } from '../document/persistence.ts'
import { syncDirectory } from './durable-file.ts'
import { DataFileError, damagedDataFile } from './errors.ts'
import { type FileSystem, nodeFileSystem, writeAll } from './file-system.ts'
import {
  APPEND_EXISTING,
  APPEND_NEW,
  CREATE_NEW,
  checkOwned,
  FILE_MODE,
  openError,
  openOwned,
  READ_EXISTING,
  randomSuffix,
} from './owned-file.ts'

export type { JournalEntry }

/**
 * The torn last line of a journal, cut off as it was read: the tail of an append the process died making, which was
 * never acknowledged. `at` is the byte where it began (the end of the whole entries), `bytes` how long it was.
 */
export interface TornLine {
  journal: string
  at: number
  bytes: number
}

/**
 * The append-only log beside a data file (`db.json.journal`): one JSON line per group commit, fsynced before the
 * commit is acknowledged. Appending costs the size of the change, not of the catalogue; compaction folds the log
 * back into the data file now and then. Replaying an entry twice is harmless, which keeps compaction crash-safe.
 */
export class Journal {
  private handle: FileHandle | undefined
  private size = 0
  /** Where the file starts in the log ever appended: the bytes compactions have dropped before it. */
  private start = 0
  /** Set when a failed append may have left a partial line that still has to be cut off. */
  private damaged = false
  // Appends and rewrites of the file take turns.
  private turn: Promise<unknown> = Promise.resolve()
  /** Where the time of each fsync is counted (`--metrics`); none by default. */
  metrics: StoreMetrics | undefined

  /**
   * The journal of the data file at `file`, written through `fs`; `torn` hears of a torn last line {@link read} cut
   * off (the server logs it).
   */
  constructor(
    readonly file: string,
    private readonly fs: FileSystem = nodeFileSystem,
    private readonly torn?: (line: TornLine) => void,
  ) {}

  /** The journal's path. */
  get path(): string {
    return `${this.file}.journal`
  }

  /** How many bytes of entries the journal holds. */
  get bytes(): number {
    return this.size
  }

  /**
   * Where the journal ends, as a position in everything ever appended to it since it was opened: unlike a byte offset
   * in the file, a position stays valid across compactions, for {@link dropBefore}.
   */
  get end(): number {
    return this.start + this.size
  }

  /**
   * Reads every entry. A last line that is incomplete was never acknowledged (the process died while appending
   * it): it is dropped and cut off, and `torn` told. Anything else that does not parse means the file is damaged.
   */
  async read(): Promise<JournalEntry[]> {
    let text: string
    try {
      const handle = await openOwned(this.path, READ_EXISTING)
      if (!handle) return []
      try {
        text = await handle.readFile('utf8')
      } finally {
        await handle.close()
      }
    } catch (error) {
      if (error instanceof DataFileError) throw error
      throw new DataFileError(`cannot read ${this.path}: ${(error as Error).message}`)
    }
    const entries: JournalEntry[] = []
    let offset = 0
    while (offset < text.length) {
      const end = text.indexOf('\n', offset)
      const line = text.slice(offset, end < 0 ? text.length : end)
      const entry = end < 0 ? undefined : parseEntry(line)
      if (!entry) {
        if (text.slice(offset).includes('\n'))
          throw damagedDataFile(
            this.file,
            `${this.path} is damaged at byte ${Buffer.byteLength(text.slice(0, offset))}`,
          )
        break // the torn tail of an append that was never acknowledged
      }
      entries.push(entry)
      offset = end + 1
    }
    this.size = Buffer.byteLength(text.slice(0, offset))
    const length = Buffer.byteLength(text)
    if (this.size < length) {
      await this.cut()
      this.torn?.({ journal: this.path, at: this.size, bytes: length - this.size })
    }
    return entries
  }

  /** Appends one entry and makes it durable. */
  append(entry: JournalEntry): Promise<void> {
    return this.take(async () => {
      if (this.damaged) await this.cut()
      const line = Buffer.from(`${JSON.stringify(entry)}\n`)
      const handle = await this.open()
      try {
        await writeAll(handle, line, this.size)
        const metrics = this.metrics
        const synced = metrics ? performance.now() : 0
        await handle.datasync()
        metrics?.fsync.observe((performance.now() - synced) / 1000)
      } catch (error) {
        // Whatever part of the line reached the file must go before the next append lands behind it.
        this.damaged = true
        await this.cut().catch(() => {})
        throw error
      }
      this.size += line.length
    })
  }

  /** Keeps only the entries after `position` (an {@link end}), once everything before it is safely in the data file. */
  dropBefore(position: number): Promise<void> {
    return this.take(async () => {
      const offset = position - this.start
      if (offset <= 0) return
      const handle = await this.open()
      const tail = Buffer.alloc(this.size - offset)
      const { bytesRead } = tail.length > 0 ? await handle.read(tail, 0, tail.length, offset) : { bytesRead: 0 }
      if (bytesRead !== tail.length) throw new Error(`read ${bytesRead} of the ${tail.length} bytes to keep`)
      // A name no one can guess, created exclusively: a link planted beside the journal is never written through.
      const temp = join(dirname(this.path), `.${basename(this.path)}.${randomSuffix()}.tmp`)
      let next: FileHandle
      try {
        next = await this.fs.open(temp, CREATE_NEW, FILE_MODE)
      } catch (error) {
        throw openError(temp, error)
      }
      try {
        try {
          await writeAll(next, tail)
          await next.sync()
        } finally {
          await next.close()
        }
        await this.close()
        await this.fs.rename(temp, this.path)
      } catch (error) {
        await rm(temp, { force: true })
        throw error
      }
      // The file now holds only the tail, whatever happens next: appends must land right after it.
      this.size = tail.length
      this.start = position
      await syncDirectory(dirname(this.path), this.fs)
    })
  }

  /** Closes the file. */
  async close(): Promise<void> {
    const handle = this.handle
    this.handle = undefined
    await handle?.close()
  }

  private async open(): Promise<FileHandle> {
    this.handle ??= await this.openFile()
    return this.handle
  }

  /**
   * Opens the journal to append to it, never through a link, and only if it is our own file; creates it (it must
   * not exist then, not even as a dangling link) when it is missing.
   */
  private async openFile(): Promise<FileHandle> {
    const existing = await openOwned(this.path, APPEND_EXISTING, this.fs)
    if (existing) return existing
    try {
      return await checkOwned(await this.fs.open(this.path, APPEND_NEW, FILE_MODE), this.path)
    } catch (error) {
      throw openError(this.path, error)
    }
  }

  /** Truncates the file to the entries known to be whole. */
  private async cut(): Promise<void> {
    const handle = await this.open()
    await handle.truncate(this.size)
    await handle.sync()
    this.damaged = false
  }

  private take<R>(task: () => Promise<R>): Promise<R> {
    const result = this.turn.then(task)
    this.turn = result.catch(() => {})
    return result
  }
}

function parseEntry(line: string): JournalEntry | undefined {
  try {
    const value: unknown = JSON.parse(line)
    return journalEntryCheck().Check(value) ? value : undefined
  } catch {
    return undefined
  }
}
