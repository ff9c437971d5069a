import { Elysia, t } from 'elysia'
import type { Store } from '../store/store.ts'
import { conditionsWithoutTags } from './conditional.ts'

const Ok = t.Object({ status: t.Literal('ok') })
const ok = { status: 'ok' as const }

/**
 * The health checks of proxies, load balancers and orchestrators, each answered over HTTP/1.0 without `Host` too:
 * `/livez`, the process answers (it never touches the store, so a database outage does not get a live replica
 * restarted); `/readyz`, it can serve (its store answers: over a database, a replica that cannot reach it answers
 * 503 `database-unavailable`, and where the database is and why it failed go to the log only); `/healthz`, the same
 * as `/readyz`, the name uptime checks and `rock-legends healthcheck` use.
 *
 * @example
 * app.use(healthRoutes(store))
 */
export function healthRoutes(store: Pick<Store, 'check'>) {
  const ready = async () => {
    await store.check()
    return ok
  }
  const hidden = { response: Ok, detail: { hide: true } }
  const routes = new Elysia({ name: 'health' })
  return routes
    .onBeforeHandle(conditionsWithoutTags(() => routes.routes))
    .get('/livez', () => ok, hidden)
    .get('/readyz', ready, hidden)
    .get('/healthz', ready, hidden)
}
