import {
  AccountDisabledError,
  ConflictError,
  CredentialNotAllowedError,
  type DomainError,
  InvalidFieldError,
  NotFoundError,
  NotPermittedError,
  TooManyAttemptsError,
  UnauthenticatedError,
} from '../model/errors.ts'
import { invalid, Problem } from './problem.ts'

/** The `WWW-Authenticate` challenge sent with every 401. */
export const CHALLENGE = 'Bearer realm="rock-legends"'

/**
 * The problem that answers a refusal of the domain: its kind, status and headers. The refusal's message is the
 * problem's detail. `undefined` for a kind of refusal no problem answers yet: a bug, reported as one.
 */
export function domainProblem(error: DomainError): Problem | undefined {
  if (error instanceof NotFoundError) return new Problem('not-found', error.message)
  if (error instanceof ConflictError) return new Problem('conflict', error.message)
  if (error instanceof UnauthenticatedError)
    return new Problem('unauthorized', error.message, {}, { 'www-authenticate': CHALLENGE })
  if (error instanceof CredentialNotAllowedError) return new Problem('credential-not-allowed', error.message)
  if (error instanceof NotPermittedError) return new Problem('forbidden', error.message)
  if (error instanceof AccountDisabledError) return new Problem('account-disabled', error.message)
  if (error instanceof TooManyAttemptsError)
    return new Problem('too-many-requests', error.message, {}, { 'retry-after': String(error.retryAfterSeconds) })
  if (error instanceof InvalidFieldError) return invalid([{ pointer: error.pointer, detail: error.message }])
  return undefined
}
