/**
 * `Idempotency-Key` (IETF draft-ietf-httpapi-idempotency-key-header) on every POST: a client that did not get the
 * answer to a request (a timeout, a dropped connection, a proxy that gave up) sends the very same request again with
 * the same key, and gets the first answer again instead of a second artist, album, account, token or key.
 */
import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto'
import { sha256 } from '#runtime'
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
export function idempotencyKey(header: string | null, sensitive = false): string | undefined {
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
  if (sensitive && key.length < MIN_SENSITIVE_KEY_LENGTH)
    throw invalid([
      {
        parameter: 'Idempotency-Key',
        detail: `guards a password or a secret on this route, so must be at least ${MIN_SENSITIVE_KEY_LENGTH} characters, random (a UUID, for example)`,
      },
    ])
  return key
}

/** Whose keys a caller uses: a user's, whatever token or key it sends (a new login still finds them); the operator's. */
export const scopeOf = (caller: Caller) => (caller.kind === 'service' ? 'service' : `user:${caller.userId}`)

/** Whose keys an anonymous request (a sign-up, a login) uses: its client's, by the address its brakes count. */
export const clientScope = (client: string) => `client:${client}`

/**
 * The shortest key taken where it guards a password or a secret ({@link Keying.sensitive}): as hard to guess as the
 * secrets themselves (128 bits as base64url is 22 characters; a UUID is 36).
 */
export const MIN_SENSITIVE_KEY_LENGTH = 22

/** How a keyed request other than a catalogue create is told apart and its answer kept. */
export interface Keying {
  /** Whose keys: {@link scopeOf} a caller, or {@link clientScope} for a request without credentials. */
  scope: string
  /** The body as validated: with the method and the path, what tells two requests with one key apart. */
  body: unknown
  /** What else the request's effect depends on (the credential a logout revokes): part of what tells them apart. */
  subject?: string
  /**
   * The body holds a password or the answer a secret (a token, a key). The store then never holds anything that
   * reveals them without the Idempotency-Key, which it never holds: the key is kept as a digest, the fingerprint is an
   * HMAC under a key derived from it, and the answer's body is encrypted under another (AES-256-GCM). Such a key must
   * be at least {@link MIN_SENSITIVE_KEY_LENGTH} characters.
   */
  sensitive?: boolean
}

/** What tells two requests with one key apart: the method, the path, the body (as validated) and the subject. */
function fingerprintOf(request: Request, body: unknown, subject?: string, mac?: Buffer): string {
  const { pathname } = new URL(request.url)
  const text = JSON.stringify(body ?? null) + (subject === undefined ? '' : `\n${subject}`)
  const digest = mac ? createHmac('sha256', mac).update(text).digest('base64url') : sha256(text, 'base64url')
  return `${request.method} ${pathname} ${digest}`
}

/** The keys a sensitive request's entry is made with, derived from its Idempotency-Key (which is never kept). */
class Sealed {
  /** What the store keeps in place of the key. */
  readonly id: string
  readonly mac: Buffer
  private readonly cipher: Buffer

  constructor(key: string, scope: string) {
    const derive = (use: string) => Buffer.from(hkdfSync('sha256', key, scope, `rock-legends idempotency ${use}`, 32))
    this.id = `hkdf:${derive('id').toString('base64url')}`
    this.mac = derive('fingerprint')
    this.cipher = derive('answer')
  }

  /** The answer with its body encrypted, as the store keeps it. */
  close(answer: KeptAnswer): KeptAnswer {
    const iv = randomBytes(12)
    const cipher = createCipheriv('aes-256-gcm', this.cipher, iv)
    const sealed = Buffer.concat([iv, cipher.update(answer.body, 'utf8'), cipher.final(), cipher.getAuthTag()])
    return { ...answer, body: sealed.toString('base64url') }
  }

