/**
 * The refusals the services and the guard speak in. They say what went wrong in the catalogue's and the accounts'
 * own terms; only `http/` turns one into a problem response (its status, `type` and headers), so no service knows
 * about HTTP.
 */

/** A refusal of the domain: its message is the detail a client reads. */
export abstract class DomainError extends Error {}

/** What was asked for does not exist: an artist, an album, a personal key, an account. */
export class NotFoundError extends DomainError {
  override name = 'NotFoundError'
}

/** The change conflicts with what is stored, such as an email that is already registered. */
export class ConflictError extends DomainError {
  override name = 'ConflictError'
}

/** Credentials missing, malformed, unknown, expired or revoked, or a login whose email or password is wrong. */
export class UnauthenticatedError extends DomainError {
  override name = 'UnauthenticatedError'
}

/** Valid credentials of the wrong kind: a service key where a user is needed, or the other way round. */
export class CredentialNotAllowedError extends DomainError {
  override name = 'CredentialNotAllowedError'
}

/** An operation this server has been set up to refuse, whoever asks (sign-up closed by `--no-signup`). */
export class NotPermittedError extends DomainError {
  override name = 'NotPermittedError'
}

/**
 * A login with the right password to an account the operator has disabled. Answered only once the password is
 * verified, so it reveals nothing to someone who does not know it.
 */
export class AccountDisabledError extends DomainError {
  override name = 'AccountDisabledError'
}

/** Too many attempts in a short time; `retryAfterSeconds` says when the next one may be made. */
export class TooManyAttemptsError extends DomainError {
  override name = 'TooManyAttemptsError'

  /** `detail` explains which limit was reached; `retryAfterSeconds` is at least 1. */
  constructor(
    detail: string,
    readonly retryAfterSeconds: number,
  ) {
    super(detail)
  }
}

/** A field whose value the schema allows but a rule of the operation refuses; `pointer` names it in the body. */
export class InvalidFieldError extends DomainError {
  override name = 'InvalidFieldError'

  /** `pointer` is a JSON Pointer into the request body, such as `/id`. */
  constructor(
    readonly pointer: string,
    detail: string,
  ) {
    super(detail)
  }
}
