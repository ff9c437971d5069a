/**
 * What the store keeps for `Idempotency-Key` (src/http/idempotency.ts): per scope (a credential) and key, the
 * request's fingerprint and, once answered, the answer, for {@link IDEMPOTENCY_LIMITS}.ttlMs. The rules both stores
 * follow are here; each stores the entries its own way (document/idempotency-table.ts, sql/idempotency.ts). A key is
 * claimed on its own, before the create; its answer is kept by the create's insert itself ({@link KeepAnswer}), in the
 * same durable write as the record, so no crash can leave a record made without its answer.
 */
import type { KeptAnswer } from '../model/kept-answer.ts'

export type { KeptAnswer, KeptEntry } from '../model/kept-answer.ts'

/** How long answers are kept, how long a claim holds, and how many bytes of answers may be kept. */
export interface IdempotencyLimits {
  /** How long an answer is replayed after the first request (the IETF draft's "expiry"). */
  ttlMs: number
  /**
   * How long a claim holds a key with no answer before another request may take it over: longer than any request
   * can take, so only a claim whose process died (or lost its database) is ever taken over.
   */
  leaseMs: number
  /** Bytes of kept entries (see {@link entryBytes}) one scope may hold; a new key past it is refused. */
  bytesPerScope: number
  /** Bytes of kept entries all scopes together may hold; a new key past it is refused. */
  bytesInAll: number
}

/** The bounds the server keeps to: 24 h, as the draft and Stripe do; 1 MiB per credential, 64 MiB in all. */
export const IDEMPOTENCY_LIMITS: IdempotencyLimits = {
  ttlMs: 24 * 60 * 60_000,
  leaseMs: 60_000,
  bytesPerScope: 1024 * 1024,
  bytesInAll: 64 * 1024 * 1024,
}

/** Which request a key belongs to: `scope` (whose), `key` (the header) and `fingerprint` (method, path, body). */
export interface KeyedRequest {
  scope: string
  key: string
  fingerprint: string
}

/** What {@link IdempotencyKeys.claim} answers. */
export type Claim =
  /** The key is this request's now: run the insert with `claim` in its {@link KeepAnswer} (or `release` it). */
  | { kind: 'claimed'; claim: string }
  /** The key was answered for this very request: send `answer` again. */
  | { kind: 'replay'; answer: KeptAnswer }
  /** The key was used for another request (another method, path or body). */
  | { kind: 'mismatch' }
  /** The key's first request is still running (here or on another replica); try again in `retryAfter` seconds. */
  | { kind: 'in-flight'; retryAfter: number }
  /** The scope, or all of them, hold as many bytes as allowed: no new key until some expire. */
  | { kind: 'full'; of: 'scope' | 'all'; retryAfter: number }

/**
 * The store's keys: one atomic claim per key (on any replica); the answer is kept by the insert the claim is for.
 *
 * @example
 * const claim = await store.idempotency.claim(request, Date.now(), IDEMPOTENCY_LIMITS)
 * if (claim.kind === 'claimed')
 *   await store.artists.insert(fields, by, { request, claim: claim.claim, expiresAt, answer: (artist) => answerOf(artist) })
 */
export interface IdempotencyKeys {
  /**
   * Takes `request.key` of `request.scope` for this request, in one atomic step: of any number of requests with the
   * same key at once, on any replica, exactly one is `claimed`. A key whose entry expired, or whose claim outlived
   * `leaseMs` unanswered, is free again. Expired entries are forgotten on the way.
   */
  claim(request: KeyedRequest, now: number, limits: IdempotencyLimits): Promise<Claim>
  /** Frees the key claimed as `claim` (the request was refused and wrote nothing); nothing if the claim was lost. */
  release(request: KeyedRequest, claim: string): Promise<void>
  /**
   * Keeps `answer` for the key claimed as `claim`, in a durable write of its own, until `expiresAt`: for a request
   * whose change is not one catalogue insert (an account's, an operator's, a fixture control's), made just before.
   * Rejects with {@link ClaimLostError} when the claim is no longer the key's (a restore forgot it, or its lease ran
   * out and another request took it).
   */
  keep(request: KeyedRequest, claim: string, answer: KeptAnswer, expiresAt: number): Promise<void>
}

/**
 * The answer an insert keeps for the key its request claimed, in the same durable write as the record it adds (the
 * document store's commit, the SQL store's transaction): once the record is durable, so is its answer. The key's
 * claim must still be `claim` in that write; otherwise the insert writes nothing and rejects with
 * {@link ClaimLostError}.
 */
export interface KeepAnswer<R> {
  request: KeyedRequest
  /** The claim {@link IdempotencyKeys.claim} gave the request. */
  claim: string
  /** When the answer stops being replayed, in ms since the epoch. */
  expiresAt: number
  /** The answer to send for `record`, the record as stored (its id, its version): what a retry gets again. */
  answer: (record: R) => KeptAnswer
}

/**
 * Raised by an insert whose {@link KeepAnswer.claim} is no longer the key's: its lease ran out and another request
 * took the key over. Nothing was written; that other request makes the record, and a retry gets its answer.
 */
export class ClaimLostError extends Error {
  override name = 'ClaimLostError'
}

/** What an entry counts against the bounds: its strings and its answer, in UTF-8 bytes, plus 64 for the rest. */
export function entryBytes(request: KeyedRequest, answer?: KeptAnswer): number {
  let bytes = 64 + Buffer.byteLength(request.scope) + Buffer.byteLength(request.key) + request.fingerprint.length
  if (answer) {
    bytes += Buffer.byteLength(answer.body)
    for (const [name, value] of Object.entries(answer.headers)) bytes += name.length + Buffer.byteLength(value)
  }
  return bytes
}

/** Seconds until `at` (ms since the epoch), at least 1. */
export const secondsUntil = (at: number, now: number) => Math.max(1, Math.ceil((at - now) / 1000))
