import { type Precondition, preconditionOf } from '../auth/guard.ts'
import { bodyLimitOf, MAX_BODY_BYTES, parseJsonBody } from './body.ts'

/** A registered route as Elysia lists it in `app.routes`. */
interface RouteLike {
  method: string
  path: string
  hooks: { transform?: unknown }
}

/** What a route checks before its body is read, and the most of its body it reads. */
interface BodyRule {
  precondition: Precondition | undefined
  limit: number
}

/** The precondition and body limit of every route that has either, by `METHOD path` as Elysia reports the route. */
function rulesByRoute(routes: readonly RouteLike[]): Map<string, BodyRule> {
  const table = new Map<string, BodyRule>()
  for (const { method, path, hooks } of routes) {
    const precondition = preconditionOf(hooks.transform)
    const limit = bodyLimitOf(hooks.transform)
    if (precondition || limit !== MAX_BODY_BYTES) table.set(`${method} ${path}`, { precondition, limit })
  }
  return table
}

/**
 * The app's parse hook. On a route that needs credentials, they are checked first (401 or 403 with the body unread):
 * an anonymous sender of a large body costs no reading, decoding or parsing, and gets the same 401 whatever it sent.
 * Then the body is read and parsed ({@link parseJsonBody}), up to the route's limit (1 MiB, or less where the route
 * set one with `bodyLimit`: sign-up and login). The routes are read on first use, once all are registered.
 *
 * @example
 * app.onParse({ as: 'global' }, credentialsFirst(() => app.routes))
 */
export function credentialsFirst(routes: () => readonly RouteLike[]) {
  let table: Map<string, BodyRule> | undefined
  // Destructured on purpose: Elysia reads a hook's parameters, and `route` makes it record the matched route.
  return async ({ request, route }: { request: Request; route: string }) => {
    table ??= rulesByRoute(routes())
    const rule = table.get(`${request.method} ${route}`)
    await rule?.precondition?.(request)
    return parseJsonBody({ request }, rule?.limit)
  }
}
