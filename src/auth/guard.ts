import { Elysia } from 'elysia'
import { jsonBody } from '../http/body.ts'
import { CredentialNotAllowedError, TooManyAttemptsError, UnauthenticatedError } from '../model/errors.ts'
import type { Limiter } from '../store/store.ts'
import { hashSecret, isOwnSecretShape, sameHash } from './secrets.ts'

/** Who is making an authenticated request. */
export type Caller = { kind: 'service' } | { kind: 'user'; userId: number; credentialId: number; via: 'token' | 'key' }

/** A caller acting for a user, through one of that user's bearer tokens or personal keys. */
export type UserCaller = Extract<Caller, { kind: 'user' }>

/** Finds the caller a secret belongs to (given its SHA-256 hash), or `undefined`; may ask the store, so may wait. */
export type CredentialCheck = (
  scheme: 'bearer' | 'api-key',
  hash: string,
) => Caller | undefined | Promise<Caller | undefined>

const unauthorized = (detail: string) => new UnauthenticatedError(detail)

// RFC 6750 b64token; anything else in the header is malformed.
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i

/**
 * The credential check for the operator's service keys (`--api-key`), sent as `X-API-Key` or as a bearer token.
 * Every key is compared, in constant time, so the time taken says nothing about which key came close.
 */
export function serviceKeys(keys: readonly string[]): CredentialCheck {
  const hashes = keys.map(hashSecret)
  return (_scheme, hash) => {
    let match = false
    for (const known of hashes) match = sameHash(known, hash) || match
    return match ? { kind: 'service' } : undefined
  }
}

/**
 * The brake on guessing credentials: failed checks counted per client (`clientKey`), in a limiter of the store, so
 * that over SQL every replica counts them together.
 */
export interface CredentialBrake {
  /** Counts the failed checks of each client; past its limit, that client's credentials are not checked at all. */
  failures: Limiter
  /** The client a request comes from (see `clientKey`). */
  clientOf: (request: Request) => string
}

const tooManyFailures = (seconds: number) =>
  new TooManyAttemptsError(
    `Too many requests with credentials that are not valid came from this address: no credential from it is checked until the window lets one more. Try again in ${seconds} second${seconds === 1 ? '' : 's'}.`,
    seconds,
  )

/**
 * Resolves the caller of a request from `Authorization: Bearer <secret>` (a token, or a personal or service key, as
 * DESIGN.md has it, so that generated clients which send a key both ways work) or, when that header is absent,
 * `X-API-Key: <key>` (a key, never a token): `Authorization` decides when both are sent. Throws the one {@link UnauthenticatedError} for missing, malformed, unknown, expired and revoked
 * credentials (401, with its challenge, once `http/` answers it). With `brake`, a well-formed credential that no check
 * accepts counts as a failure of `brake.client`, and a client past its limit gets {@link TooManyAttemptsError} (429)
 * before its credential is checked, right or wrong: a guesser learns nothing more until the window lets it. The
 * exception is a secret of this server's own making, which cannot be guessed: it is checked, and answered as ever
 * when valid (429 when not).
 * Requests without a credential, or with a malformed header, check nothing and count nothing.
 *
 * @example
 * const caller = await authenticate(request.headers, [serviceKeys(['rl_key_…'])])
 */
export async function authenticate(
  headers: Headers,
  checks: readonly CredentialCheck[],
  brake?: { failures: Limiter; client: string },
): Promise<Caller> {
  const authorization = headers.get('authorization')
  const apiKey = headers.get('x-api-key')
  let scheme: 'bearer' | 'api-key'
  let secret: string
  if (authorization !== null) {
    const match = BEARER.exec(authorization)
    if (!match?.[1]) throw unauthorized('The Authorization header must be "Bearer <token>".')
    scheme = 'bearer'
    secret = match[1]
  } else if (apiKey !== null) {
    scheme = 'api-key'
    secret = apiKey.trim()
  } else {
    throw unauthorized('This operation needs credentials: send Authorization: Bearer <token> or X-API-Key: <key>.')
  }
  let braked = 0
  if (brake) {
    braked = await brake.failures.retryAfter(brake.client)
    // A secret of this server's making (a token, a personal key, its own operator key) is still checked from a braked
    // address: none can be guessed at any rate, and so a flood of wrong guesses from an address (loopback, or a
    // proxy not listed in --trust-proxy) locks out neither the operator's `rock-legends users` nor a signed-in user.
    // Service keys the operator chose may be weak: they wait for the window, as every wrong guess does.
    if (braked > 0 && !isOwnSecretShape(secret)) throw tooManyFailures(braked)
  }
  const hash = hashSecret(secret)
  for (const check of checks) {
    const caller = await check(scheme, hash)
    if (caller) return caller
  }
  if (braked > 0) throw tooManyFailures(braked)
  // Counted after the check, so that valid credentials, however many in flight, never hold a place of the limit.
  if (brake) await brake.failures.record(brake.client)
  throw unauthorized('The credentials are not valid: unknown, expired or revoked.')
}

