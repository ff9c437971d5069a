import { describe, expect, test } from 'bun:test'
import { ByteCache, estimateBytes } from '../../src/cache/byte-cache.ts'

// The one rule of every cache a visitor fills (list pages, encoded and decoded): bounded by bytes, least recently
// used first out, no entry larger than an eighth of the budget. What each cache holds in practice: cache-bounds.test.ts.

describe('ByteCache', () => {
  test('keeps its estimated bytes within the budget, the least recently used going first', () => {
    const cache = new ByteCache<number>(10_000)
    for (let i = 0; i < 100; i++) {
      cache.set(`k${i}`, i, 900)
      expect(cache.bytes).toBeLessThanOrEqual(10_000)
    }
    // Each entry counts 900 bytes, its key and the entry's overhead: 10 fit at most.
    expect(cache.size).toBeGreaterThan(5)
    expect(cache.size).toBeLessThanOrEqual(10)
    const oldest = 100 - cache.size
    expect(cache.get(`k${oldest - 1}`)).toBeUndefined()
    // Used again, the oldest is kept when the next entry pushes one out; the one after it goes instead.
    expect(cache.get(`k${oldest}`)).toBe(oldest)
    cache.set('k100', 100, 900)
    expect(cache.get(`k${oldest}`)).toBe(oldest)
    expect(cache.has(`k${oldest + 1}`)).toBe(false)
  })

  test('an entry larger than an eighth of the budget is not kept, and replaces nothing', () => {
    const cache = new ByteCache<string>(8000)
    expect(cache.set('small', 'a', 100)).toBe(true)
    expect(cache.set('big', 'b', 1000)).toBe(false)
    expect(cache.has('big')).toBe(false)
    expect(cache.has('small')).toBe(true)
    // A key whose new value is too large loses its old one: what it held is stale.
    expect(cache.set('small', 'c', 1000)).toBe(false)
    expect(cache.has('small')).toBe(false)
    expect(cache.bytes).toBe(0)
  })

  test('replacing an entry counts it once', () => {
    const cache = new ByteCache<string>(100_000)
    cache.set('a', 'x', 500)
    const once = cache.bytes
    cache.set('a', 'y', 500)
    expect(cache.bytes).toBe(once)
    cache.delete('a')
    expect(cache.bytes).toBe(0)
  })

  test('estimateBytes counts two bytes a character, and every field of every record', () => {
    expect(estimateBytes('abc')).toBeGreaterThanOrEqual(6)
    const record = { id: 1, name: 'x'.repeat(1000), description: 'y'.repeat(5000) }
    expect(estimateBytes([record, record])).toBeGreaterThanOrEqual(2 * 2 * 6000)
  })
})
