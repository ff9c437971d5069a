/**
 * Hears, for an operation a brake counted (a create within an account's quota, a sign-up from an address), the
 * brake's name and rule and how many more attempts it allows now: what the `RateLimit` headers of the answer say
 * (src/http/rate-limit.ts). The domain tells; the route answers.
 */
export type QuotaReport = (state: { policy: string; limit: number; windowMs: number; remaining: number }) => void