/** What a route's `auth`, `user` or `service` option asks of a request: its caller, or a 401/403 refusal. */
export type Requirement = (request: Request) => Promise<Caller>

// Marks the transform hook each option gives its routes with the requirement it checks (`requirementOf`).
const REQUIREMENT = Symbol('requirement')

/**
 * The requirement that a route's `auth`, `user` or `service` option gave it, found among the route's transform hooks
 * (Elysia's `route.hooks.transform`), or `undefined` for a public route. For tests and tools that list the protected
 * routes; requests never look it up.
 *
 * @example
 * const requirement = requirementOf(app.routes[0]?.hooks.transform)
 */
export function requirementOf(transforms: unknown): Requirement | undefined {
  if (!Array.isArray(transforms)) return undefined
  for (const hook of transforms) {
    const fn: unknown = typeof hook === 'function' ? hook : (hook as { fn?: unknown } | null)?.fn
    if (typeof fn === 'function' && REQUIREMENT in fn) return (fn as { [REQUIREMENT]: Requirement })[REQUIREMENT]
  }
  return undefined
}

/** The transform hook of a route's `auth`, `user` or `service` option: checks `requirement` (on GET and HEAD, first). */
function checking(requirement: Requirement) {
  const transform = async ({ request }: { request: Request }) => {
    await requirement(request)
  }
  return Object.assign(transform, { [REQUIREMENT]: requirement })
}

/**
 * Refuses, when a route is registered, a route that names its own `parse` beside `option`: that parse would run
 * before the option's and read the body before the credentials are checked.
 */
const ownParseRefused = (option: string) => (route: object) => {
  if ('parse' in route)
    throw new Error(
      `A route with { ${option}: true } cannot name its own parse: the option's parse step checks the credentials before it reads the body.`,
    )
}

/**
 * Plugin adding the `auth`, `user` and `service` route options: `{ auth: true }` checks credentials before the body
 * is read or the parameters are validated (an anonymous caller costs no parsing and learns nothing about the API's
 * rules) and gives the handler `caller`; `{ user: true }` also requires that caller to be a user (403 for a service
 * key, which belongs to no one); `{ service: true }` requires an operator's service key (403 for a user's token or
 * key). Each request is authenticated once, though the parse step and the transform hook both ask.
 */
export function authGuard(checks: readonly CredentialCheck[], brake?: CredentialBrake) {
  // The answer of each request's check, settled or not: the parse step and the transform hook wait for the same one.
  const checked = new WeakMap<Request, Promise<Caller>>()
  const callers = new WeakMap<Request, Caller>()
  const requirement = (allowed: (caller: Caller) => void): Requirement => {
    return (request) => {
      let answer = checked.get(request)
      if (answer === undefined) {
        const counted = brake && { failures: brake.failures, client: brake.clientOf(request) }
        answer = authenticate(request.headers, checks, counted).then((caller) => {
          allowed(caller)
          callers.set(request, caller)
          return caller
        })
        checked.set(request, answer)
      }
      return answer
    }
  }
  const anyCaller = requirement(() => {})
  const userCaller = requirement((caller) => {
    // Valid credentials, so not 401: retrying with the same key cannot help, and the problem says what would.
    if (caller.kind !== 'user')
      throw new CredentialNotAllowedError(
        "A service key belongs to no user. Send a user's bearer token (POST /api/v1/user/login) or personal API key.",
      )
  })
  const serviceCaller = requirement((caller) => {
    if (caller.kind !== 'service')
      throw new CredentialNotAllowedError(
        "This operation belongs to the server's operator: send one of its service keys (--api-key) as X-API-Key.",
      )
  })
  // Each option gives its routes a parse step that checks the credentials before it reads a byte of the body, then
  // reads the JSON body (on every route that takes one: all but GET and HEAD); a transform hook that checks them on
  // the others, before the parameters are validated; and, for `auth` and `user`, the handler's `caller`.
  const plugin = new Elysia().macro({
    auth: {
      introspect: ownParseRefused('auth'),
      parse: jsonBody({ first: anyCaller }),
      transform: checking(anyCaller),
      resolve: ({ request }) => ({ caller: callers.get(request) as Caller }),
    },
    user: {
      introspect: ownParseRefused('user'),
      parse: jsonBody({ first: userCaller }),
      transform: checking(userCaller),
      resolve: ({ request }) => ({ caller: callers.get(request) as UserCaller }),
    },
    service: {
      introspect: ownParseRefused('service'),
      parse: jsonBody({ first: serviceCaller }),
      transform: checking(serviceCaller),
    },
  })
  /** The caller a request was let through as, for the access log; undefined for one that checked no credential. */
  const callerOf = (request: Request): Caller | undefined => callers.get(request)
  return Object.assign(plugin, { callerOf })
}

/**
 * A caller as the access log names it, never with a secret: `service`, or the user and the credential it came with
 * (`user:12/token:34`, `user:12/key:5`).
 */
export const callerName = (caller: Caller): string =>
  caller.kind === 'service' ? 'service' : `user:${caller.userId}/${caller.via}:${caller.credentialId}`
