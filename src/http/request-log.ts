import { Elysia } from 'elysia'
import type { AccessEntry } from '../log.ts'
import { requestTarget } from './request-target.ts'

/** The header that carries a request's id, in both directions. */
export const REQUEST_ID = 'x-request-id'

// A client's id is echoed only if it is short and printable, so it cannot forge or break a log line.
const USABLE_ID = /^[\x21-\x7e]{1,128}$/

/** The client's `X-Request-Id` when it is usable, else a new time-ordered UUID (v7). */
export function requestIdOf(request: Request): string {
  const given = request.headers.get(REQUEST_ID)
  return given !== null && USABLE_ID.test(given) ? given : Bun.randomUUIDv7()
}

/** The status an answer went out with: a Response's own, else the one set on the context (problems set it too). */
function statusOf(value: unknown, status: number | string | undefined): number {
  if (value instanceof Response && value.status !== 200) return value.status
  return typeof status === 'number' ? status : 200
}

/**
 * Elysia's `set` of a request, with what the log keeps of it: the same object from `onRequest` to `onAfterResponse`
 * on every path, errors included, so no map from requests to their data is needed.
 */
interface LoggedSet {
  headers: Record<string, unknown>
  status?: number | string
  requestStart?: number
  requestId?: string
}

/**
 * Request ids and the access log: every answer carries `X-Request-Id` (the client's, or a generated one) and, once
 * it is sent, `write` gets one {@link AccessEntry}. Without `write` (`--log off`) the plugin adds nothing, so the
 * server does no per-request work for a log nobody reads.
 *
 * @example
 * app.use(requestLog(logger.access))
 */
export function requestLog(write: ((entry: AccessEntry) => void) | undefined) {
  const plugin = new Elysia()
  if (!write) return plugin
  // Every hook destructures its parameters: Elysia reads them to decide what each request must prepare.
  return (
    plugin
      .onRequest(({ request, set }: { request: Request; set: LoggedSet }) => {
        const id = requestIdOf(request)
        set.requestStart = performance.now()
        set.requestId = id
        // Set for every answer Elysia builds itself (values, and the problems of unknown routes)...
        set.headers[REQUEST_ID] = id
      })
      // ...and moved into a Response a route built: left in `set`, it would make Elysia copy that Response, headers
      // and body, into a new one, which costs more than the rest of a read.
      .mapResponse({ as: 'global' }, ({ responseValue, set }: { responseValue: unknown; set: LoggedSet }) => {
        if (!(responseValue instanceof Response) || set.requestId === undefined) return
        responseValue.headers.set(REQUEST_ID, set.requestId)
        delete set.headers[REQUEST_ID]
      })
      .onAfterResponse({ as: 'global' }, ({ request, set, responseValue }) => {
        const { requestStart, requestId } = set as LoggedSet
        if (requestStart === undefined || requestId === undefined) return
        write({
          method: request.method,
          path: requestTarget(request.url),
          status: statusOf(responseValue, set.status),
          durationMs: performance.now() - requestStart,
          requestId,
        })
      })
  )
}
