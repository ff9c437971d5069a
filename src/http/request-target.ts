import { Elysia } from 'elysia'
import { EarlyProblem, invalid, notFound } from './problem.ts'

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
 * Answers, before routing, the requests whose URL Bun could not make absolute, which Elysia would otherwise route by
 * the wrong part of the target. CONNECT's authority-form (`CONNECT example.com:443`, from a client that takes this
 * server for a proxy) gets 404: nothing is served at such a target. An origin-form target with an invalid `Host`
 * header gets 400, as RFC 9112 (section 3.2) asks.
 *
 * @example
 * app.use(requestLog(write)).use(absoluteTargets())
 */
export function absoluteTargets() {
  return new Elysia().onRequest(({ request }) => {
    const url = request.url
    if (url.startsWith('http://') || url.startsWith('https://')) return
    if (url.startsWith('/'))
      throw new EarlyProblem(
        invalid([{ parameter: 'Host', detail: 'must be a valid host name, with an optional port' }]),
      )
    throw new EarlyProblem(
      notFound(
        `There is no route ${request.method} ${url}: this server is not a proxy. The API lives under /api/v1; see /openapi.json.`,
      ),
    )
  })
}