  /** The answer as first sent, from what the store keeps. */
  open(answer: KeptAnswer): KeptAnswer {
    const sealed = Buffer.from(answer.body, 'base64url')
    const decipher = createDecipheriv('aes-256-gcm', this.cipher, sealed.subarray(0, 12))
    decipher.setAuthTag(sealed.subarray(sealed.length - 16))
    const body = Buffer.concat([decipher.update(sealed.subarray(12, sealed.length - 16)), decipher.final()])
    return { ...answer, body: body.toString('utf8') }
  }
}

const answerOf = ({ location, etag, record }: Created): KeptAnswer => ({
  status: 201,
  headers: { 'content-type': JSON_HEADERS['content-type'], location, etag },
  body: JSON.stringify(record),
})

const responseOf = ({ status, headers, body }: KeptAnswer, replayed = false) =>
  sizedResponse(status === 204 || status === 304 ? null : body, {
    status,
    headers: { ...SECURITY_HEADERS, ...headers, ...(replayed ? { [REPLAYED]: 'true' } : {}) },
  })

/** The headers of a route's answer that a replay sends again: what says where the result is and its version. */
const KEPT_HEADERS = ['content-type', 'location', 'etag'] as const

/** What a route's handler answered (a value with `set`'s status and headers, or a Response), as kept. */
async function keptAnswerOf(result: unknown, set: { status?: unknown; headers: Record<string, unknown> }) {
  const headers: Record<string, string> = {}
  if (result instanceof Response) {
    for (const name of KEPT_HEADERS) {
      const value = result.headers.get(name)
      if (value !== null) headers[name] = value
    }
    return { status: result.status, headers, body: await result.text() }
  }
  headers['content-type'] = JSON_HEADERS['content-type']
  for (const name of KEPT_HEADERS) if (typeof set.headers[name] === 'string') headers[name] = set.headers[name]
  const status = typeof set.status === 'number' ? set.status : 200
  return { status, headers, body: JSON.stringify(result) }
}

/** A claim a request holds, and until when its answer will be kept. */
interface Held {
  request: KeyedRequest
  claim: string
  expiresAt: number
}

/**
 * Runs requests at most once per `Idempotency-Key` of each scope, keeping their answers in `store` (so across
 * replicas and restarts) for `limits.ttlMs`.
 *
 * The key is claimed in the store before the request runs. A catalogue create keeps its answer in its own insert, in
 * the same durable write as the record (the data file's journal line, the database's transaction): whenever the
 * process dies, a retry finds either no record and a claim (in flight until its lease, `limits.leaseMs`, runs out:
 * 409, then the create runs once), or the record and its answer, replayed at once. Any other request keeps its answer
 * in a write of its own right after its change.
 *
 * @example
 * const { create, run } = idempotentRequests(store, () => new Date())
 * .post('', ({ body, caller, request }) =>
 *   create(request, caller, body, {
 *     create: (keep) => catalogue.createArtist(body, caller, { keep }),
 *     created: (artist) => ({ location: `/api/v1/artists/${artist.id}`, etag: artistTag(artist), record: artist }),
 *   }))
 * .post('/logout', ({ caller, request, set }) =>
 *   run(request, set, { scope: scopeOf(caller), body: null, subject: `credential:${caller.credentialId}` }, logOut))
 */
