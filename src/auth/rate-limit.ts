/** How many attempts a key may make in a window. */
export interface RateLimit {
  /** Attempts allowed per window; the next one is refused. */
  limit: number
  windowMs: number
}

// Past this many keys, the ones that have been quiet longest are forgotten, so that a flood of distinct emails or
// addresses cannot grow the process without bound.
const MAX_KEYS = 10_000

/**
 * An in-memory sliding-window counter of attempts per key (a client address, an email). Each key keeps the times
 * of its recent attempts, at most `limit` of them, so a burst at a window's edge cannot double the allowance as a
 * fixed window would. State lives in this process only: a restart forgets it, which is acceptable for a
 * brute-force brake.
 *
 * @example
 * const failures = new RateLimiter({ limit: 5, windowMs: 15 * 60_000 }, Date.now)
 * if (failures.retryAfter(email) > 0) throw tooMany()
 * failures.hit(email)
 */
export class RateLimiter {
  private readonly attempts = new Map<string, number[]>()

  /** A limiter allowing `limit` attempts per `windowMs`, reading the time from `clock` (ms since the epoch). */
  constructor(
    private readonly rule: RateLimit,
    private readonly clock: () => number,
  ) {}

  /** The recent attempts of `key`, dropping those that left the window (and the key, once it has none). */
  private recent(key: string, now: number): number[] {
    const times = this.attempts.get(key)
    if (!times) return []
    const start = now - this.rule.windowMs
    while (times.length > 0 && (times[0] as number) <= start) times.shift()
    if (times.length === 0) this.attempts.delete(key)
    return times
  }

  /** Seconds until `key` may make another attempt (at least 1), or 0 when it may now. */
  retryAfter(key: string): number {
    const now = this.clock()
    const times = this.recent(key, now)
    if (times.length < this.rule.limit) return 0
    const freed = (times[times.length - this.rule.limit] as number) + this.rule.windowMs
    return Math.max(1, Math.ceil((freed - now) / 1000))
  }

  /** Counts one attempt of `key`. */
  hit(key: string): void {
    const now = this.clock()
    const times = this.recent(key, now)
    times.push(now)
    if (times.length > this.rule.limit) times.shift()
    // Re-inserting moves the key to the end of the map's order, which is the order of last activity.
    this.attempts.delete(key)
    this.attempts.set(key, times)
    if (this.attempts.size > MAX_KEYS) this.attempts.delete(this.attempts.keys().next().value as string)
  }

  /** Takes back the latest attempt of `key`: one counted in advance that turned out not to count. */
  forgive(key: string): void {
    const times = this.attempts.get(key)
    times?.pop()
    if (times?.length === 0) this.attempts.delete(key)
  }

  /** Forgets the attempts of `key`, e.g. after a successful login. */
  reset(key: string): void {
    this.attempts.delete(key)
  }
}
