import { randomUUID } from 'node:crypto'
import type { KeptAnswer, KeptEntry } from '../../model/kept-answer.ts'
import { type Claim, entryBytes, type IdempotencyLimits, type KeyedRequest, secondsUntil } from '../idempotency.ts'

interface Entry {
  request: KeyedRequest
  bytes: number
  /**
   * The claim of the request running now; undefined once answered. An entry with both a claim and an answer is
   * answered in a commit not yet durable: still in flight to everyone else.
   */
  claim?: string
  /** Until when `claim` holds the key, or when the answer expires. */
  until: number
  answer?: KeptAnswer
}

const id = ({ scope, key }: { scope: string; key: string }) => `${scope}\n${key}`

/**
 * The document store's idempotency keys, in memory: claims of the requests running in this process (the one that
 * owns the store, so a claim needs no disk: a crash ends its request with it) and the kept answers, which the store
 * journals in the commit of the record they answer and writes into the data file. Entries are held in the order they were answered, claims
 * among them, so expired answers are dropped from the front.
 */
export class IdempotencyTable {
  private readonly entries = new Map<string, Entry>()
  private readonly bytesByScope = new Map<string, number>()
  private bytesInAll = 0

  /** Takes the key for `request`, as {@link IdempotencyKeys.claim} says. */
  claim(request: KeyedRequest, now: number, limits: IdempotencyLimits): Claim {
    this.purge(now)
    const current = this.entries.get(id(request))
    if (current && current.until > now) {
      if (current.request.fingerprint !== request.fingerprint) return { kind: 'mismatch' }
      if (current.answer && current.claim === undefined) return { kind: 'replay', answer: current.answer }
      return { kind: 'in-flight', retryAfter: 1 }
    }
    if (current) this.remove(current)
    const bytes = entryBytes(request)
    if ((this.bytesByScope.get(request.scope) ?? 0) + bytes > limits.bytesPerScope)
      return { kind: 'full', of: 'scope', retryAfter: this.retryAfter(now, request.scope) }
    if (this.bytesInAll + bytes > limits.bytesInAll)
      return { kind: 'full', of: 'all', retryAfter: this.retryAfter(now) }
    const claim = randomUUID()
    this.add({ request, bytes, claim, until: now + limits.leaseMs })
    return { kind: 'claimed', claim }
  }

  /** Whether the key of `request` is still claimed as `claim` (its lease may have run out, and another taken it). */
  holds(request: KeyedRequest, claim: string): boolean {
    return this.entries.get(id(request))?.claim === claim
  }

  /**
   * Gives the key claimed as `claim` its `answer`, held back from replays (the key stays in flight) until
   * {@link settle}: the commit that carries it is not durable yet. The entry to journal, or undefined if the claim
   * was lost.
   */
  answer(request: KeyedRequest, claim: string, answer: KeptAnswer, expiresAt: number): KeptEntry | undefined {
    const current = this.entries.get(id(request))
    if (!current || current.claim !== claim) return undefined
    this.remove(current)
    this.add({ request, bytes: entryBytes(request, answer), claim, until: expiresAt, answer })
    return { ...request, expiresAt, answer }
  }

  /** Replays the answer given to the key claimed as `claim`: its commit is durable. */
  settle(request: KeyedRequest, claim: string): void {
    const current = this.entries.get(id(request))
    if (current?.claim === claim) current.claim = undefined
  }

  /** Frees the key claimed as `claim` (answered or not: a commit that failed takes its answer back). */
  release(request: KeyedRequest, claim: string): void {
    const current = this.entries.get(id(request))
    if (current?.claim === claim) this.remove(current)
  }

  /** Puts back answers read from a data file or its journal (a later one for the same key wins). */
  load(kept: readonly KeptEntry[], now: number): void {
    for (const { scope, key, fingerprint, expiresAt, answer } of kept) {
      if (expiresAt <= now) continue
      const request = { scope, key, fingerprint }
      const current = this.entries.get(id(request))
      if (current) this.remove(current)
      this.add({ request, bytes: entryBytes(request, answer), until: expiresAt, answer })
    }
  }

  /** The answers kept now, for a data file. */
  kept(): KeptEntry[] {
    const kept: KeptEntry[] = []
    for (const { request, until, answer } of this.entries.values())
      if (answer) kept.push({ ...request, expiresAt: until, answer })
    return kept
  }

  /** Forgets everything (a restore replaces the catalogue the answers spoke of). */
  clear(): void {
    this.entries.clear()
    this.bytesByScope.clear()
    this.bytesInAll = 0
  }

  /** Drops the expired answers at the front (claims in between are passed over: each lasts one request). */
  private purge(now: number): void {
    for (const entry of this.entries.values()) {
      if (entry.until > now) {
        if (entry.answer) return
        continue
      }
      this.remove(entry)
    }
  }

  /** Seconds until the oldest answer (of `scope`, or of any) expires. */
  private retryAfter(now: number, scope?: string): number {
    for (const { request, until, answer } of this.entries.values())
      if (answer && (scope === undefined || request.scope === scope)) return secondsUntil(until, now)
    return 1
  }

  private add(entry: Entry): void {
    this.entries.set(id(entry.request), entry)
    this.bytesByScope.set(entry.request.scope, (this.bytesByScope.get(entry.request.scope) ?? 0) + entry.bytes)
    this.bytesInAll += entry.bytes
  }

  private remove(entry: Entry): void {
    this.entries.delete(id(entry.request))
    const left = (this.bytesByScope.get(entry.request.scope) ?? 0) - entry.bytes
    if (left > 0) this.bytesByScope.set(entry.request.scope, left)
    else this.bytesByScope.delete(entry.request.scope)
    this.bytesInAll -= entry.bytes
  }
}