export function idempotentRequests(store: Store, now: () => Date, limits: IdempotencyLimits = IDEMPOTENCY_LIMITS) {
  /**
   * Claims the key of `keyed`, replays or refuses as the claim says, and otherwise runs `run` once with the claim,
   * keeping its answer (itself when `keepsItself`, in the write of its change; else in a write of its own).
   */
  async function keyedAnswer(
    key: string,
    keyed: KeyedRequest,
    sealed: Sealed | undefined,
    run: (held: Held) => Promise<KeptAnswer>,
    keepsItself: boolean,
  ): Promise<Response> {
    const at = now().getTime()
    const claim = await store.idempotency.claim(keyed, at, limits)
    if (claim.kind === 'replay') return responseOf(sealed ? sealed.open(claim.answer) : claim.answer, true)
    if (claim.kind !== 'claimed') throw refusal(claim, key, keyed.scope)
    const held: Held = { request: keyed, claim: claim.claim, expiresAt: at + limits.ttlMs }
    let answer: KeptAnswer
    try {
      answer = await run(held)
    } catch (error) {
      // Refused, or failed, with nothing written: the key is free for the request, corrected or not.
      await store.idempotency.release(keyed, claim.claim).catch(() => {})
      // Another request took the key over (this one outlived the lease): it makes the record, whose answer a retry gets.
      if (error instanceof ClaimLostError) throw refusal({ kind: 'in-flight', retryAfter: 1 }, key, keyed.scope)
      throw error
    }
    // Only successes are kept: a refusal wrote nothing, and the same key may carry the corrected request.
    if (keepsItself) return responseOf(answer)
    if (answer.status >= 300) await store.idempotency.release(keyed, claim.claim).catch(() => {})
    // The change is made: this request is answered whether or not its answer could be kept (a reset forgets every
    // key, its own included; a store gone away). A retry then runs it again, as it would without a key.
    else
      await store.idempotency
        .keep(keyed, claim.claim, sealed ? sealed.close(answer) : answer, held.expiresAt)
        .catch(() => store.idempotency.release(keyed, claim.claim).catch(() => {}))
    return responseOf(answer)
  }

  /**
   * A catalogue create, run once per key of the caller's account. Typed as the record the answer carries, not as the
   * Response it is: the typed client (Eden, src/typed-client.ts) reads a route's answer type from its handler, and a
   * create's answer is the record, replayed or not.
   */
  async function create<R extends object>(request: Request, caller: Caller, body: unknown, made: Create<R>) {
    const answerTo = (record: R): KeptAnswer => answerOf(made.created(record))
    const key = idempotencyKey(request.headers.get('idempotency-key'))
    if (key === undefined) return responseOf(answerTo(await made.create())) as unknown as R
    const keyed: KeyedRequest = { scope: scopeOf(caller), key, fingerprint: fingerprintOf(request, body) }
    const answer = keyedAnswer(
      key,
      keyed,
      undefined,
      // The same answer, byte for byte, as the store kept: made by the same function from the same record.
      async (held) => answerTo(await made.create({ ...held, answer: answerTo })),
      true,
    )
    return (await answer) as unknown as R
  }

  /**
   * Any other POST: without a key, `handle`'s answer as it is; with one, run once per key of `keying.scope`, its
   * answer (the value it returns with `set`'s status and headers, or the Response it returns) kept and replayed.
   * Typed as `handle`'s answer for the same reason as {@link create}.
   */
  async function run<T>(
    request: Request,
    set: { status?: unknown; headers: Record<string, unknown> },
    keying: Keying,
    handle: () => Promise<T> | T,
  ): Promise<T> {
    const key = idempotencyKey(request.headers.get('idempotency-key'), keying.sensitive)
    if (key === undefined) return handle()
    const sealed = keying.sensitive ? new Sealed(key, keying.scope) : undefined
    const keyed: KeyedRequest = {
      scope: keying.scope,
      key: sealed ? sealed.id : key,
      fingerprint: fingerprintOf(request, keying.body, keying.subject, sealed?.mac),
    }
    const answer = keyedAnswer(key, keyed, sealed, async () => keptAnswerOf(await handle(), set), false)
    return (await answer) as unknown as T
  }

  return { create, run }
}

/** What {@link idempotentRequests} gives the routes. */
export type IdempotentRequests = ReturnType<typeof idempotentRequests>

/** The problem for a claim refused. */
function refusal(
  claim: { kind: 'mismatch' } | { kind: 'in-flight' | 'full'; retryAfter: number; of?: 'scope' | 'all' },
  key: string,
  scope: string,
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
      `${scope.startsWith('client:') ? 'This client address' : scope === 'service' ? 'The service keys' : 'This account'} keeps as many answers to Idempotency-Keys as it may; nothing was done. Send the request without one, or try a new key in ${claim.retryAfter} seconds.`,
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
