import type { Limiter } from '../../src/store/store.ts'

/**
 * A limiter usable at once although its store opens asynchronously: every call waits for `ready`, then goes to the
 * limiter it gives (for `whenReady` in backends.ts).
 *
 * @example
 * limiter: (name, rule, clock) => deferredLimiter(ready.then((store) => store.limiter(name, rule, clock)))
 */
export function deferredLimiter(ready: Promise<Limiter>): Limiter {
  // A store that fails to open fails the calls that wait for it; unasked, the failure is not one more of its own.
  ready.catch(() => {})
  return {
    hit: async (key) => (await ready).hit(key),
    record: async (key) => (await ready).record(key),
    settle: async (attempt) => (await ready).settle(attempt),
    forgive: async (attempt) => (await ready).forgive(attempt),
    forgetSettled: async (key) => (await ready).forgetSettled(key),
    count: async (key) => (await ready).count(key),
    retryAfter: async (key) => (await ready).retryAfter(key),
  }
}
