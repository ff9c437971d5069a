import { ValidationError } from 'elysia'
import { DomainError } from '../model/errors.ts'
import { DatabaseUnavailableError, StoreUnavailableError } from '../store/store.ts'

/** The seconds a client is told to wait (`Retry-After`) when the database is unavailable. */
const DATABASE_RETRY_AFTER_S = 2

import { domainProblem } from './domain-problem.ts'
import { EarlyProblem, notFound, Problem } from './problem.ts'
import { pathOf, requestTarget } from './request-target.ts'
import { validationProblem } from './validation.ts'

/** Where unexpected failures are reported: the log, never the client. */
export type ErrorReporter = (message: string, error: unknown) => void

interface ErrorContext {
  code: unknown
  error: unknown
  request: Request
  set: { status?: number | string }
}

/** The problem for anything thrown while answering a request. */
function toProblem(context: ErrorContext, allowed: (path: string) => string[], report: ErrorReporter) {
  const { code, request } = context
  let { error } = context
  // Elysia wraps whatever the parse hook throws (the credentials' 401 and 403, the body's 413, 415 and 400) in its own
  // ParseError.
  const cause = code === 'PARSE' ? (error as Error | undefined)?.cause : undefined
  if (cause instanceof Problem || cause instanceof DomainError) error = cause
  if (error instanceof Problem) return error
  if (error instanceof EarlyProblem) return error.problem
  const refusal = error instanceof DomainError ? domainProblem(error) : undefined
  if (refusal) return refusal
  if (error instanceof ValidationError) return validationProblem(error)
  if (code === 'NOT_FOUND') {
    // As Elysia routes it, and whatever the target: `new URL` throws on CONNECT's `example.com:443` or `foo`.
    const path = pathOf(requestTarget(request.url))
    const methods = allowed(path)
    if (methods.length > 0)
      return new Problem(
        'method-not-allowed',
        `${request.method} is not supported on ${path}; use ${methods.join(', ')}.`,
        {},
        { allow: methods.join(', ') },
      )
    return notFound(`There is no route ${request.method} ${path}. The API lives under /api/v1; see /openapi.json.`)
  }
  if (code === 'PARSE') return new Problem('malformed-json', 'The request body could not be parsed as JSON.')
  if (error instanceof DatabaseUnavailableError) {
    report('request refused: the database is unavailable', error)
    return new Problem(
      'database-unavailable',
      `The database is not reachable right now (${error.message}), so nothing was read or changed. Try again in a few seconds.`,
      {},
      { 'retry-after': String(DATABASE_RETRY_AFTER_S) },
    )
  }
  if (error instanceof StoreUnavailableError) {
    report('write refused: storage failed', error)
    return new Problem(
      'store-unavailable',
      'The change could not be saved to disk, so it was not made. Try again later.',
    )
  }
  report(`unexpected failure on ${request.method} ${request.url}`, error)
  return new Problem('internal-error', 'Something went wrong on our side. The details are in the server log.')
}

/**
 * The app's only error handler: every error becomes an RFC 9457 problem+json response whose `status` equals the
 * HTTP status. Stacks go to `report`, never to the client.
 */
export function problemResponder(allowed: (path: string) => string[], report: ErrorReporter) {
  // Destructured in the signature on purpose: Elysia reads a hook's parameters to decide what every route must
  // prepare, and a hook taking the whole context would make each request parse headers, cookies and query.
  return ({ code, error, request, set }: ErrorContext) => {
    let problem: Problem
    try {
      problem = toProblem({ code, error, request, set }, allowed, report)
    } catch (failure) {
      // A bug here would otherwise escape to Bun, which answers a bare 500 and logs no access line.
      report(`the error handler failed on ${request.method} ${request.url}`, failure)
      problem = new Problem('internal-error', 'Something went wrong on our side. The details are in the server log.')
    }
    // Recorded on the context too, so the access log sees the status this answer goes out with.
    set.status = problem.status
    return problem.toResponse()
  }
}
