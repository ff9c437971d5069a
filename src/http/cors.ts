import { Elysia } from 'elysia'
import { REQUEST_ID } from './request-log.ts'
import { SECURITY_HEADERS } from './security-headers.ts'

// Every request header the server reads that a page may set: Last-Event-ID is what an EventSource sends when it
// reconnects to the event stream; X-Request-Id a client's own id for its request; Rock-Legends-Namespace the
// namespace of a test with --fixtures, whose app usually runs on an origin of its own; Idempotency-Key makes a create
// safe to retry.
const ALLOWED_HEADERS =
  'Authorization, Content-Type, X-API-Key, If-Match, If-None-Match, Last-Event-ID, X-Request-Id, Rock-Legends-Namespace, Idempotency-Key'
// Every response header a page may want to read; X-Request-Id to quote a failed request's id, Link to page through
// a list, RateLimit and RateLimit-Policy to slow down before a 429, Idempotent-Replayed to tell a create's answer
// sent again.
const EXPOSED_HEADERS =
  'Location, WWW-Authenticate, Retry-After, Deprecation, Allow, ETag, X-Request-Id, Link, RateLimit, RateLimit-Policy, Idempotent-Replayed'

/**
 * CORS for the origins given to `--cors` (`*` allows any). With no origins the plugin adds nothing at all, so a
 * browser on another site cannot read the API unless the operator asked for it. `requestId` gives a preflight, which
 * is answered before routing, its `X-Request-Id` (the access log's, when there is one).
 *
 * @example
 * app.use(cors(['https://demo.example']))
 */
export function cors(origins: readonly string[], requestId?: (request: Request) => string) {
  const plugin = new Elysia({ name: 'cors', seed: origins })
  if (origins.length === 0) return plugin
  const any = origins.includes('*')
  const allowed = new Set(origins)
  // No early `return`, and no arrow: Elysia reads a hook's minified text to decide whether to await it, and read the
  // early returns this hook had, minified, as returning a promise (test/http/release-hooks.test.ts). The final
  // `return undefined` is dropped by the minifier; `return new …` is read as it should be.
  return (
    plugin
      .onRequest(function corsHeaders({ request, set }: { request: Request; set: { headers: object } }) {
        const origin = request.headers.get('origin')
        if (origin && (any || allowed.has(origin))) {
          const headers = set.headers as Record<string, string>
          headers['access-control-allow-origin'] = any ? '*' : origin
          headers.vary = 'Origin'
          headers['access-control-expose-headers'] = EXPOSED_HEADERS
          if (request.method === 'OPTIONS' && request.headers.has('access-control-request-method'))
            return new Response(null, {
              status: 204,
              headers: {
                // Answered before routing, so the security-headers hook never sees this response.
                ...SECURITY_HEADERS,
                ...headers,
                // Answered before routing, so the access log's hooks never see it either: its id comes from here.
                ...(requestId && { [REQUEST_ID]: requestId(request) }),
                'access-control-allow-methods': 'GET, HEAD, POST, PUT, PATCH, DELETE',
                'access-control-allow-headers': ALLOWED_HEADERS,
                'access-control-max-age': '600',
              },
            })
        }
        return undefined
      })
      // Elysia leaves out a header of `set` that the route's own Response has: a compressed answer's `Vary:
      // Accept-Encoding` would hide `Vary: Origin`, and a shared cache would give one origin's answer to another.
      .mapResponse(
        { as: 'global' },
        function varyOnOrigin({ responseValue, set }: { responseValue: unknown; set: { headers: object } }) {
          const vary = (set.headers as Record<string, string>).vary
          if (vary && responseValue instanceof Response) {
            const own = responseValue.headers.get('vary')
            if (own && !own.split(',').some((name) => name.trim().toLowerCase() === 'origin'))
              responseValue.headers.set('vary', `${own}, ${vary}`)
          }
        },
      )
  )
}
