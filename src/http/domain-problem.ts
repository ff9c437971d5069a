import type { DomainError, Refusal, RefusalKind } from '../model/errors.ts'
import { invalid, Problem } from './problem.ts'
import { rateLimitHeaders } from './rate-limit.ts'

/** The `WWW-Authenticate` challenge sent with every 401. */
export const CHALLENGE = 'Bearer realm="rock-legends"'

/** The refusal of one kind, with what it carries (a `pointer`, a `retryAfterSeconds`). */
type RefusalOf<K extends RefusalKind> = Extract<Refusal, { kind: K }>

/**
 * How each kind of refusal is answered: its problem type (and so its status), headers and members. The refusal's
 * message is the problem's detail. One entry per kind, which the compiler checks: a new kind of refusal in
 * `model/errors.ts` does not build until it has its answer here.
 */
const ANSWERS: { readonly [K in RefusalKind]: (refusal: RefusalOf<K>) => Problem } = {
  'not-found': (refusal) => new Problem('not-found', refusal.message),
  conflict: (refusal) => new Problem('conflict', refusal.message),
  unauthenticated: (refusal) => new Problem('unauthorized', refusal.message, {}, { 'www-authenticate': CHALLENGE }),
  'credential-not-allowed': (refusal) => new Problem('credential-not-allowed', refusal.message),
  'not-permitted': (refusal) => new Problem('forbidden', refusal.message),
  'account-disabled': (refusal) => new Problem('account-disabled', refusal.message),
  'too-many-attempts': ({ message, retryAfterSeconds, quota }) =>
    new Problem(
      'too-many-requests',
      message,
      {},
      {
        'retry-after': String(retryAfterSeconds),
        ...(quota && rateLimitHeaders({ policy: quota.name, ...quota, remaining: 0, resetSeconds: retryAfterSeconds })),
      },
    ),
  'invalid-field': (refusal) => invalid([{ pointer: refusal.pointer, detail: refusal.message }]),
  'changed-since-read': (refusal) =>
    new Problem('precondition-failed', refusal.message, {}, { etag: refusal.currentTag }),
}

/** The problem that answers a refusal of the domain: every kind has one (see {@link ANSWERS}). */
export function domainProblem(error: DomainError): Problem {
  // A refusal's `kind` names its class (the union in model/errors.ts), so the entry fits it.
  const answer = ANSWERS[error.kind] as (refusal: DomainError) => Problem
  return answer(error)
}
