import type { Slice } from '../store.ts'

/** Pages of a list this replica read lately, at most this many; past that, the one used longest ago goes. */
const MAX_PAGES = 256

/**
 * Pages of the artist list as last read, each with the catalogue version (`artists.version`) it was read at. Every
 * write to the artists, on any replica, moves that version on in its own transaction, so a page whose version is
 * still the database's is exactly what a fresh read would return: the store then hands back the very same objects,
 * which the HTTP layer recognises and answers with the bytes it already encoded (src/http/pagination.ts). Asking the
 * version is one row by primary key: far cheaper, on both sides, than the page it saves reading and decoding.
 */
export class PageCache<T> {
  private readonly pages = new Map<string, { version: string; slice: Slice<T> }>()

  /** The page saved under `key` if it was read at `version`. */
  get(key: string, version: string): Slice<T> | undefined {
    const entry = this.pages.get(key)
    if (entry?.version !== version) return undefined
    // Used again: it goes to the end of the eviction order.
    this.pages.delete(key)
    this.pages.set(key, entry)
    return entry.slice
  }

  /** Whether any page is saved under `key`, whatever its version: only then is asking the version worth it. */
  has(key: string): boolean {
    return this.pages.has(key)
  }

  /** Saves `slice`, read at `version`, under `key`. */
  set(key: string, version: string, slice: Slice<T>): void {
    this.pages.delete(key)
    if (this.pages.size >= MAX_PAGES) this.pages.delete(this.pages.keys().next().value as string)
    this.pages.set(key, { version, slice })
  }
}
