import { ValidationError } from 'elysia'
import { DomainError } from '../model/errors.ts'
import { StoreUnavailableError } from '../store/store.ts'
import { domainProblem } from './domain-problem.ts'
import { EarlyProblem, notFound, Problem } from './problem.ts'
import { collapsedTarget, pathOf, requestTarget, targetProblem } from './request-target.ts'
import { SECURITY_HEADERS } from './security-headers.ts'
import { sizedResponse } from './sized-response.ts'
import { validationProblem } from './validation.ts'

/** At most one log line per kind of outage in this many milliseconds, however many requests it refuses. */
export const OUTAGE_REPORT_EVERY_MS = 10_000

/**
 * How each kind of outage (a {@link StoreUnavailableError}) is answered: the problem type of the same name, the seconds
 * a client is told to wait (`Retry-After`), and what the log says before the cause. One entry per kind, which the
 * compiler checks. What every client is told while the store is away says nothing about where the database lives
 * (host, port, name) or why it failed, which only the log says. `/healthz` answers this same problem: its status is
 * what a load balancer or an orchestrator acts on.
 */
const OUTAGES: Record<StoreUnavailableError['kind'], { detail: string; retryAfterS: number; log: string }> = {
  'database-unavailable': {
    detail: 'The database is not reachable right now, so nothing was read or changed. Try again in a few seconds.',
    retryAfterS: 2,
    log: 'requests refused: the database is unavailable',
  },
  // A full or unwritable disk.
  'store-unavailable': {
    detail: 'The change could not be saved to disk, so it was not made. Try again later.',
    retryAfterS: 10,
    log: 'writes refused: storage failed',
  },
}

/** Where unexpected failures are reported: the log, never the client. */
export type ErrorReporter = (message: string, error: unknown) => void

/**
 * Reports an outage (a database away, a disk refusing writes) once when its first refusal comes, then at most once
 * every {@link OUTAGE_REPORT_EVERY_MS} while refusals go on, with how many there were since: a flood of refused
 * requests is a few lines in the log, each with the cause, not one line (and one stack) per request.
 */
function outageReporter(report: ErrorReporter, now: () => number) {
  const last = new Map<string, { at: number; since: number }>()
  return (kind: string, message: string) => {
    const at = now()
    const previous = last.get(kind)
    if (previous && at - previous.at < OUTAGE_REPORT_EVERY_MS) {
      previous.since += 1
      return
    }
    const more = previous && previous.since > 0 ? ` (${previous.since} more refused since the last report)` : ''
    last.set(kind, { at, since: 0 })
    // One line: the message names the cause; a stack would say nothing more, once per outage.
    report(`${message}${more}`, undefined)
  }
}

interface ErrorContext {
  code: unknown
  error: unknown
  request: Request
  set: { status?: number | string }
}

/** Counts a request refused with 503 because the store could not serve it (`--metrics`). */
export type RefusalCounter = () => void

/**
 * The problem for anything thrown while answering a request; for an `OPTIONS` request to a known path (no route
 * serves OPTIONS: a CORS preflight is answered before routing), the methods it allows instead.
 */
function toProblem(
  context: ErrorContext,
  allowed: (path: string) => string[],
  report: ErrorReporter,
  outage: ReturnType<typeof outageReporter>,
  refused: RefusalCounter | undefined,
) {
  const { code, request } = context
  let { error } = context
  // Elysia wraps whatever the parse hook throws (the credentials' 401 and 403, the body's 413, 415 and 400) in its own
  // ParseError; so too a database that went away while the credentials were being checked, which is a 503.
  const cause = code === 'PARSE' ? (error as Error | undefined)?.cause : undefined
  if (cause instanceof Problem || cause instanceof DomainError || cause instanceof StoreUnavailableError) error = cause
  if (error instanceof Problem) return error
  if (error instanceof EarlyProblem) return error.problem
  if (error instanceof DomainError) return domainProblem(error)
  if (error instanceof ValidationError) return validationProblem(error)
  if (code === 'NOT_FOUND') {
    // A target Bun could not make absolute is refused as such (src/http/request-target.ts), on no route as on routes.
    const refused = targetProblem(request)
    if (refused) return refused
    // As Elysia routes it, and whatever the target: `new URL` throws on CONNECT's `example.com:443` or `foo`.
    const path = pathOf(requestTarget(request.url))
    const methods = allowed(path)
    if (methods.length > 0 && request.method === 'OPTIONS') return methods
    if (methods.length > 0)
      return new Problem(
        'method-not-allowed',
        `${request.method} is not supported on ${path}; use ${methods.join(', ')}.`,
        {},
        { allow: methods.join(', ') },
      )
    return notFound(`There is no route ${request.method} ${path}. The API lives under /api/v1; see /openapi.json.`)
  }
  // Only Elysia's own wrapper, not a cause unwrapped above.
  if (code === 'PARSE' && error === context.error)
    return new Problem('malformed-json', 'The request body could not be parsed as JSON.')
  if (error instanceof StoreUnavailableError) {
    const { detail, retryAfterS, log } = OUTAGES[error.kind]
    refused?.()
    outage(error.kind, `${log}: ${error.message}`)
    return new Problem(error.kind, detail, {}, { 'retry-after': String(retryAfterS) })
  }
  report(`unexpected failure on ${request.method} ${request.url}`, error)
  return new Problem('internal-error', 'Something went wrong on our side. The details are in the server log.')
}

/**
 * The app's only error handler: every error becomes an RFC 9457 problem+json response whose `status` equals the
 * HTTP status. Stacks go to `report`, never to the client; each refusal because the store cannot serve is counted
 * by `refused`, when given.
 */
export function problemResponder(
  allowed: (path: string) => string[],
  report: ErrorReporter,
  now: () => number = Date.now,
  refused?: RefusalCounter,
) {
  const outage = outageReporter(report, now)
  // Destructured in the signature on purpose: Elysia reads a hook's parameters to decide what every route must
  // prepare, and a hook taking the whole context would make each request parse headers, cookies and query.
  return ({ code, error, request, set }: ErrorContext) => {
    // A path with a repeated slash that matches no route is sent, method and body kept (308), to the one it meant:
    // a client whose base URL ends in `/` works, and every route keeps one address.
    const meant = code === 'NOT_FOUND' ? collapsedTarget(request.url) : undefined
    if (meant !== undefined) {
      set.status = 308
      return sizedResponse(null, { status: 308, headers: { location: meant, ...SECURITY_HEADERS } })
    }
    let problem: Problem
    try {
      const answer = toProblem({ code, error, request, set }, allowed, report, outage, refused)
      if (Array.isArray(answer)) {
        // RFC 9110, 9.3.7: what the resource allows, with no body.
        set.status = 204
        return sizedResponse(null, { status: 204, headers: { allow: answer.join(', '), ...SECURITY_HEADERS } })
      }
      problem = answer
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
