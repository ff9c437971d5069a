import { ValidationError } from 'elysia'
import { DomainError } from '../model/errors.ts'
import { StoreUnavailableError } from '../store/store.ts'
import { domainProblem } from './domain-problem.ts'
import { notFound, Problem } from './problem.ts'
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
function toProblem({ code, error, request }: ErrorContext, allowed: (path: string) => string[], report: ErrorReporter) {
  if (error instanceof Problem) return error
  const refusal = error instanceof DomainError ? domainProblem(error) : undefined
  if (refusal) return refusal
  // Elysia wraps whatever a parse hook throws (our 413/415/400 problems) in its own ParseError.
  if (code === 'PARSE' && (error as Error).cause instanceof Problem) return (error as Error).cause as Problem
  if (error instanceof ValidationError) return validationProblem(error)
  if (code === 'NOT_FOUND') {
    const path = new URL(request.url).pathname
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
    const problem = toProblem({ code, error, request, set }, allowed, report)
    // Recorded on the context too, so the access log sees the status this answer goes out with.
    set.status = problem.status
    return problem.toResponse()
  }
}
