import { Kind } from '@sinclair/typebox'
import type { InternalRoute } from 'elysia'

// Elysia compiles a route the first time it answers, and compiling writes into the schemas the route was declared
// with. Each schema it is handed to validate with (a route's body, query, parameters, headers, cookie, or the answer
// of a status) gets a validator from `getSchemaValidator` (elysia/dist/schema), which, in place, on that schema's
// root object and nowhere deeper: sets `additionalProperties` when the root is an object schema without it, deletes
// it when merging guards' schemas, and deletes `config`. Bodies, queries, parameters and headers are copied first
// (to coerce them), answers are not: after a first `GET /api/v1/artists/1` the artist's answer is no longer the
// `Artist` it was declared as, and `ProblemDetails`, a module's constant every route and every app of the process
// answers with, has gained `additionalProperties: false`. So the document is read from the schemas as they were
// declared: a copy of each of those roots is kept before the app answers anything (`declaredRoutes`), and the
// document is built from the routes with every root read from its copy (`detached`). Nested objects are never
// written; test/docs/first-request.test.ts asks every route first and would see it if a later Elysia did.

/**
 * For each object a route hands the framework to validate with, a shallow copy taken the first time it was
 * declared, before any route could be compiled. For the life of the process: a module's constant is declared by
 * every app, and only the first saw it as it was written.
 */
const declaredRoots = new WeakMap<object, Record<PropertyKey, unknown>>()

const isObject = (value: unknown): value is Record<PropertyKey, unknown> => typeof value === 'object' && value !== null

/** Keeps a copy of `schema` as it is now, unless one is kept already. */
function keep(schema: unknown): void {
  if (isObject(schema) && !declaredRoots.has(schema)) declaredRoots.set(schema, { ...schema })
}

/** The hooks whose schema Elysia validates with, each its own root. */
const VALIDATED = ['body', 'query', 'params', 'headers', 'cookie'] as const

/** Keeps the roots of the schemas of `hooks`: one per validated part, and one per status of its answers. */
function keepRoots(hooks: Record<string, unknown>): void {
  for (const key of VALIDATED) keep(hooks[key])
  const { response } = hooks
  // A schema for every status, or one per status (an object of statuses, which is no schema).
  if (isObject(response) && !(Kind in response) && !('~standard' in response))
    for (const status of Object.keys(response)) keep(response[status])
  else keep(response)
}

/** What the generator reads of a route's hooks: its schemas and its `detail` (tags, summary, operationId, …). */
const DOCUMENTED = [...VALIDATED, 'response', 'detail', 'standaloneValidator'] as const

/** A route as it was declared, for the document: its method, path, and what the generator reads of its hooks. */
export interface DeclaredRoute {
  method: string
  path: string
  hooks: Partial<Record<(typeof DOCUMENTED)[number], unknown>>
}

/**
 * The routes of an app, their schemas' roots kept as they are now: call it once the app has every route and before
 * it answers anything. Every route of the list is covered, those added to it later too, with no work of their own.
 *
 * @example
 * const routes = declaredRoutes(app.routes)
 * buildDocument(routes, namedSchemas)
 */
export function declaredRoutes(routes: readonly InternalRoute[]): DeclaredRoute[] {
  return routes.map(({ method, path, hooks }) => {
    const source = hooks as Record<string, unknown>
    keepRoots(source)
    const { standaloneValidator } = source
    if (Array.isArray(standaloneValidator))
      for (const guard of standaloneValidator) if (isObject(guard)) keepRoots(guard)
    const documented: DeclaredRoute['hooks'] = {}
    for (const key of DOCUMENTED) if (source[key] !== undefined) documented[key] = source[key]
    return { method, path, hooks: documented }
  })
}

/**
 * A deep copy of `value` with every schema root read as it was declared: the view of the routes (and of the named
 * schemas) the document is built from, whatever the app answered since. A plain object or array is copied, with
 * the symbol keys TypeBox marks its schemas with (`Kind`, `OptionalKind`), which the generator reads; anything else
 * (a function, a RegExp) is kept as it is. Fresh each time, since the generator may write into what it reads.
 */
export function detached<T>(value: T, seen = new Map<object, unknown>()): T {
  if (!isObject(value)) return value
  const known = seen.get(value)
  if (known !== undefined) return known as T
  if (Array.isArray(value)) {
    const copy = value.slice()
    seen.set(value, copy)
    for (let index = 0; index < copy.length; index++) copy[index] = detached(copy[index], seen)
    return copy as T
  }
  const prototype = Object.getPrototypeOf(value)
  if (prototype !== Object.prototype && prototype !== null) return value
  // A spread copies the enumerable symbol keys too; their values are TypeBox's names (strings) or its transforms.
  const copy = { ...(declaredRoots.get(value) ?? value) }
  seen.set(value, copy)
  for (const key in copy) copy[key] = detached(copy[key], seen)
  return copy as T
}
