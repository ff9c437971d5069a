/** A registered route as Elysia lists it in `app.routes`. */
interface RouteLike {
  method: string
  path: string
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

/** The regular expression matching the paths of a route's template (`:name` one segment, `*` the rest). */
export const pathPattern = (path: string) =>
  new RegExp(
    `^${path
      .split('/')
      .map((part) => (part.startsWith(':') ? '[^/]+' : part === '*' ? '.*' : escapeRegExp(part)))
      .join('/')}$`,
  )

/**
 * Answers which methods the routes accept at a path, so that a known path with the wrong method gets 405 and an
 * `Allow` header instead of a 404, and `OPTIONS` gets 204 with the same `Allow`. `HEAD` is served wherever `GET` is,
 * and `OPTIONS` on every known path; an unknown path has none. The routes are read on first use, once every one is
 * registered.
 */
export function allowedMethods(routes: () => readonly RouteLike[]): (path: string) => string[] {
  let table: { pattern: RegExp; method: string }[] | undefined
  return (path) => {
    table ??= routes()
      .filter((route) => route.method !== 'ALL')
      .map((route) => ({ pattern: pathPattern(route.path), method: route.method }))
    const methods = new Set(table.filter((route) => route.pattern.test(path)).map((route) => route.method))
    if (methods.size === 0) return []
    if (methods.has('GET')) methods.add('HEAD')
    methods.add('OPTIONS')
    return [...methods].sort()
  }
}
