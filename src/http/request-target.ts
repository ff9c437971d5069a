import { Elysia } from 'elysia'
import { invalid, notFound, Problem } from './problem.ts'

/**
 * The request target as the client sent it, path and query, from `request.url`. Bun makes that URL absolute
 * (`http://host/path?query`), except for CONNECT's authority-form (`example.com:443`, `foo`) and for a target whose
 * Host header is not a valid host (`/path`): those come back whole. Never throws, unlike `new URL(request.url)`.
 *
 * @example
 * requestTarget('http://localhost/api/v1/artists?q=a') // '/api/v1/artists?q=a'
 * requestTarget('example.com:443') // 'example.com:443'
 */
export function requestTarget(url: string): string {
  const scheme = url.indexOf('://')
  if (scheme < 0) return url
  const path = url.indexOf('/', scheme + 3)
  return path < 0 ? '/' : url.slice(path)
}

/** The path of a request target, without its query. */
export function pathOf(target: string): string {
  const query = target.indexOf('?')
  return query < 0 ? target : target.slice(0, query)
}

/**
 * The target a request meant when its path repeats a slash (`//api/v1/artists/1`, as a client joining a base URL that
 * ends in `/` to a path that starts with one sends), with every run of slashes made one: `/api/v1/artists/1`, query
 * kept; `undefined` when the path has no repeated slash. Always a path on this server, never `//host`.
 *
 * @example
 * collapsedTarget('http://localhost//api/v1/artists?limit=2') // '/api/v1/artists?limit=2'
 */
export function collapsedTarget(url: string): string | undefined {
  if (!url.startsWith('http://') && !url.startsWith('https://')) return undefined
  const target = requestTarget(url)
  const path = pathOf(target)
  if (!path.includes('//')) return undefined
  return path.replace(/\/{2,}/g, '/') + target.slice(path.length)
}

// A host name (letters, digits, hyphens, dots, and underscores, which container names have), an IPv4 address or a
// bracketed IPv6 address, and an optional port.
const HOST =
  /^(?:[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?(?:\.[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?)*|\[[0-9a-f:.]{2,45}\])(?::[0-9]{1,5})?$/i
const MAX_HOST = 260

/** Whether `host` is a plain name or address with an optional port: all an origin this server names may hold. */
export const isPlainHost = (host: string) => host.length <= MAX_HOST && HOST.test(host)

/**
 * The paths of the health checks: they answer HTTP/1.0 requests without `Host` (see {@link targetProblem}), and the
 * access log leaves out those that pass.
 */
const HEALTH_CHECKS = new Set(['/healthz', '/livez', '/readyz'])

/** Whether `target` (a path, without a query) is a health check's. */
export const isHealthCheck = (target: string) => HEALTH_CHECKS.has(target)

/**
 * The longest request target (path and query) the server reads: 8 KiB, the least RFC 9112 (3) recommends supporting
 * and over four times the longest target any route can use (a search of 200 characters, each percent-encoded as
 * nine). Longer ones are refused with 414; past about 16 KiB of request line and headers together, Bun refuses the
 * request itself with a bare 431 before the app sees it (docs/api.md).
 */
export const MAX_TARGET_LENGTH = 8192

/**
 * The answer to a request whose URL Bun could not make absolute, which Elysia would route by the wrong part of the
 * target, or `undefined` for every other request. CONNECT's authority-form (`CONNECT example.com:443`, from a client
 * that takes this server for a proxy) gets 404: nothing is served at such a target. An origin-form target with an
 * invalid `Host` header gets 400, as RFC 9112 (section 3.2) asks, and so does one without `Host` (HTTP/1.0) but for
 * the health checks, which load balancers ask so. A target longer than {@link MAX_TARGET_LENGTH} gets 414.
 */
export function targetProblem(request: Request): Problem | undefined {
  const url = request.url
  // The scheme and host are at most a few hundred characters: only a URL this long can hold a target that long.
  if (url.length > MAX_TARGET_LENGTH && requestTarget(url).length > MAX_TARGET_LENGTH)
    return new Problem(
      'uri-too-long',
      `The request target (path and query) is ${requestTarget(url).length} characters long; this server reads at most ${MAX_TARGET_LENGTH}. Send less in the query.`,
    )
  if (url.startsWith('http://') || url.startsWith('https://')) return undefined
  if (url.startsWith('/')) {
    // No Host at all: an HTTP/1.0 request (Bun refuses an HTTP/1.1 one before the app), as load balancers' health
    // checks send them. Only the checks are served so: their paths are whole, while the rest of the app (and Elysia's
    // router) reads a path from an absolute URL.
    if (!request.headers.has('host')) {
      if (HEALTH_CHECKS.has(url)) return undefined
      return invalid([{ parameter: 'Host', detail: 'is required: without it only the health checks are answered' }])
    }
    return invalid([{ parameter: 'Host', detail: 'must be a valid host name, with an optional port' }])
  }
  return notFound(
    `There is no route ${request.method} ${url}: this server is not a proxy. The API lives under /api/v1; see /openapi.json.`,
  )
}

/**
 * Refuses the requests of {@link targetProblem} before a route does anything: in every route's first step (the
 * parse step of a write, before its credentials or body; the transform of every route, before its parameters). No
 * hook runs before routing, which would cost every request more than the rest of a read; the error handler refuses
 * those that match no route.
 *
 * @example
 * app.use(absoluteTargets())
 */
export function absoluteTargets() {
  // Destructured on purpose: Elysia reads a hook's parameters to decide what each request must prepare.
  const refuse = ({ request }: { request: Request }) => {
    // Thrown bare: Elysia hands what a route's hooks throw to the error handler (a parse step's wrapped in its
    // ParseError, which the handler unwraps).
    const problem = targetProblem(request)
    if (problem) throw problem
  }
  return new Elysia({ name: 'absolute-targets' })
    .onParse({ as: 'global' }, refuse)
    .onTransform({ as: 'global' }, refuse)
}
