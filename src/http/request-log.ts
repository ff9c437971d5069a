import { Elysia } from 'elysia'
import { uuidv7 } from '#runtime'
import { type AccessEntry, MAX_USER_AGENT } from '../log.ts'
import { isHealthCheck, requestTarget } from './request-target.ts'
import { bodySize } from './sized-response.ts'

/** The header that carries a request's id, in both directions. */
export const REQUEST_ID = 'x-request-id'

// A client's id is echoed only if it is short and printable, so it cannot forge or break a log line.
const USABLE_ID = /^[\x21-\x7e]{1,128}$/

/**
 * The client's `X-Request-Id` when it is usable, else a new time-ordered UUID (v7). Bun's own, which draws 8 random
 * bytes per id: ids made in JavaScript (random bits drawn once, then a counter) cost a server just as much per
 * request, since a new string per answer is the cost either way.
 */
export function requestIdOf(request: Request): string {
  const given = request.headers.get(REQUEST_ID)
  return given !== null && USABLE_ID.test(given) ? given : uuidv7()
}

/** The status an answer went out with: a Response's own, else the one set on the context (problems set it too). */
function statusOf(value: unknown, status: number | string | undefined): number {
  if (value instanceof Response && value.status !== 200) return value.status
  return typeof status === 'number' ? status : 200
}

/**
 * The bytes of an answer's body, as sent: a Response's as {@link bodySize} measures it (none for a streamed one); a
 * value Elysia serialises, measured as it will write it (the app does not normalise answers, so that is
 * `JSON.stringify`). A HEAD answer, a 204 and a 304 send no body.
 */
function bodyBytes(method: string, value: unknown, status: number): number | undefined {
  if (method === 'HEAD' || status === 204 || status === 304) return 0
  if (value instanceof Response) return bodySize(value)
  if (value === undefined || value === null) return 0
  return Buffer.byteLength(typeof value === 'string' ? value : JSON.stringify(value))
}

/**
 * Elysia's `set` of a request, with what the log keeps of it: the same object from a route's first step to its
 * answer, errors included, so no map from requests to their data is needed.
 */
interface LoggedSet {
  headers: Record<string, unknown>
  status?: number | string
  /** `performance.now()` at the route's first step, then {@link LOGGED} once the line is written. */
  requestStart?: number
}

/** The start of a request whose line is written: one property for both, so each request adds one to its `set`. */
const LOGGED = -1

/**
 * What the app's error handler is: it turns what was thrown into the answer (src/http/error-handler.ts). `route` is
 * the template of the route that threw, when metrics ask for it (undefined outside any route).
 */
type ErrorResponder = (context: {
  code: unknown
  error: unknown
  request: Request
  set: LoggedSet
  route?: string
}) => Response

/** What `mapResponse` reads of an answered request. */
interface AnsweredContext {
  request: Request
  responseValue: unknown
  set: LoggedSet
}

/**
 * Counts one answer for `--metrics` (src/metrics/http-metrics.ts): its method, the template of the route it matched
 * (undefined for none), its status and its latency in seconds.
 */
export type AnswerCounter = (method: string, route: string | undefined, status: number, seconds: number) => void

/** The access log's hooks, and how it logs the answers of the error handler. */
export interface RequestLog {
  /** Plugin with the hooks of the answers of routes; `use` it before the routes. */
  hooks: Elysia
  /** `responder`, whose every answer also carries its request id and gets its access line. */
  answering(responder: ErrorResponder): ErrorResponder
  /** The id of a request answered before routing (a CORS preflight), which gets no access line; none without a log. */
  requestId?: (request: Request) => string
}

