import { Elysia } from 'elysia'
import { Problem } from './problem.ts'
import { pathOf, requestTarget } from './request-target.ts'
import { weightOf } from './weight.ts'

/** What the JSON routes send: their answers, and their problems. */
export const JSON_TYPES = ['application/json', 'application/problem+json']

const PROBLEM = 'application/problem+json'

const EVENTS = ['text/event-stream', PROBLEM]
const SVG = ['image/svg+xml', PROBLEM]
const HTML = ['text/html', PROBLEM]

/** The pages besides `/` (a JSON index of the API without `--ui`) and `/artists/{id}`. */
const PAGES = new Set(['/login', '/signup', '/docs'])

/** The JSON answers outside `/api/` and `/__admin/`. */
const JSON_PATHS = new Set(['/openapi.json', '/healthz', '/readyz', '/livez'])

/** At most this many members of `Accept` are read: browsers send five or six. */
const MAX_MEMBERS = 32

/**
 * Whether the `Accept` value `header` (null when absent) accepts at least one of `offered` (lower-case
 * `type/subtype`), as RFC 9110 (12.5.1) reads it: each offered type takes the weight of the most specific media
 * range that matches it (`type/subtype`, then `type/*`, then `*\/*`), and is acceptable when that weight is above 0;
 * a type no range matches is not acceptable. An absent or empty header accepts anything. Parameters of a range other
 * than its weight are not compared; a malformed weight counts as 0, as a malformed member of `Accept-Encoding` does
 * (src/http/compression.ts).
 *
 * @example
 * accepts('application/xml', JSON_TYPES) // false
 * accepts('text/html, *\/*;q=0.1', JSON_TYPES) // true
 */
export function accepts(header: string | null, offered: readonly string[]): boolean {
  if (header === null) return true
  // The common cases, without splitting: no weights at all, and any type or an offered one named.
  if (!header.includes(';') && (header.includes('*/*') || offered.some((type) => header.includes(type)))) return true
  let best = offered.map(() => ({ specificity: -1, weight: 0 }))
  let members = 0
  for (const member of header.split(',', MAX_MEMBERS)) {
    const [range = '', ...parameters] = member.split(';', 8)
    const name = range.trim().toLowerCase()
    if (name === '') continue
    members += 1
    const weight = weightOf(parameters)
    const slash = name.indexOf('/')
    const specificity = name === '*/*' ? 0 : slash > 0 && name.slice(slash + 1) === '*' ? 1 : 2
    best = best.map((held, index) => {
      const type = offered[index] as string
      const matches =
        specificity === 0 || (specificity === 1 ? type.startsWith(name.slice(0, slash + 1)) : type === name)
      return matches && specificity > held.specificity ? { specificity, weight } : held
    })
  }
  return members === 0 || best.some((held) => held.weight > 0)
}

/**
 * What a route sends, by its path (a template like `/artists/:artistId` reads the same) and the server's options, or
 * `undefined` for a route that answers whatever `Accept` says: the assets and icons (their own type is all they
 * have), and the problem explanations, which choose between HTML and text by `Accept` themselves. Only paths some
 * route serves are asked about: the hook runs in routes.
 */
export function offeredBy(path: string, ui: boolean): readonly string[] | undefined {
  if (path === '/api/v1/events') return EVENTS
  if (path.startsWith('/api/') || path.startsWith('/__admin/')) return JSON_TYPES
  if (path.startsWith('/covers/')) return SVG
  if (path === '/') return ui ? HTML : JSON_TYPES
  if (path.startsWith('/artists/') || PAGES.has(path)) return HTML
  if (JSON_PATHS.has(path)) return JSON_TYPES
  return undefined
}

/**
 * Refuses with 406 a request whose `Accept` accepts none of the types its route sends ({@link offeredBy}): JSON
 * routes send `application/json` and, when they fail, `application/problem+json`; the pages `text/html`; the covers
 * `image/svg+xml`; the event stream `text/event-stream`. The problem itself goes as `application/problem+json`
 * whatever `Accept` says (RFC 9110, 15.5.7, allows it). Runs in every route's first transform: after a write's parse
 * step (its credentials and body), before a read's credentials, and before any route asks the store anything. A
 * request without `Accept`, or with `*\/*`, costs one header lookup; the path is read only for another `Accept`.
 *
 * @example
 * app.use(acceptable(true))
 */
export function acceptable(ui: boolean) {
  // Destructured on purpose: Elysia reads a hook's parameters to decide what each request must prepare (naming
  // `route` would make every route set its template on the context, which costs each request when metrics are off).
  const refuse = ({ request }: { request: Request }) => {
    const header = request.headers.get('accept')
    if (header === null || header === '*/*') return
    const offered = offeredBy(pathOf(requestTarget(request.url)), ui)
    if (offered === undefined || accepts(header, offered)) return
    throw new Problem(
      'not-acceptable',
      `This resource is sent as ${offered[0]} (its problems as ${PROBLEM}), which Accept (${header.slice(0, 200)}) excludes. Send Accept: ${offered[0]}, or none.`,
    )
  }
  return new Elysia({ name: 'acceptable', seed: ui }).onTransform({ as: 'global' }, refuse)
}
