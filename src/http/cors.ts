import { Elysia } from 'elysia'
import { REQUEST_ID } from './request-log.ts'
import { SECURITY_HEADERS } from './security-headers.ts'

// Last-Event-ID: what an EventSource sends when it reconnects to the event stream.
const ALLOWED_HEADERS = 'Authorization, Content-Type, X-API-Key, If-Match, If-None-Match, Last-Event-ID'
const EXPOSED_HEADERS = 'Location, WWW-Authenticate, Retry-After, Deprecation, Allow, ETag'

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
  return plugin.onRequest(({ request, set }) => {
    const origin = request.headers.get('origin')
    if (!origin || !(any || allowed.has(origin))) return
    set.headers['access-control-allow-origin'] = any ? '*' : origin
    set.headers.vary = 'Origin'
    set.headers['access-control-expose-headers'] = EXPOSED_HEADERS
    if (request.method !== 'OPTIONS' || !request.headers.has('access-control-request-method')) return
    return new Response(null, {
      status: 204,
      headers: {
        // Answered before routing, so the security-headers hook never sees this response.
        ...SECURITY_HEADERS,
        ...(set.headers as Record<string, string>),
        // Answered before routing, so the access log's hooks never see it either: its id comes from here.
        ...(requestId && { [REQUEST_ID]: requestId(request) }),
        'access-control-allow-methods': 'GET, HEAD, POST, PUT, DELETE',
        'access-control-allow-headers': ALLOWED_HEADERS,
        'access-control-max-age': '600',
      },
    })
  })
}
