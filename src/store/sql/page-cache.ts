import { ByteCache, CACHE_BUDGET_BYTES, estimateBytes } from '../../cache/byte-cache.ts'
import type { Slice } from '../store.ts'

/**
 * Pages of the artist list as last read, each with the catalogue version it was read at: the sum of the versions of
 * the stripes of the artists' tally (`rl_tallies`, migration 5), read in the page's own statement. Every write to
 * the artists, on any replica, adds to one stripe's version in its own transaction, and nothing ever takes from
 * one (a restore adds too), so the sum grows with every committed write: a page whose version is still the
 * database's is exactly what a fresh read would return, whichever replica wrote meanwhile. The store then hands back
 * the very same objects, which the HTTP layer recognises and answers with the bytes it already encoded
 * (src/http/pagination.ts). Asking the version is a sum over a few rows of one primary key range: far cheaper, on
 * both sides, than the page it saves reading and decoding.
 *
 * Bounded by bytes, not pages: a {@link ByteCache} of `budget` (16 MiB by default), each page counted by the estimated
 * size of its decoded records ({@link estimateBytes}); past the budget the page used longest ago goes, and a page
 * larger than an eighth of it is not kept.
 */
export class PageCache<T> {
  private readonly pages: ByteCache<{ version: string; slice: Slice<T> }>

  /** A cache holding at most `budget` bytes of pages, as estimated. */
  constructor(budget = CACHE_BUDGET_BYTES) {
    this.pages = new ByteCache(budget)
  }

  /** The estimated bytes held: at most the budget. For tests and the bench. */
  get bytes(): number {
    return this.pages.bytes
  }

  /** The page saved under `key` if it was read at `version`. */
  get(key: string, version: string): Slice<T> | undefined {
    // Used again (or about to be replaced by a fresh read): it goes to the end of the eviction order.
    const entry = this.pages.get(key)
    return entry?.version === version ? entry.slice : undefined
  }

  /** Whether any page is saved under `key`, whatever its version: only then is asking the version worth it. */
  has(key: string): boolean {
    return this.pages.has(key)
  }

  /** Saves `slice`, read at `version`, under `key` (unless it is larger than an eighth of the budget). */
  set(key: string, version: string, slice: Slice<T>): void {
    this.pages.set(key, { version, slice }, estimateBytes(slice.items) + version.length * 2)
  }
}
