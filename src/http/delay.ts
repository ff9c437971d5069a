import { Elysia } from 'elysia'
import { sleep } from '#runtime'

/** The paths `--delay` slows down: the API itself, not health checks, documentation or pictures. */
const API_PREFIX = '/api/'

/**
 * `--delay MS`: waits `ms` milliseconds before answering every API request (errors included), so a UI's loading
 * states and a client's timeouts can be tested. `/healthz` stays fast, so readiness checks are not slowed. With 0
 * the plugin adds nothing.
 *
 * @example
 * app.use(delay(250))
 */
export function delay(ms: number) {
  const plugin = new Elysia()
  if (ms <= 0) return plugin
  return plugin.onRequest(async ({ request }) => {
    // The path starts after the scheme and host; no URL object is needed to find it.
    const path = request.url.slice(request.url.indexOf('/', request.url.indexOf('//') + 2))
    if (path.startsWith(API_PREFIX)) await sleep(ms)
  })
}
