import { type ProblemKind, problemTypes, problemUri } from './problem-types.ts'
import { SECURITY_HEADERS } from './security-headers.ts'
import { sizedResponse } from './sized-response.ts'

/** One invalid field (`pointer`, a JSON Pointer into the body) or parameter (`parameter`, its name). */
export interface FieldError {
  pointer?: string
  parameter?: string
  detail: string
}

/**
 * An RFC 9457 problem. Anything may throw one; the app's single error handler turns it into the response, so no
 * handler writes its own error body.
 */
export class Problem extends Error {
  override name = 'Problem'

  /** A problem of `kind` with a specific `detail`, extra members (such as `errors`) and response headers. */
  constructor(
    readonly kind: ProblemKind,
    readonly detail: string,
    readonly extra: { errors?: FieldError[] } = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(detail)
  }

  /** The HTTP status of this problem. */
  get status(): number {
    return problemTypes[this.kind].status
  }

  /** The problem+json response for this problem. */
  toResponse(): Response {
    const { title, status } = problemTypes[this.kind]
    const body = { type: problemUri(this.kind), title, status, detail: this.detail, ...this.extra }
    return sizedResponse(JSON.stringify(body), {
      status,
      headers: { 'content-type': 'application/problem+json', ...SECURITY_HEADERS, ...this.headers },
    })
  }
}

/**
 * A problem thrown by a hook that runs before routing (`onRequest`), wrapped so that Elysia hands it to the app's error
 * handler. Thrown bare, Elysia would answer it itself (it calls any error's `toResponse`), without the headers the
 * request has gathered by then, such as its `X-Request-Id`.
 *
 * @example
 * throw new EarlyProblem(notFound('…'))
 */
export class EarlyProblem extends Error {
  override name = 'EarlyProblem'

  /** Wraps `problem`. */
  constructor(readonly problem: Problem) {
    super(problem.detail)
  }
}

/** 400 with one entry per invalid field or parameter. */
export const invalid = (errors: FieldError[]) => {
  const first = errors[0]
  const detail =
    errors.length === 1 && first
      ? `${first.parameter ?? first.pointer ?? ''}: ${first.detail}`.replace(/^: /, '')
      : `${errors.length} fields are not valid; see errors.`
  return new Problem('validation-error', detail, { errors })
}

/** 404 for a missing resource or route. */
export const notFound = (detail: string) => new Problem('not-found', detail)

/**
 * 400 for a deprecated operation that does nothing, with its `Deprecation` header (RFC 9745: `@` and the Unix time
 * of `since`) and a `Link` to the explanation.
 */
export const deprecated = (detail: string, since: Date) =>
  new Problem(
    'deprecated-operation',
    detail,
    {},
    {
      deprecation: `@${Math.floor(since.getTime() / 1000)}`,
      link: `<${problemUri('deprecated-operation')}>; rel="deprecation"`,
    },
  )
