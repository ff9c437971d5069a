import { Elysia } from 'elysia'
import { EarlyProblem, Problem } from './problem.ts'

/** Methods that only read; everything else is a write. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])

/**
 * `--read-only`: every POST, PUT, PATCH and DELETE is refused with 403 `forbidden` before anything else is looked
 * at (credentials, body, even whether the route exists), so a shared demo or fixture cannot be changed. Sign-up and
 * login are writes too: they store a user or a token. Reads are untouched.
 *
 * @example
 * app.use(readOnly(true))
 */
export function readOnly(enabled: boolean) {
  const plugin = new Elysia()
  if (!enabled) return plugin
  // A function without an early `return`: Elysia would read its minified text as returning a promise and await it on
  // every request (test/http/release-hooks.test.ts).
  return plugin.onRequest(function refuseWrites({ request }: { request: Request }) {
    if (!SAFE_METHODS.has(request.method))
      throw new EarlyProblem(
        new Problem(
          'forbidden',
          `This server runs read-only (--read-only): ${request.method} is refused. Reads (GET) work as usual.`,
        ),
      )
  })
}
