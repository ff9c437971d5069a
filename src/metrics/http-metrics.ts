import { type Family, familyHeader, HistogramSeries, labelText } from './registry.ts'

/** The `route` label of requests that matched no route: unknown paths and methods, refusals made before routing. */
export const UNMATCHED_ROUTE = 'unmatched'

/**
 * Upper bounds of the request latency histogram, in seconds, 1–2.5–5 in every decade from 50 µs to 10 s: a read
 * takes tens of microseconds in the app, a durable write about a millisecond, a login tens, so each has buckets
 * around it to be told apart from the next.
 */
export const LATENCY_BUCKETS = [
  0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
]

/** The `code` label of the latency histogram: the status class, `1xx` to `5xx`. */
const CODES = ['1xx', '2xx', '3xx', '4xx', '5xx'] as const

// The methods a route can have; any other method matches no route, and is counted as `other`.
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'other'] as const
const METHOD_INDEX: Record<string, number> = { GET: 0, HEAD: 1, POST: 2, PUT: 3, PATCH: 4, DELETE: 5, OPTIONS: 6 }
const OTHER_METHOD = 7

/** Route templates kept apart at most; past them (never with this app's routes) requests count under `other`. */
const MAX_ROUTES = 500

/**
 * What one route and method have answered: statuses with their counts (side by side arrays: a route answers a few
 * statuses, found faster by a scan than a map), latencies by status class (made at the first answer of each), 429s. A
 * status is one of HTTP's (a `Response` holds no other), so the arrays are bounded.
 */
class MethodStats {
  readonly statuses: number[] = []
  readonly counts: number[] = []
  readonly latency: (HistogramSeries | undefined)[] = [undefined, undefined, undefined, undefined, undefined]
  refusals = 0
}

/**
 * The HTTP families: requests by method, route template and status, their latency, and the refusals of rate limits
 * (every 429). A request is counted by its route's template (Elysia's route path, such as
 * `/api/v1/artists/:artistId`), never its raw path; requests that matched no route count under `unmatched`. One map
 * lookup by a string the route compiled in, an array index and a few additions per request.
 */
export class HttpMetrics {
  private readonly routes = new Map<string, (MethodStats | undefined)[]>()

  /** Counts one answer: `route` is the template it matched, or `undefined`; `seconds` its latency. */
  record(method: string, route: string | undefined, status: number, seconds: number): void {
    let byMethod = this.routes.get(route ?? UNMATCHED_ROUTE)
    if (byMethod === undefined) byMethod = this.add(route ?? UNMATCHED_ROUTE)
    const index = METHOD_INDEX[method] ?? OTHER_METHOD
    let stats = byMethod[index]
    if (stats === undefined) {
      stats = new MethodStats()
      byMethod[index] = stats
    }
    const statuses = stats.statuses
    let at = statuses.indexOf(status)
    if (at < 0) {
      at = statuses.push(status) - 1
      stats.counts.push(0)
    }
    stats.counts[at] = (stats.counts[at] as number) + 1
    // 100–599 give 0–4; a Response holds no other status, but the index stays within the array whatever it is.
    const code = Math.min(Math.max(((status / 100) | 0) - 1, 0), 4)
    let latency = stats.latency[code]
    if (latency === undefined) {
      latency = new HistogramSeries(LATENCY_BUCKETS)
      stats.latency[code] = latency
    }
    latency.observe(seconds)
    if (status === 429) stats.refusals++
  }

  private add(route: string): (MethodStats | undefined)[] {
    const key = this.routes.size < MAX_ROUTES ? route : 'other'
    let byMethod = this.routes.get(key)
    if (byMethod === undefined) {
      byMethod = new Array(METHODS.length).fill(undefined)
      this.routes.set(key, byMethod)
    }
    return byMethod
  }

  /** Each series of the families, with its labels. */
  private *series(): Generator<[Record<string, string>, MethodStats]> {
    for (const [route, byMethod] of this.routes)
      for (let i = 0; i < byMethod.length; i++) {
        const stats = byMethod[i]
        if (stats) yield [{ method: METHODS[i] as string, route }, stats]
      }
  }

  /** The three families, for the registry. */
  families(): Family[] {
    return [
      {
        name: 'rock_legends_http_requests_total',
        render: (lines) => {
          familyHeader(
            lines,
            'rock_legends_http_requests_total',
            'HTTP requests answered, by method, route template (unmatched for none) and status.',
            'counter',
          )
          for (const [labels, stats] of this.series())
            for (let i = 0; i < stats.statuses.length; i++)
              lines.push(
                `rock_legends_http_requests_total${labelText({ ...labels, status: String(stats.statuses[i]) })} ${stats.counts[i]}`,
              )
        },
      },
      {
        name: 'rock_legends_http_request_duration_seconds',
        render: (lines) => {
          familyHeader(
            lines,
            'rock_legends_http_request_duration_seconds',
            "Time from a route's first step to its answer, by method, route template and status class (code).",
            'histogram',
          )
          for (const [labels, stats] of this.series())
            for (let i = 0; i < CODES.length; i++)
              stats.latency[i]?.render(lines, 'rock_legends_http_request_duration_seconds', {
                ...labels,
                code: CODES[i] as string,
              })
        },
      },
      {
        name: 'rock_legends_rate_limit_refusals_total',
        render: (lines) => {
          familyHeader(
            lines,
            'rock_legends_rate_limit_refusals_total',
            'Requests refused with 429 Too Many Requests (a rate limit or a bound on streams), by method and route template.',
            'counter',
          )
          for (const [labels, stats] of this.series())
            if (stats.refusals > 0)
              lines.push(`rock_legends_rate_limit_refusals_total${labelText(labels)} ${stats.refusals}`)
        },
      },
    ]
  }
}
