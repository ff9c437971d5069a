import { openMemoryStore } from './document/memory.ts'
import type { JsonFileOptions } from './json-file/json-file.ts'
import { isSqlUrl } from './sql/connect.ts'
import type { SqlStoreOptions } from './sql/sql-store.ts'
import type { Store } from './store.ts'

/** The `--data` value that keeps everything in memory. */
export const IN_MEMORY = ':memory:'

/** Whether a `--data` value names a database (`postgres://…`, `postgresql://…`) rather than a file. */
export const isDatabaseUrl = isSqlUrl

/** How `openStore` tunes the store it opens: the options of a data file, or of a database. */
export type StoreOptions = JsonFileOptions & SqlStoreOptions

/**
 * Opens the store named by `--data`: a JSON file path, `:memory:`, or the URL of a database that speaks the
 * PostgreSQL protocol (PostgreSQL, CockroachDB), which any number of replicas may share. Each backend, with the
 * modules it needs, is loaded only when named.
 */
export async function openStore(data: string, options: StoreOptions = {}): Promise<Store> {
  if (data === IN_MEMORY) return openMemoryStore()
  if (isDatabaseUrl(data)) {
    const { openSqlStore } = await import('./sql/sql-store.ts')
    return openSqlStore(data, options)
  }
  const { openJsonFileStore } = await import('./json-file/json-file.ts')
  return openJsonFileStore(data, options)
}
