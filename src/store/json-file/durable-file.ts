import { lstatSync, readdirSync, rmSync } from 'node:fs'
import { type FileHandle, rm } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'
import type { Adapter } from 'lowdb'
import { COLLECTIONS, type StoredDocument } from '../../model/store-document.ts'
import { documentProblem } from '../document/document.ts'
import { DataFileError, damagedDataFile } from './errors.ts'
import { type FileSystem, nodeFileSystem, writeAll } from './file-system.ts'
import { CREATE_NEW, FILE_MODE, openError, openOwned, READ_EXISTING, randomSuffix } from './owned-file.ts'

/** Makes a rename or a new file in `directory` survive a power cut. */
export async function syncDirectory(directory: string, fs: FileSystem = nodeFileSystem): Promise<void> {
  const handle = await fs.open(directory, 'r')
  try {
    await handle.sync()
  } finally {
    await handle.close()
  }
}

// Records are written this many at a time, yielding in between, so that saving a large catalogue never stalls
// the requests being served meanwhile.
const CHUNK = 2000

const writeText = (handle: FileHandle, text: string) => writeAll(handle, Buffer.from(text))

/** Writes `records` as the lines of a JSON array, one record per line. */
async function writeRecords(handle: FileHandle, records: readonly object[]): Promise<void> {
  for (let start = 0; start < records.length; start += CHUNK) {
    const lines = records.slice(start, start + CHUNK).map((record) => JSON.stringify(record))
    await writeText(handle, `${start === 0 ? '\n' : ',\n'}${lines.join(',\n')}`)
  }
}

/**
 * lowdb adapter that acknowledges a write only once it is durable: the document goes to a unique temporary file
 * in the same directory, is fsynced, renamed over the data file, and the directory is fsynced so the rename itself
 * survives a power cut. A reader (or a crash) sees the old document or the new one, never a mix. The file is plain
 * JSON with one record per line: readable, diffable, and loadable by lowdb or anything else.
 */
export class DurableJsonFile implements Adapter<StoredDocument> {
  private readonly directory: string
  private readonly tempPrefix: string

  /** Adapter for the data file at `file`, written through `fs`. */
  constructor(
    readonly file: string,
    private readonly fs: FileSystem = nodeFileSystem,
  ) {
    this.directory = dirname(file)
    this.tempPrefix = `.${basename(file)}.`
  }

  async read(): Promise<StoredDocument | null> {
    let text: string
    try {
      const handle = await openOwned(this.file, READ_EXISTING)
      if (!handle) return null
      try {
        text = await handle.readFile('utf8')
      } finally {
        await handle.close()
      }
    } catch (error) {
      if (error instanceof DataFileError) throw error
      throw new DataFileError(`cannot read ${this.file}: ${(error as Error).message}`)
    }
    let value: unknown
    try {
      value = JSON.parse(text)
    } catch (error) {
      throw damagedDataFile(this.file, `${this.file} is not valid JSON: ${(error as Error).message}`)
    }
    const problem = documentProblem(value)
    if (problem) throw damagedDataFile(this.file, `${this.file} is not a Rock Legends data file: ${problem}`)
    return value as StoredDocument
  }

  /**
   * Writes `data` durably. It must not change while this runs: the store hands in a snapshot (fresh arrays of
   * records that are never edited in place), so serving and writing go on meanwhile.
   */
  async write(data: StoredDocument): Promise<void> {
    // A name no one can guess, created exclusively: nothing planted beforehand can be written through.
    const temp = join(this.directory, `${this.tempPrefix}${randomSuffix()}.tmp`)
    let handle: FileHandle
    try {
      handle = await this.fs.open(temp, CREATE_NEW, FILE_MODE)
    } catch (error) {
      throw openError(temp, error)
    }
    try {
      try {
        await writeText(handle, `{"version":${data.version},"counters":${JSON.stringify(data.counters)}`)
        for (const name of COLLECTIONS) {
          await writeText(handle, `,\n"${name}":[`)
          await writeRecords(handle, data[name])
          await writeText(handle, data[name].length > 0 ? '\n]' : ']')
        }
        // The answers kept for idempotency keys, when there are any (a store that never had one writes none).
        if (data.idempotency?.length) {
          await writeText(handle, ',\n"idempotency":[')
          await writeRecords(handle, data.idempotency)
          await writeText(handle, '\n]')
        }
        // The artists' histories, a record a line like the collections; none at all before the first change.
        if (data.history && data.history.length > 0) {
          await writeText(handle, ',\n"history":[')
          await writeRecords(handle, data.history)
          await writeText(handle, '\n]')
        }
        await writeText(handle, '}\n')
        await handle.sync()
      } finally {
        await handle.close()
      }
      await this.fs.rename(temp, this.file)
    } catch (error) {
      await rm(temp, { force: true })
      throw error
    }
    await syncDirectory(this.directory, this.fs)
  }

  /**
   * Removes temporary files a crash left behind; only safe while holding the lock. Only our own are removed: in a
   * shared sticky directory another user's file of that name is none of ours (and not ours to delete).
   */
  removeLeftovers(): void {
    const uid = process.getuid?.()
    for (const name of readdirSync(this.directory)) {
      if (!name.startsWith(this.tempPrefix) || !name.endsWith('.tmp')) continue
      const path = join(this.directory, name)
      const stats = lstatSync(path, { throwIfNoEntry: false })
      // Removing a link removes the link, never what it points to.
      if (stats && (uid === undefined || stats.uid === uid)) rmSync(path, { force: true })
    }
  }
}
