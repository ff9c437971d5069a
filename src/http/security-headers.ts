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
 * Plugin making sure every answer carries {@link SECURITY_HEADERS}, problems and 404s included. The hot paths build
 * their Response with the headers already in it (see `jsonResponse`, `Problem.toResponse`), and this hook only
 * fills in the rest: Elysia's default-headers decorator would instead copy and merge headers on every request,
 * which costs more than the rest of a read. An object a route returns is said to be `application/json`, without
 * the charset parameter Bun would add.
 *
 * @example
 * app.use(securityHeaders())
 */
export const securityHeaders = () =>
  new Elysia({ name: 'security-headers' }).mapResponse({ as: 'global' }, ({ responseValue, set }) => {
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
