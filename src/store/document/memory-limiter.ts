import type { Attempt, Hit, Limiter, RateLimit } from '../store.ts'
import { MAX_KEYS, RateLimiter } from './rate-limiter.ts'

/**
 * The document store's {@link Limiter}: a {@link RateLimiter} in this process, whose memory is bounded (at most
 * `maxKeys` keys of at most `limit` times each). A check and its count are one step because nothing runs between
 * them: the limiter is synchronous, and one process owns the store.
 *
 * @example
 * const failures = new MemoryLimiter({ limit: 5, windowMs: 15 * 60_000 }, Date.now)
 * const { attempt } = await failures.hit('203.0.113.66')
 */
export class MemoryLimiter implements Limiter {
  private readonly limiter: RateLimiter

  /** A limiter allowing `rule.limit` attempts per `rule.windowMs`, reading the time from `clock`. */
  constructor(rule: RateLimit, clock: () => number, maxKeys = MAX_KEYS) {
    this.limiter = new RateLimiter(rule, clock, maxKeys)
  }

  async hit(key: string): Promise<Hit> {
    const retryAfter = this.limiter.retryAfter(key)
    if (retryAfter > 0) return { attempt: undefined, retryAfter }
    return { attempt: this.limiter.hit(key), retryAfter: 0 }
  }

  async record(key: string): Promise<Attempt> {
    return this.limiter.hit(key)
  }

  async settle(attempt: Attempt): Promise<void> {
    this.limiter.settle(attempt)
  }

  async forgive(attempt: Attempt): Promise<void> {
    this.limiter.forgive(attempt)
  }

  async forgetSettled(key: string): Promise<void> {
    this.limiter.forgetSettled(key)
  }

  async count(key: string): Promise<number> {
    return this.limiter.count(key)
  }

  async retryAfter(key: string): Promise<number> {
    return this.limiter.retryAfter(key)
  }
}
