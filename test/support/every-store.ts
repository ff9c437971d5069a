/**
 * The three stores a store test runs each case on: the in-memory document store, a JSON data file and PostgreSQL
 * (skipped where the machine has none, see `skipWithoutPostgres`). Registers the hooks that start PostgreSQL once,
 * close every store a test opened and remove the data directories.
 *
 * @example
 * const { backends, opened, dataFile, crashCopy } = everyStore()
 * describe.each(backends)('… over %s', (_, skipped, open) => {
 *   test.skipIf(skipped)('…', async () => {
 *     const store = await open()
 *     opened.push(store)
 *   })
 * })
 */
import { afterAll, afterEach, beforeAll } from 'bun:test'
import { copyFileSync, existsSync } from 'node:fs'
import { join } from 'node:path'
import { openMemoryStore } from '../../src/store/document/memory.ts'
import { openJsonFileStore } from '../../src/store/json-file/json-file.ts'
import { openSqlStore } from '../../src/store/sql/sql-store.ts'
import type { Store } from '../../src/store/store.ts'
import { removeDir, tempDir } from './binary.ts'
import { skipWithoutPostgres, type TestPostgres, testPostgres } from './postgres.ts'

/** One store to run on: its name in the test's title, whether it is skipped here, and how to open a fresh one. */
export type StoreBackend = [name: string, skipped: boolean, open: () => Promise<Store>]

export function everyStore() {
  const skip = skipWithoutPostgres()
  let pg: TestPostgres
  /** The stores the running test opened: closed after it. */
  const opened: Store[] = []
  const dirs: string[] = []
  beforeAll(async () => {
    if (!skip) pg = await testPostgres()
  }, 60_000)
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((store) => store.close().catch(() => {})))
  })
  afterAll(() => {
    for (const dir of dirs) removeDir(dir)
  })
  /** A path for a data file in a directory of its own, removed after the file's tests. */
  const dataFile = () => {
    const dir = tempDir()
    dirs.push(dir)
    return join(dir, 'db.json')
  }
  /**
   * A copy of data file `file` and its journal, taken while its store is open: what a process killed at that moment
   * leaves behind. Its path.
   */
  const crashCopy = (file: string) => {
    const copy = dataFile()
    copyFileSync(file, copy)
    if (existsSync(`${file}.journal`)) copyFileSync(`${file}.journal`, `${copy}.journal`)
    return copy
  }
  const backends: StoreBackend[] = [
    ['the in-memory store', false, async () => openMemoryStore()],
    ['a JSON data file', false, () => openJsonFileStore(dataFile())],
    ['PostgreSQL', skip, async () => openSqlStore(pg.url(await pg.freshDatabase()), { pool: 2, waitMs: 5000 })],
  ]
  return { backends, opened, dataFile, crashCopy }
}
