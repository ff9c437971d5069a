import type { TObject, TProperties } from '@sinclair/typebox'
import { Elysia, t } from 'elysia'
import { pathPattern } from './allowed-methods.ts'
import { invalid } from './problem.ts'
import { pathOf, requestTarget } from './request-target.ts'

/**
 * The query parameters of a route, as its schema declares them: each is checked, and any other parameter is ignored
 * (a cache-buster such as `_=1700000000`, `utm_source`, a parameter of a later version), as most APIs do. A
 * parameter a route knows is still refused when it is malformed, or when it is given twice
 * ({@link singleParameters}).
 *
 * @example
 * const PageQuery = queryParameters({ limit: …, offset: … })
 */
export const queryParameters = <P extends TProperties>(properties: P): TObject<P> =>
  t.Object(properties, { additionalProperties: true })

interface RouteLike {
  method: string
  path: string
  hooks?: { query?: unknown }
}

/** The names a route's query schema declares, or none. */
function declaredNames(route: RouteLike): string[] {
  const schema = route.hooks?.query as { properties?: Record<string, unknown> } | undefined
  return Object.keys(schema?.properties ?? {})
}

const NONE: readonly string[] = []

/** Past this many names a query's names are kept in a set: a search of the array would cost a hostile query n². */
const FEW_NAMES = 16

/**
 * The names `search` (a query, without `?`) gives more than once, decoded; {@link NONE}, the common case, without any.
 * Scanned in place, with no array of pairs: every request with a query pays it.
 */
function repeatedNames(search: string): readonly string[] {
  const names: string[] = []
  let many: Set<string> | undefined
  let repeated: string[] | undefined
  let start = 0
  while (start <= search.length) {
    let end = search.indexOf('&', start)
    if (end < 0) end = search.length
    let equals = search.indexOf('=', start)
    if (equals < 0 || equals > end) equals = end
    let name = search.slice(start, equals)
    start = end + 1
    if (name.includes('%') || name.includes('+')) {
      try {
        name = decodeURIComponent(name.replaceAll('+', ' '))
      } catch {
        // A name that does not decode is no name a route knows.
        continue
      }
    }
    if (many === undefined && names.length === FEW_NAMES) many = new Set(names)
    const seen = many ? many.has(name) : names.includes(name)
    if (!seen) {
      if (many) many.add(name)
      else names.push(name)
    } else if (repeated) repeated.push(name)
    else repeated = [name]
  }
  return repeated ?? NONE
}

/** The first of `repeated` that `names` declares. */
function firstDeclared(repeated: readonly string[], names: ReadonlySet<string>): string | undefined {
  for (const name of repeated) if (names.has(name)) return name
  return undefined
}

/** The name of the first parameter of `names` that `search` (a query, without `?`) gives more than once. */
export function repeatedParameter(search: string, names: ReadonlySet<string>): string | undefined {
  return firstDeclared(repeatedNames(search), names)
}

/**
 * Refuses, with a 400 problem naming it, a query parameter a route declares given more than once
 * (`limit=10&limit=20`): which one was meant is a guess, and a cache would take the two for different pages. Runs
 * before each handler, after the credentials are checked (a credential of the wrong kind is 403 whatever the
 * query), and looks for the route's declared names only when the query repeats a name (its path matched against the
 * few routes that declare any). The routes are read on first use, once every one is registered.
 *
 * @example
 * app.use(singleParameters(() => app.routes))
 */
export function singleParameters(routes: () => readonly RouteLike[]) {
  let table: { method: string; pattern: RegExp; names: ReadonlySet<string> }[] | undefined
  const namesOf = (method: string, path: string) => {
    table ??= routes()
      .filter((each) => declaredNames(each).length > 0)
      .map((each) => ({ method: each.method, pattern: pathPattern(each.path), names: new Set(declaredNames(each)) }))
    const wanted = method === 'HEAD' ? 'GET' : method
    return table.find((each) => each.method === wanted && each.pattern.test(path))?.names
  }
  // Destructured on purpose: Elysia reads a hook's parameters to decide what each request must prepare (naming
  // `route` would make every route set its template on the context, which costs each request when metrics are off).
  // No early `return` and no arrow calling anything inside: Elysia reads a hook's minified text to decide whether to
  // await it, and reads either as returning a promise (test/http/release-hooks.test.ts): awaited, every request with
  // this hook would wait a turn of the event loop.
  function refuseRepeated({ request }: { request: Request }) {
    const url = request.url
    const mark = url.indexOf('?')
    if (mark >= 0) {
      const hash = url.indexOf('#', mark)
      // Repeats first, the route's names only then: a query without any (nearly every one) matches no route's path.
      const repeated = repeatedNames(url.slice(mark + 1, hash < 0 ? undefined : hash))
      const names = repeated.length > 0 ? namesOf(request.method, pathOf(requestTarget(url))) : undefined
      const name = names && firstDeclared(repeated, names)
      if (name !== undefined) throw invalid([{ parameter: name, detail: 'must be given at most once' }])
    }
    return undefined
  }
  return new Elysia({ name: 'single-parameters' }).onBeforeHandle({ as: 'global' }, refuseRepeated)
}
