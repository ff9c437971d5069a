import { randomBytes } from 'node:crypto'
import { mkdirSync, readdirSync, rmSync } from 'node:fs'
import { open, readFile, rename, rm } from 'node:fs/promises'
import { basename, dirname, join, resolve } from 'node:path'
import { type Adapter, Low } from 'lowdb'
import { type Document, documentProblem } from './document.ts'
import { DocumentStore } from './document-store.ts'
import { lockDataFile } from './lock.ts'
import type { Store } from './store.ts'

/** Raised when the data file exists but cannot be read or is not a Rock Legends document. */
export class DataFileError extends Error {
  override name = 'DataFileError'
}

/**
 * lowdb adapter that acknowledges a write only once it is durable: the document goes to a unique temporary file
 * in the same directory, is fsynced, renamed over the data file, and the directory is fsynced so the rename itself
 * survives a power cut. A reader (or a crash) sees the old document or the new one, never a mix.
 */
export class DurableJsonFile implements Adapter<Document> {
  private readonly directory: string
  private readonly tempPrefix: string

  /** Adapter for the data file at `file`. */
  constructor(readonly file: string) {
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

  async write(data: Document): Promise<void> {
    // Serialised before the first await: changes made while this write is in flight belong to the next one.
    const text = `${JSON.stringify(data, null, 2)}\n`
    const temp = join(this.directory, `${this.tempPrefix}${randomBytes(6).toString('hex')}.tmp`)
    try {
      const handle = await open(temp, 'wx', 0o600)
      try {
        await handle.writeFile(text)
        await handle.sync()
      } finally {
        await handle.close()
      }
      await rename(temp, this.file)
    } catch (error) {
      await rm(temp, { force: true })
      throw error
    }
    const directory = await open(this.directory, 'r')
    try {
      await directory.sync()
    } finally {
      await directory.close()
    }
  }

  /** Removes temporary files a crash left behind; only safe while holding the lock. */
  removeLeftovers(): void {
    for (const name of readdirSync(this.directory))
      if (name.startsWith(this.tempPrefix) && name.endsWith('.tmp')) rmSync(join(this.directory, name), { force: true })
  }
}

/**
 * Opens (or creates) the data file at `path` for this process alone. Throws {@link DataFileError} when the file
 * cannot be used, leaving it untouched, and `DataFileLockedError` when another process holds it.
 */
export async function openJsonFileStore(path: string): Promise<Store> {
  const file = resolve(path)
  mkdirSync(dirname(file), { recursive: true })
  const release = lockDataFile(file)
  try {
    const adapter = new DurableJsonFile(file)
    adapter.removeLeftovers()
    const db = new Low<Document>(adapter, null as unknown as Document)
    await db.read()
    const created = db.data === null
    const store = new DocumentStore(db, async () => release())
    if (created) await db.write()
    return store
  } catch (error) {
    release()
    throw error
  }
}