/**
 * Request ids and the access log: every answer carries `X-Request-Id` (the client's, or a generated one) and `write`
 * gets one {@link AccessEntry} for it. Nothing runs before routing. A route marks its start in its first step (its
 * parse step for a write, else its transform), and its answer gets the id and the line in `mapResponse`; answers of
 * the error handler, including those made outside any route (unknown paths and methods, refusals before routing),
 * get them in {@link RequestLog.answering}. With `count` (`--metrics`) the same steps count each answer too, by its
 * route's template; without `write` they make no id and no line. Without either (`--log off`, no `--metrics`) there
 * are no hooks at all, so the server does no per-request work for a log nobody reads.
 *
 * @example
 * const log = requestLog(logger.access)
 * app.onError({ as: 'global' }, log.answering(problemResponder(…))).use(log.hooks)
 */
export function requestLog(
  write: ((entry: AccessEntry) => void) | undefined,
  clientOf: (request: Request) => string,
  count?: AnswerCounter,
  callerOf: (request: Request) => string | undefined = () => undefined,
): RequestLog {
  const hooks = new Elysia({ name: 'request-log' })
  if (!write && !count) return { hooks, answering: (responder) => responder }
  /**
   * Counts the answer (`--metrics`: by the template of its `route`), then, with a log, gives `response` (or, for an
   * answer Elysia builds from a value, `set`) its id and writes its line.
   */
  const logged = (request: Request, route: string | undefined, response: unknown, set: LoggedSet) => {
    const now = performance.now()
    const start = set.requestStart
    set.requestStart = LOGGED
    const durationMs = start === undefined || start === LOGGED ? 0 : now - start
    const status = statusOf(response, set.status)
    if (count) count(request.method, route, status, durationMs / 1000)
    if (!write) return
    const requestId = requestIdOf(request)
    // Into the Response itself: left in `set.headers`, it would make Elysia copy a route's Response, headers and
    // body, into a new one, which costs more than the rest of a read.
    if (response instanceof Response) response.headers.set(REQUEST_ID, requestId)
    else set.headers[REQUEST_ID] = requestId
    const path = requestTarget(request.url)
    const method = request.method
    // A load balancer asks every few seconds: the log writes the checks' lines at `--log-level debug` only.
    const healthCheck = isHealthCheck(path) && (method === 'GET' || method === 'HEAD')
    const userAgent = request.headers.get('user-agent')?.slice(0, MAX_USER_AGENT) ?? undefined
    const client = clientOf(request)
    const caller = callerOf(request)
    const bytes = bodyBytes(method, response, status)
    write({ method, path, status, bytes, durationMs, requestId, client, userAgent, caller, healthCheck })
  }
  // Every hook destructures its parameters: Elysia reads them to decide what each request must prepare. A function,
  // not an arrow: Elysia guesses from a hook's text whether it returns a promise, and the release build's minified
  // arrow (`({set})=>{set.requestStart??=performance.now()}`) looks like one to it, so every route would await it
  // (a trip through the microtask queue per request; test/http/release-hooks.test.ts).
  function started({ set }: { set: LoggedSet }) {
    set.requestStart ??= performance.now()
  }
  hooks.onParse({ as: 'global' }, started).onTransform({ as: 'global' }, started)
  // Only metrics read the route: a hook that names `route` makes every route set it on its context.
  if (count)
    hooks.mapResponse(
      { as: 'global' },
      ({ request, route, responseValue, set }: AnsweredContext & { route: string }) => {
        // An error's answer was counted (and logged) by the error handler.
        if (set.requestStart !== LOGGED) logged(request, route, responseValue, set)
      },
    )
  else
    hooks.mapResponse({ as: 'global' }, ({ request, responseValue, set }: AnsweredContext) => {
      // An error's answer was logged by the error handler.
      if (set.requestStart !== LOGGED) logged(request, undefined, responseValue, set)
    })
  return {
    hooks,
    requestId: write ? requestIdOf : undefined,
    answering: count
      ? (responder) =>
          ({ code, error, request, set, route }) => {
            const response = responder({ code, error, request, set })
            logged(request, route, response, set)
            return response
          }
      : (responder) =>
          ({ code, error, request, set }) => {
            const response = responder({ code, error, request, set })
            logged(request, undefined, response, set)
            return response
          },
  }
}
