/**
 * The refusals the services and the guard speak in. They say what went wrong in the catalogue's and the accounts'
 * own terms; only `http/` turns one into a problem response (its status, `type` and headers), so no service knows
 * about HTTP.
 */

/** Every refusal of the domain. A new one is listed here, and then the compiler asks `http/` how to answer it. */
export type Refusal =
  | NotFoundError
  | ConflictError
  | UnauthenticatedError
  | CredentialNotAllowedError
  | NotPermittedError
  | AccountDisabledError
  | TooManyAttemptsError
  | InvalidFieldError
  | ChangedSinceReadError

/** What kind of refusal a {@link DomainError} is: one literal per class, in the domain's terms. */
export type RefusalKind = Refusal['kind']

/** A refusal of the domain: its message is the detail a client reads, its `kind` says which refusal it is. */
export abstract class DomainError extends Error {
  abstract readonly kind: RefusalKind
}

/** What was asked for does not exist: an artist, an album, a personal key, an account. */
export class NotFoundError extends DomainError {
  override name = 'NotFoundError'
  override readonly kind = 'not-found'
}

/** The change conflicts with what is stored, such as an email that is already registered. */
export class ConflictError extends DomainError {
  override name = 'ConflictError'
  override readonly kind = 'conflict'
}

/** Credentials missing, malformed, unknown, expired or revoked, or a login whose email or password is wrong. */
export class UnauthenticatedError extends DomainError {
  override name = 'UnauthenticatedError'
  override readonly kind = 'unauthenticated'
}

/** Valid credentials of the wrong kind: a service key where a user is needed, or the other way round. */
export class CredentialNotAllowedError extends DomainError {
  override name = 'CredentialNotAllowedError'
  override readonly kind = 'credential-not-allowed'
}

/** An operation this server has been set up to refuse, whoever asks (sign-up closed by `--no-signup`). */
export class NotPermittedError extends DomainError {
  override name = 'NotPermittedError'
  override readonly kind = 'not-permitted'
}

/**
 * A login with the right password to an account the operator has disabled. Answered only once the password is
 * verified, so it reveals nothing to someone who does not know it.
 */
export class AccountDisabledError extends DomainError {
  override name = 'AccountDisabledError'
  override readonly kind = 'account-disabled'
}

/** Too many attempts in a short time; `retryAfterSeconds` says when the next one may be made. */
export class TooManyAttemptsError extends DomainError {
  override name = 'TooManyAttemptsError'
  override readonly kind = 'too-many-attempts'

  /**
   * `detail` explains which limit was reached; `retryAfterSeconds` is at least 1; `quota`, when given, names the limit
   * (its limiter's name, for the `RateLimit` headers) and its rule.
   */
  constructor(
    detail: string,
    readonly retryAfterSeconds: number,
    readonly quota?: { name: string; limit: number; windowMs: number },
  ) {
    super(detail)
  }
}

/** A field whose value the schema allows but a rule of the operation refuses; `pointer` names it in the body. */
export class InvalidFieldError extends DomainError {
  override name = 'InvalidFieldError'
  override readonly kind = 'invalid-field'

  /** `pointer` is a JSON Pointer into the request body, such as `/id`. */
  constructor(
    readonly pointer: string,
    detail: string,
  ) {
    super(detail)
  }
}

/**
 * A conditional write (`If-Match`) whose record changed since the client read it: nothing was written. `currentTag`
 * is the record's tag now, so that the client can read it again and decide.
 */
export class ChangedSinceReadError extends DomainError {
  override name = 'ChangedSinceReadError'
  override readonly kind = 'changed-since-read'

  /** `currentTag` is the entity tag of what is stored now (see src/store/entity-tag.ts). */
  constructor(
    detail: string,
    readonly currentTag: string,
  ) {
    super(detail)
  }
}
