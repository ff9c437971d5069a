import { Elysia } from 'elysia'
import type { authGuard } from '../auth/guard.ts'
import type { Store } from '../store/store.ts'

/** Puts a store back as it was when the reset point was captured. */
export type Reset = () => Promise<void>

/**
 * Fixes the store's reset point (what it holds now, after seeding, at start-up; over a database shared by replicas,
 * what it held when the first replica did this) and returns the function that restores it, records and id counters
 * alike, in one durable write: each test of a suite can start from the same fixture.
 *
 * @example
 * const reset = await captureStartState(store)
 * await reset()
 */
export async function captureStartState(store: Store): Promise<Reset> {
  const point = await store.resetPoint()
  return () => store.restore(point)
}

/**
 * `POST /__admin/reset` for `--allow-reset`: restores the start-up state and answers 204. Only an operator's service
 * key may call it; without `reset` the route does not exist (404), so a production server cannot be wiped.
 */
export function resetRoutes(reset: Reset | undefined, guard: ReturnType<typeof authGuard>) {
  const plugin = new Elysia()
  if (!reset) return plugin
  return plugin.use(guard).post(
    '/__admin/reset',
    async () => {
      await reset()
      return new Response(null, { status: 204 })
    },
    { service: true, detail: { hide: true } },
  )
}
