import { readdirSync, rmSync } from 'node:fs'
import { type FileHandle, readFile, rm } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'
import type { Adapter } from 'lowdb'
import { type Document, documentProblem } from './document.ts'
import { DataFileError } from './errors.ts'
import { type FileSystem, nodeFileSystem, writeAll } from './file-system.ts'

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
export class DurableJsonFile implements Adapter<Document> {
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

  async read(): Promise<Document | null> {
    let text: string
    try {
      text = await readFile(this.file, 'utf8')
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null
      throw new DataFileError(`cannot read ${this.file}: ${(error as Error).message}`)
    }
    let value: unknown
    try {
      value = JSON.parse(text)
    } catch (error) {
      throw new DataFileError(`${this.file} is not valid JSON: ${(error as Error).message}`)
    }
    const problem = documentProblem(value)
    if (problem) throw new DataFileError(`${this.file} is not a Rock Legends data file: ${problem}`)
    return value as Document
  }

  /**
   * Writes `data` durably. It must not change while this runs: the store hands in a snapshot (fresh arrays of
   * records that are never edited in place), so serving and writing go on meanwhile.
   */
  async write(data: Document): Promise<void> {
    const suffix = Buffer.from(crypto.getRandomValues(new Uint8Array(6))).toString('hex')
    const temp = join(this.directory, `${this.tempPrefix}${suffix}.tmp`)
    try {
      const handle = await this.fs.open(temp, 'wx', 0o600)
      try {
        await writeText(handle, `{"version":${data.version},"counters":${JSON.stringify(data.counters)}`)
        for (const name of ['artists', 'albums', 'users', 'credentials'] as const) {
          await writeText(handle, `,\n"${name}":[`)
          await writeRecords(handle, data[name])
          await writeText(handle, data[name].length > 0 ? '\n]' : ']')
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

  /** Removes temporary files a crash left behind; only safe while holding the lock. */
  removeLeftovers(): void {
    for (const name of readdirSync(this.directory))
      if (name.startsWith(this.tempPrefix) && name.endsWith('.tmp')) rmSync(join(this.directory, name), { force: true })
  }
}
