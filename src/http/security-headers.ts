import { Elysia } from 'elysia'

/**
 * Headers every answer carries: browsers must not guess content types (`nosniff`), no page may frame this server's
 * (`DENY`; the API and its docs have no reason to be embedded), and no URL of it leaks to another site in a
 * `Referer`. Headers a route sets itself win.
 */
export const SECURITY_HEADERS = {
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
} as const

/**
 * Plugin adding {@link SECURITY_HEADERS} to every response, problems and 404s included.
 *
 * @example
 * app.use(securityHeaders())
 */
export const securityHeaders = () => new Elysia().headers(SECURITY_HEADERS)
