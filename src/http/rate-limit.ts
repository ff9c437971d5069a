/**
 * The `RateLimit-Policy` and `RateLimit` headers (draft-ietf-httpapi-ratelimit-headers-11, Structured Fields): each
 * brake a request was counted by is a policy named as its limiter is, with its quota `q` and window `w` in seconds,
 * and its state now: `r` attempts remaining and `t` seconds until the quota is back. Limits here slide, so on an
 * answer that passed `t` is the window (by then every attempt counted now has left it: an upper bound); on a 429 it
 * is the exact wait, as `Retry-After` says.
 *
 * @example
 * rateLimitHeaders({ policy: 'artists-per-account', limit: 100, windowMs: 3_600_000, remaining: 99 })
 * // { 'ratelimit-policy': '"artists-per-account";q=100;w=3600', ratelimit: '"artists-per-account";r=99;t=3600' }
 */

/** One brake as it stood for a request: its policy, and what remains (with the wait, when refused). */
export interface RateLimitState {
  /** The limiter's name: a token of letters, digits and hyphens. */
  policy: string
  limit: number
  windowMs: number
  remaining: number
  /** Seconds until an attempt is allowed again, when refused; the window otherwise. */
  resetSeconds?: number
}

/** The two headers for `state`. */
export function rateLimitHeaders({ policy, limit, windowMs, remaining, resetSeconds }: RateLimitState) {
  const window = Math.ceil(windowMs / 1000)
  return {
    'ratelimit-policy': `"${policy}";q=${limit};w=${window}`,
    ratelimit: `"${policy}";r=${remaining};t=${resetSeconds ?? window}`,
  }
}

/** Where a route hears how a request stood against its brake, to answer the headers (see `rateLimitHeaders`). */
export type RateLimitReport = (state: RateLimitState) => void

/** A report that sets the headers on an Elysia context's `set`. */
export const reportOn =
  (set: { headers: Record<string, unknown> }): RateLimitReport =>
  (state) => {
    Object.assign(set.headers, rateLimitHeaders(state))
  }
