/**
 * `Idempotency-Key` (IETF draft-ietf-httpapi-idempotency-key-header) on the creates of the catalogue: a client that
 * did not get the answer to a create (a timeout, a dropped connection, a proxy that gave up) sends the very same
 * request again with the same key, and gets the first answer again instead of a second artist or album.
 */
import type { Caller } from '../auth/guard.ts'
import type { KeptAnswer } from '../model/kept-answer.ts'
import {
  ClaimLostError,
  IDEMPOTENCY_LIMITS,
  type IdempotencyLimits,
  type KeepAnswer,
  type KeyedRequest,
} from '../store/idempotency.ts'
import type { Store } from '../store/store.ts'
import { JSON_HEADERS } from './json.ts'
import { invalid, Problem } from './problem.ts'
import { SECURITY_HEADERS } from './security-headers.ts'
import { sizedResponse } from './sized-response.ts'

/** The longest key taken: the draft sets none; Stripe's is 255, and a UUID is 36. */
export const MAX_KEY_LENGTH = 255

/**
 * A create as `once` runs it: `create` adds the record, passing `keep` (with a key) to the store's insert, which keeps
 * the answer in the same durable write; `created` says where the record lives and its version.
 */
export interface Create<R extends object> {
  create: (keep?: KeepAnswer<R>) => Promise<R>
  created: (record: R) => Created<R>
}

/** What a create answers: 201 with the new record, where it lives and its version. */
export interface Created<R extends object = object> {
  location: string
  etag: string
  record: R
}

/** The header that marks an answer sent again for a key, as Stripe names it. */
export const REPLAYED = 'idempotent-replayed'

/**
 * The key a request carries: the header as sent, or its content when it is quoted as the draft's structured-field
 * string (`"…"`); `undefined` without the header. A key is 1 to {@link MAX_KEY_LENGTH} printable ASCII characters,
 * as a structured-field string is: anything else is a 400 naming the header.
 */
