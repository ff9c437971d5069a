import { type JsonFileOptions, openJsonFileStore } from './json-file.ts'
import { openMemoryStore } from './memory.ts'
import type { Store } from './store.ts'

/** The `--data` value that keeps everything in memory. */
export const IN_MEMORY = ':memory:'

/** Opens the store named by `--data`: a JSON file path (tuned by `options`), or `:memory:`. */
export function openStore(data: string, options: JsonFileOptions = {}): Promise<Store> {
  return data === IN_MEMORY ? Promise.resolve(openMemoryStore()) : openJsonFileStore(data, options)
}
