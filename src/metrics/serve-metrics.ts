import type { Server } from 'bun'
import type { Metrics } from './metrics.ts'

/** Where `/metrics` is served: a listener of its own, apart from the API's. */
export interface MetricsAddress {
  host: string
  port: number
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1'])

/**
 * Reads `[HOST:]PORT` (`9464`, `127.0.0.1:9464`, `[::1]:9464`, `0.0.0.0:9464`); the host is loopback unless named.
 * Returns `undefined` for text that is not such an address.
 */
export function parseMetricsAddress(text: string): MetricsAddress | undefined {
  const match = /^(?:(\[[0-9a-fA-F:.]+\]|[^:[\]\s]+):)?(\d{1,5})$/.exec(text.trim())
  const port = Number(match?.[2])
  if (!match || !(port >= 0 && port <= 65535)) return undefined
  const host = match[1] === undefined ? '127.0.0.1' : match[1].replace(/^\[(.*)\]$/, '$1')
  return { host, port }
}

/** Whether only this machine can reach `host`. */
export const isLoopback = (host: string) => LOOPBACK.has(host) || /^127\./.test(host)

const HEADERS = {
  'content-type': 'text/plain; version=0.0.4; charset=utf-8',
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
}

/** The answer of the metrics listener to `request`: the text at `GET /metrics`, 404 or 405 elsewhere. */
export async function answerScrape(metrics: Metrics, request: Request): Promise<Response> {
  const start = request.url.indexOf('/', request.url.indexOf('//') + 2)
  const end = request.url.indexOf('?', start)
  const path = start < 0 ? '/' : request.url.slice(start, end < 0 ? undefined : end)
  const plain = { 'content-type': 'text/plain; charset=utf-8', 'x-content-type-options': 'nosniff' }
  if (path !== '/metrics')
    return new Response('Not found: the metrics are at /metrics.\n', { status: 404, headers: plain })
  if (request.method !== 'GET' && request.method !== 'HEAD')
    return new Response('Use GET.\n', { status: 405, headers: { ...plain, allow: 'GET, HEAD' } })
  return new Response(request.method === 'HEAD' ? null : await metrics.scrape(), { headers: HEADERS })
}

/**
 * Serves `metrics` at `GET /metrics` on a listener of its own (`--metrics [HOST:]PORT`), on loopback unless another
 * host is named: the API's port never answers `/metrics`, and nothing here needs a credential. Each scrape asks the
 * store whether it serves (bounded) and renders the text afresh; requests carry no body (at most 1 KiB is read).
 */
export function serveMetrics(metrics: Metrics, { host, port }: MetricsAddress): Server<undefined> {
  return Bun.serve({
    hostname: host,
    port,
    reusePort: false,
    development: false,
    maxRequestBodySize: 1024,
    fetch: (request) => answerScrape(metrics, request),
  })
}