export function idempotencyKey(header: string | null): string | undefined {
  if (header === null) return undefined
  const quoted = /^"((?:[^"\\]|\\["\\])*)"$/.exec(header)
  const key = quoted ? (quoted[1] as string).replace(/\\(["\\])/g, '$1') : header
  if (key.length < 1 || key.length > MAX_KEY_LENGTH || !/^[\x20-\x7e]+$/.test(key))
    throw invalid([
      {
        parameter: 'Idempotency-Key',
        detail: `must be 1–${MAX_KEY_LENGTH} printable ASCII characters (a UUID, for example), optionally in double quotes`,
      },
    ])
  return key
}

/** Whose keys a caller uses: a user's, whatever token or key it sends (a new login still finds them); the operator's. */
export const scopeOf = (caller: Caller) => (caller.kind === 'service' ? 'service' : `user:${caller.userId}`)

/** What tells two requests with one key apart: the method, the path and the body (as validated). */
function fingerprintOf(request: Request, body: unknown): string {
  const { pathname } = new URL(request.url)
  const digest = new Bun.CryptoHasher('sha256').update(JSON.stringify(body ?? null)).digest('base64url')
  return `${request.method} ${pathname} ${digest}`
}

const answerOf = ({ location, etag, record }: Created): KeptAnswer => ({
  status: 201,
  headers: { 'content-type': JSON_HEADERS['content-type'], location, etag },
  body: JSON.stringify(record),
})

const responseOf = ({ status, headers, body }: KeptAnswer, replayed = false) =>
  sizedResponse(body, {
    status,
    headers: { ...SECURITY_HEADERS, ...headers, ...(replayed ? { [REPLAYED]: 'true' } : {}) },
  })

/**
 * Runs creates at most once per `Idempotency-Key` of each account, keeping their answers in `store` (so across
 * replicas and restarts) for `limits.ttlMs`.
 *
 * The key is claimed in the store before the create runs; the answer is kept by the create's own insert, in the same
 * durable write as the record (the data file's journal line, the database's transaction). Whenever the process dies,
 * a retry finds either no record and a claim (in flight until its lease, `limits.leaseMs`, runs out: 409, then the
 * create runs once), or the record and its answer, replayed at once.
 *
 * @example
 * .post('', ({ body, caller, request }) =>
 *   once(request, caller, body, {
 *     create: (keep) => catalogue.createArtist(body, caller, { keep }),
 *     created: (artist) => ({ location: `/api/v1/artists/${artist.id}`, etag: artistTag(artist), record: artist }),
 *   }))
 */
export function idempotentCreates(store: Store, now: () => Date, limits: IdempotencyLimits = IDEMPOTENCY_LIMITS) {
  // Typed as the record the answer carries, not as the Response it is: the typed client (Eden, src/typed-client.ts)
  // reads a route's answer type from its handler, and a create's answer is the record, replayed or not.
  return async <R extends object>(request: Request, caller: Caller, body: unknown, create: Create<R>): Promise<R> =>
    (await answer(request, caller, body, create)) as unknown as R

  async function answer<R extends object>(request: Request, caller: Caller, body: unknown, run: Create<R>) {
    const answerTo = (record: R): KeptAnswer => answerOf(run.created(record))
    const key = idempotencyKey(request.headers.get('idempotency-key'))
    if (key === undefined) return responseOf(answerTo(await run.create()))
    const keyed: KeyedRequest = { scope: scopeOf(caller), key, fingerprint: fingerprintOf(request, body) }
    const at = now().getTime()
    const claim = await store.idempotency.claim(keyed, at, limits)
    if (claim.kind === 'replay') return responseOf(claim.answer, true)
    if (claim.kind !== 'claimed') throw refusal(claim, key)
    let record: R
    try {
      record = await run.create({ request: keyed, claim: claim.claim, expiresAt: at + limits.ttlMs, answer: answerTo })
    } catch (error) {
      // Refused, or failed, with nothing written: the key is free for the request, corrected or not.
      await store.idempotency.release(keyed, claim.claim).catch(() => {})
      // Another request took the key over (this one outlived the lease): it makes the record, whose answer a retry gets.
      if (error instanceof ClaimLostError) throw refusal({ kind: 'in-flight', retryAfter: 1 }, key)
      throw error
    }
    // The same answer, byte for byte, as the store kept: made by the same function from the same record.
    return responseOf(answerTo(record))
  }
}

/** The problem for a claim refused. */
function refusal(
  claim: { kind: 'mismatch' } | { kind: 'in-flight' | 'full'; retryAfter: number; of?: 'scope' | 'all' },
  key: string,
): Problem {
  const quoted = JSON.stringify(key)
  if (claim.kind === 'mismatch')
    return new Problem(
      'idempotency-key-reused',
      `Idempotency-Key ${quoted} was used for another request (another method, path or body) in the last 24 hours; nothing was done. Use a new key for a new request.`,
    )
  const retryAfter = { 'retry-after': String(claim.retryAfter) }
  if (claim.kind === 'in-flight')
    return new Problem(
      'idempotency-key-in-use',
      `The request first sent with Idempotency-Key ${quoted} is still being processed; nothing was done for this one. Send it again in ${claim.retryAfter} second${claim.retryAfter === 1 ? '' : 's'} to get its answer.`,
      {},
      retryAfter,
    )
  if (claim.of === 'scope')
    return new Problem(
      'idempotency-keys-exhausted',
      `This account keeps as many answers to Idempotency-Keys as it may; nothing was done. Send the request without one, or try a new key in ${claim.retryAfter} seconds.`,
      {},
      retryAfter,
    )
  return new Problem(
    'idempotency-keys-full',
    `The server keeps as many answers to Idempotency-Keys as it may; nothing was done. Send the request without one, or try a new key in ${claim.retryAfter} seconds.`,
    {},
    retryAfter,
  )
}
