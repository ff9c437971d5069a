/**
 * The ceiling: a bare `Bun.serve` that answers each benchmarked request with a response recorded from the real server,
 * byte for byte, so the gap to rock-legends is the cost of the framework, routing, validation, serialisation and
 * (for creates) storage.
 *
 * Usage: bun bench/ceiling.ts RESPONSES.json   (prints `ceiling listening on http://127.0.0.1:PORT`)
 */

/** A recorded response, as stored in the file given to this script. */
export interface CannedResponse {
  method: 'GET' | 'POST'
  /** Path and query, e.g. `/api/v1/artists?limit=10&offset=0`. */
  path: string
  status: number
  /** Every header of the recorded answer except `date` and `content-length`, which Bun.serve writes itself. */
  headers: Record<string, string>
  /** The body, base64-encoded. */
  body: string
}

/** Serves `responses` on a free loopback port, reading any request body first; anything else gets a 404. */
function serveCanned(responses: readonly CannedResponse[]) {
  const byRequest = new Map(
    responses.map(({ method, path, status, headers, body }) => [
      `${method} ${path}`,
      { body: Buffer.from(body, 'base64'), init: { status, headers } },
    ]),
  )
  return Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch(request) {
      const url = request.url
      const canned = byRequest.get(`${request.method} ${url.slice(url.indexOf('/', 'http://'.length))}`)
      const respond = () =>
        canned ? new Response(canned.body, canned.init) : new Response('not recorded\n', { status: 404 })
      // Reads without a body stay synchronous, as the fastest Bun.serve handler is.
      return request.body ? request.arrayBuffer().then(respond) : respond()
    },
  })
}

if (import.meta.main) {
  const file = process.argv[2]
  if (!file) throw new Error('usage: bun bench/ceiling.ts RESPONSES.json')
  const server = serveCanned(await Bun.file(file).json())
  process.stdout.write(`ceiling listening on ${server.url.origin}\n`)
}
