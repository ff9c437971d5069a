import { openMemoryStore } from './document/memory.ts'
import type { JsonFileOptions } from './json-file/json-file.ts'
import type { Store } from './store.ts'

/** The `--data` value that keeps everything in memory. */
export const IN_MEMORY = ':memory:'

/**
 * Opens the store named by `--data`: a JSON file path (tuned by `options`), or `:memory:`. The file store, with
 * the file system modules it needs, is loaded only when a file is named.
 */
export async function openStore(data: string, options: JsonFileOptions = {}): Promise<Store> {
  if (data === IN_MEMORY) return openMemoryStore()
  const { openJsonFileStore } = await import('./json-file/json-file.ts')
  return openJsonFileStore(data, options)
}
