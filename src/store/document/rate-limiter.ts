import type { Attempt, RateLimit } from '../store.ts'

/** The default bound on the keys one limiter tracks. */
export const MAX_KEYS = 10_000

// The recent attempts of one key, oldest first, at most `limit` of them; `inFlight` holds the times of those whose
// outcome is not known yet (a subset, as a multiset of times: attempts made in the same millisecond are alike).
interface History {
  times: number[]
  inFlight: number[]
}

/** Removes one `value` from `list`, the latest one; whether there was one. */
function removeOne(list: number[], value: number): boolean {
  const index = list.lastIndexOf(value)
  if (index >= 0) list.splice(index, 1)
  return index >= 0
}

/**
 * An in-memory sliding-window counter of attempts per key (a client address, an email). Each key keeps the times
 * of its recent attempts, at most `limit` of them, so a burst at a window's edge cannot double the allowance as a
 * fixed window would. Memory is bounded: at most `maxKeys` keys of at most `limit` times each. Past `maxKeys`, the
 * key quiet longest among those not at their limit is forgotten, so flooding the limiter with new keys does not lift
 * a lock; only when every key is at its limit is the quietest locked one forgotten. State lives in this process
 * only: a restart forgets it, which is acceptable for a brute-force brake.
 *
 * Synchronous, so a check and the count that follows it are one step; {@link MemoryLimiter} serves it to the
 * accounts code as a store's `Limiter`.
 *
 * @example
 * const failures = new RateLimiter({ limit: 5, windowMs: 15 * 60_000 }, Date.now)
 * if (failures.retryAfter(email) > 0) throw tooMany()
 * const attempt = failures.hit(email) // counted before the slow check, so parallel guesses cannot slip through
 * if (await verify(password)) failures.forgive(attempt)
 * else failures.settle(attempt)
 */
export class RateLimiter {
  private readonly histories = new Map<string, History>()

  /** A limiter allowing `limit` attempts per `windowMs`, reading the time from `clock` (ms since the epoch). */
  constructor(
    private readonly rule: RateLimit,
    private readonly clock: () => number,
    private readonly maxKeys = MAX_KEYS,
  ) {}

  /** The history of `key` without the attempts that left the window (and without the key, once it has none). */
  private recent(key: string, now: number): History | undefined {
    const history = this.histories.get(key)
    if (!history) return undefined
    const start = now - this.rule.windowMs
    const { times, inFlight } = history
    while (times.length > 0 && (times[0] as number) <= start) times.shift()
    history.inFlight = inFlight.filter((at) => at > start)
    if (times.length > 0) return history
    this.histories.delete(key)
    return undefined
  }

  /** How many keys are tracked: at most `maxKeys`. */
  get size(): number {
    return this.histories.size
  }

  /** How many attempts `key` made in the window (at most `limit`). */
  count(key: string): number {
    return this.recent(key, this.clock())?.times.length ?? 0
  }

  /** Seconds until `key` may make another attempt (at least 1), or 0 when it may now. */
  retryAfter(key: string): number {
    const now = this.clock()
    const times = this.recent(key, now)?.times ?? []
    if (times.length < this.rule.limit) return 0
    const freed = (times[times.length - this.rule.limit] as number) + this.rule.windowMs
    return Math.max(1, Math.ceil((freed - now) / 1000))
  }

  /**
   * Counts one attempt of `key` whatever its count (the oldest beyond `limit` goes), in flight until {@link settle}
   * or {@link forgive}; returns it for either.
   */
  hit(key: string): Attempt {
    const now = this.clock()
    const history = this.recent(key, now) ?? { times: [], inFlight: [] }
    history.times.push(now)
    history.inFlight.push(now)
    if (history.times.length > this.rule.limit) history.times.shift()
    if (history.inFlight.length > this.rule.limit) history.inFlight.shift()
    // Re-inserting moves the key to the end of the map's order, which is the order of last activity.
    this.histories.delete(key)
    this.histories.set(key, history)
    if (this.histories.size > this.maxKeys) this.evict(key, now)
    return { key, at: now }
  }

  /** Marks `attempt` as finished: it keeps counting, and {@link forgetSettled} may forget it. */
  settle(attempt: Attempt): void {
    const history = this.histories.get(attempt.key)
    if (history) removeOne(history.inFlight, attempt.at)
  }

  /**
   * Takes back `attempt`, counted in advance but turned out not to count, and only that one: attempts of the same key
   * made before or after it keep counting. A key alone takes back its latest attempt.
   */
  forgive(attempt: Attempt | string): void {
    const key = typeof attempt === 'string' ? attempt : attempt.key
    const history = this.histories.get(key)
    if (!history) return
    const at = typeof attempt === 'string' ? history.times.at(-1) : attempt.at
    if (at === undefined || !removeOne(history.times, at)) return
    removeOne(history.inFlight, at)
    if (history.times.length === 0) this.histories.delete(key)
  }

  /** Forgets the finished attempts of `key` (e.g. after a successful login), keeping those still in flight. */
  forgetSettled(key: string): void {
    const history = this.histories.get(key)
    if (!history) return
    history.times = history.inFlight.slice(-this.rule.limit)
    if (history.times.length === 0) this.histories.delete(key)
  }

  /** Forgets every attempt of `key`. */
  reset(key: string): void {
    this.histories.delete(key)
  }

  /** Forgets one key other than `kept`: the quietest below its limit, else the quietest of all. */
  private evict(kept: string, now: number): void {
    // The map is in order of last activity, so the first key that qualifies is the one quiet longest.
    for (const key of this.histories.keys()) {
      if (key === kept) continue
      const history = this.recent(key, now)
      if (!history) return
      if (history.times.length < this.rule.limit) {
        this.histories.delete(key)
        return
      }
    }
    // Every key is at its limit: memory stays bounded all the same, at the price of the lock held longest.
    for (const key of this.histories.keys())
      if (key !== kept) {
        this.histories.delete(key)
        return
      }
  }
}
