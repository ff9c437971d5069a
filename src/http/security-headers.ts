import { Elysia } from 'elysia'

/**
 * Headers every answer carries: browsers must not guess content types (`nosniff`), no page may frame this server's
 * (`DENY`; the API and its docs have no reason to be embedded), and no URL of it leaks to another site in a
 * `Referer`.
 */
export const SECURITY_HEADERS = {
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
} as const

const MARKER = 'x-content-type-options'

/**
 * The `Strict-Transport-Security` value of a server answering over HTTPS, browsers told to use HTTPS alone for
 * `maxAgeMs` (rounded down to seconds); undefined for 0 (`--hsts off`). Without `includeSubDomains`: the server
 * cannot know whether every name under its own serves HTTPS.
 */
export const strictTransportSecurity = (maxAgeMs: number) =>
  maxAgeMs > 0 ? `max-age=${Math.floor(maxAgeMs / 1000)}` : undefined

/**
 * Plugin making sure every answer carries {@link SECURITY_HEADERS}, problems and 404s included. The hot paths build
 * their Response with the headers already in it (see `jsonResponse`, `Problem.toResponse`), and this hook only
 * fills in the rest: Elysia's default-headers decorator would instead copy and merge headers on every request,
 * which costs more than the rest of a read. An object a route returns is said to be `application/json`, without
 * the charset parameter Bun would add. Over HTTPS, `hsts` (a `Strict-Transport-Security` value) is set on every answer
 * too.
 *
 * @example
 * app.use(securityHeaders())
 */
export const securityHeaders = (hsts?: string) => {
  if (hsts !== undefined) return withStrictTransport(hsts)
  return new Elysia({ name: 'security-headers' }).mapResponse({ as: 'global' }, ({ responseValue, set }) => {
    if (!(responseValue instanceof Response)) {
      Object.assign(set.headers, SECURITY_HEADERS)
      // Elysia serialises an object with Bun's `Response.json`, which says `application/json;charset=utf-8`; every
      // other JSON answer says `application/json` (RFC 8259 defines no charset parameter), and so does this one.
      if (typeof responseValue === 'object' && responseValue !== null)
        (set.headers as Record<string, string>)['content-type'] ??= 'application/json'
      return
    }
    if (responseValue.headers.has(MARKER)) return
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) responseValue.headers.set(name, value)
  })
}

/** {@link securityHeaders} over HTTPS: the same, and `Strict-Transport-Security: hsts` on every answer. */
const withStrictTransport = (hsts: string) => {
  const headers = { ...SECURITY_HEADERS, 'strict-transport-security': hsts }
  return new Elysia({ name: 'security-headers-hsts' }).mapResponse({ as: 'global' }, ({ responseValue, set }) => {
    if (!(responseValue instanceof Response)) {
      Object.assign(set.headers, headers)
      if (typeof responseValue === 'object' && responseValue !== null)
        (set.headers as Record<string, string>)['content-type'] ??= 'application/json'
      return
    }
    if (!responseValue.headers.has(MARKER))
      for (const [name, value] of Object.entries(SECURITY_HEADERS)) responseValue.headers.set(name, value)
    responseValue.headers.set('strict-transport-security', hsts)
  })
}

/** What the error handler reads of Elysia's context. */
interface ErrorHookContext {
  code: unknown
  error: unknown
  request: Request
  set: { status?: number | string; headers: Record<string, unknown> }
}

/**
 * `responder` (the error handler, whose answers skip `mapResponse`), its answers given `Strict-Transport-Security:
 * hsts` too; `responder` itself without one.
 */
export function withStrictTransportOnErrors<C extends ErrorHookContext>(
  responder: (context: C) => Response,
  hsts: string | undefined,
): (context: C) => Response {
  if (hsts === undefined) return responder
  // Destructured as the error handler's own parameter is: Elysia reads a hook's parameters to decide what every
  // route must prepare, and a hook taking the whole context would make each request parse more.
  return ({ code, error, request, set }) => {
    const response = responder({ code, error, request, set } as C)
    response.headers.set('strict-transport-security', hsts)
    return response
  }
}
