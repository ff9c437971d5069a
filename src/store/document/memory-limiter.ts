import type { Attempt, Hit, Limiter, RateLimit, Recents, RecentsRule } from '../store.ts'
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
  constructor(
    private readonly rule: RateLimit,
    clock: () => number,
    maxKeys = MAX_KEYS,
  ) {
    this.limiter = new RateLimiter(rule, clock, maxKeys)
  }

  async hit(key: string): Promise<Hit> {
    const retryAfter = this.limiter.retryAfter(key)
    if (retryAfter > 0) return { attempt: undefined, retryAfter }
    const attempt = this.limiter.hit(key)
    return { attempt, retryAfter: 0, remaining: Math.max(0, this.rule.limit - this.limiter.count(key)) }
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

/** One owner of a {@link MemoryRecents}: its members by the time each was last added, oldest first, and the latest. */
interface Owner {
  members: Map<string, number>
  latest: number
}

/**
 * The document store's {@link Recents}: per owner its members, each with the time it was last added, at most
 * `perOwner` of them. An add forgets only the same owner's oldest members, so one owner's adds (an attacker's own
 * logins, from ever more addresses) never push out another's. Memory is bounded per owner: at most `perOwner` members
 * for each owner with an add in the window. Owners are kept in order of their latest add, so each add also forgets
 * the owners quiet for a whole window, from the quietest: amortised constant work per add.
 *
 * @example
 * const known = new MemoryRecents({ perOwner: 10, windowMs: 30 * 86_400_000 }, Date.now)
 * await known.add('carlos@rock-legends.com', '198.51.100.7')
 */
export class MemoryRecents implements Recents {
  private readonly owners = new Map<string, Owner>()

  /** Recents keeping `rule.perOwner` members per owner for `rule.windowMs`, reading the time from `clock`. */
  constructor(
    private readonly rule: RecentsRule,
    private readonly clock: () => number,
  ) {}

  /** How many owners are remembered: those with an add in the window, or fewer. */
  get size(): number {
    return this.owners.size
  }

  /** How many members `owner` has, in the window or not yet forgotten (at most `perOwner`). */
  members(owner: string): number {
    return this.owners.get(owner)?.members.size ?? 0
  }

  async add(owner: string, member: string): Promise<void> {
    if (member === '') return
    const now = this.clock()
    this.forgetQuiet(now)
    const entry = this.owners.get(owner) ?? { members: new Map<string, number>(), latest: now }
    // Re-inserting moves the member (and the owner) to the end of its map's order, the order of the latest add.
    entry.members.delete(member)
    entry.members.set(member, now)
    entry.latest = now
    for (const oldest of entry.members.keys()) {
      if (entry.members.size <= this.rule.perOwner) break
      entry.members.delete(oldest)
    }
    this.owners.delete(owner)
    this.owners.set(owner, entry)
  }

  async has(owner: string, member: string): Promise<boolean> {
    const at = this.owners.get(owner)?.members.get(member)
    return at !== undefined && at > this.clock() - this.rule.windowMs
  }

  /** Forgets the owners whose latest add left the window; they come first in the map's order. */
  private forgetQuiet(now: number): void {
    const start = now - this.rule.windowMs
    for (const [owner, { latest }] of this.owners) {
      if (latest > start) return
      this.owners.delete(owner)
    }
  }
}
