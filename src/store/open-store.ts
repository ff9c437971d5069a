import { resolve } from 'node:path'
import { openMemoryStore } from './document/memory.ts'
import type { JsonFileOptions } from './json-file/json-file.ts'
import type { SqlStoreOptions } from './sql/sql-store.ts'
import type { Store } from './store.ts'
import { IN_MEMORY, isDatabaseUrl } from './target.ts'

export { IN_MEMORY, isDatabaseUrl } from './target.ts'

/** How `openStore` tunes the store it opens: the options of a data file, or of a database. */
export type StoreOptions = JsonFileOptions & SqlStoreOptions

/** Where a server reaches `rock-legends users` and with which service key (src/cli/users.ts). */
export interface ServerAddress {
  url: string
  key: string
  /** The signal that asks the server to hand over to a `--takeover` (src/ops/takeover.ts). */
  handover: string
}

/**
 * For a `--data` value this process will own alone (a data file), how to leave the server's address beside it, so
 * that `rock-legends users` asks the server instead of writing the file behind its back; `undefined` for a store
 * others reach on their own (memory, which nobody else can see; a database, which they open themselves). The address
 * goes into the lock the store holds on the file (json-file/lock.ts), and dies with it.
 */
export function addressRecorder(data: string): ((address: ServerAddress) => Promise<void>) | undefined {
  if (data === IN_MEMORY || isDatabaseUrl(data)) return undefined
  return async (address) => {
    const { recordServer } = await import('./json-file/lock.ts')
    recordServer(resolve(data), address)
  }
}

/**
 * Opens the store named by `--data`: a JSON file path, `:memory:`, or the URL of a database that speaks the
 * PostgreSQL protocol (PostgreSQL; CockroachDB is not supported for writes), which any number of replicas may share. Each backend, with the
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
