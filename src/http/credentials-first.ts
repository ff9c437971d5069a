import { type Precondition, preconditionOf } from '../auth/guard.ts'
import { parseJsonBody } from './body.ts'

/** A registered route as Elysia lists it in `app.routes`. */
interface RouteLike {
  method: string
  path: string
  hooks: { transform?: unknown }
}

/** The requirement of every route that has one, by `METHOD path` as Elysia reports the matched route. */
function requirementsByRoute(routes: readonly RouteLike[]): Map<string, Precondition> {
  const table = new Map<string, Precondition>()
  for (const { method, path, hooks } of routes) {
    const requirement = preconditionOf(hooks.transform)
    if (requirement) table.set(`${method} ${path}`, requirement)
  }
  return table
}

/**
 * The app's parse hook. On a route that needs credentials, they are checked first (401 or 403 with the body unread):
 * an anonymous sender of a large body costs no reading, decoding or parsing, and gets the same 401 whatever it sent.
 * Then the body is read and parsed ({@link parseJsonBody}). The routes are read on first use, once all are registered.
 *
 * @example
 * app.onParse({ as: 'global' }, credentialsFirst(() => app.routes))
 */
export function credentialsFirst(routes: () => readonly RouteLike[]) {
  let table: Map<string, Precondition> | undefined
  // Destructured on purpose: Elysia reads a hook's parameters, and `route` makes it record the matched route.
  return async ({ request, route }: { request: Request; route: string }) => {
    table ??= requirementsByRoute(routes())
    await table.get(`${request.method} ${route}`)?.(request)
    return parseJsonBody({ request })
  }
}
