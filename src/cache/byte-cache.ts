/**
 * The byte budget of each cache of list pages: what one cache may hold, by the estimate its owner gives for each
 * entry. A visitor can ask for as many distinct pages as there are offsets, searches and orders, and a page of large
 * records is megabytes, so a count of pages would bound nothing.
 */
export const CACHE_BUDGET_BYTES = 16 * 1024 * 1024

/** The part of a budget that one entry may take; a larger entry is not cached at all (it is built on each request). */
export const LARGEST_ENTRY_SHARE = 8

// What the cache itself spends on an entry besides its value: the map slot and the entry object.
const ENTRY_OVERHEAD = 64

/**
 * A least-recently-used cache bounded by bytes: the sum of its entries' estimated sizes (given with each `set`, plus
 * the key's) stays within `budget`; past it, the entries used longest ago go. An entry larger than `budget / 8` is not
 * kept, so a few huge pages cannot push out every ordinary one.
 *
 * @example
 * const pages = new ByteCache<Uint8Array>(CACHE_BUDGET_BYTES)
 * pages.set(key, body, body.byteLength)
 * const again = pages.get(key)
 */
export class ByteCache<V> {
  private readonly entries = new Map<string, { value: V; bytes: number }>()
  private total = 0
  /** The largest entry kept, in bytes as estimated. */
  readonly largest: number

  /** A cache holding at most `budget` bytes, as estimated by the callers of {@link set}. */
  constructor(readonly budget: number = CACHE_BUDGET_BYTES) {
    this.largest = Math.floor(budget / LARGEST_ENTRY_SHARE)
  }

  /** The estimated bytes held now: never more than `budget`. For tests, and the bound docs/design-decisions.md states. */
  get bytes(): number {
    return this.total
  }

  /** How many entries are held. */
  get size(): number {
    return this.entries.size
  }

  /** Whether an entry is held under `key` (without counting it as used). */
  has(key: string): boolean {
    return this.entries.has(key)
  }

  /** The value under `key`, which becomes the most recently used; `undefined` when there is none. */
  get(key: string): V | undefined {
    const entry = this.entries.get(key)
    if (!entry) return undefined
    this.entries.delete(key)
    this.entries.set(key, entry)
    return entry.value
  }

  /** Whether an entry under `key` estimated at `bytes` is small enough to be kept (see {@link set}). */
  fits(key: string, bytes: number): boolean {
    return bytes + key.length * 2 + ENTRY_OVERHEAD <= this.largest
  }

  /**
   * Keeps `value` under `key`, estimated at `bytes` (the key is counted here), evicting the least recently used
   * entries to make room. Returns false, keeping nothing under `key`, when the entry is larger than `largest`.
   */
  set(key: string, value: V, bytes: number): boolean {
    this.delete(key)
    if (!this.fits(key, bytes)) return false
    const size = bytes + key.length * 2 + ENTRY_OVERHEAD
    for (const [oldest, entry] of this.entries) {
      if (this.total + size <= this.budget) break
      this.entries.delete(oldest)
      this.total -= entry.bytes
    }
    this.entries.set(key, { value, bytes: size })
    this.total += size
    return true
  }

  /** Forgets the entry under `key`, if any. */
  delete(key: string): void {
    const entry = this.entries.get(key)
    if (!entry) return
    this.entries.delete(key)
    this.total -= entry.bytes
  }
}

/**
 * An estimate of the memory held by plain data (records as the stores decode them): strings at two bytes a character
 * (the engine keeps a string with any character past U+00FF at two bytes each), numbers and other scalars at 8 bytes,
 * objects and arrays at a fixed overhead plus a slot per property or item. An upper bound in practice, cheap enough to
 * compute once per cached page.
 */
export function estimateBytes(value: unknown): number {
  if (typeof value === 'string') return 16 + value.length * 2
  if (typeof value !== 'object' || value === null) return 8
  let bytes = 32
  if (Array.isArray(value)) {
    for (const item of value) bytes += 8 + estimateBytes(item)
    return bytes
  }
  for (const key in value) {
    if (Object.hasOwn(value, key)) bytes += 8 + estimateBytes((value as Record<string, unknown>)[key])
  }
  return bytes
}
