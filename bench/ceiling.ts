/**
 * The ceiling: a bare `Bun.serve` that answers each benchmarked path with a response recorded from the real server,
 * byte for byte, so the gap to rock-legends is the cost of the framework, routing, validation and serialisation.
 *
 * Usage: bun bench/ceiling.ts RESPONSES.json   (prints `ceiling listening on http://127.0.0.1:PORT`)
 */

/** A recorded response, as stored in the file given to this script. */
export interface CannedResponse {
  /** Path and query, e.g. `/api/v1/artists?limit=10&offset=0`. */
  path: string
  status: number
  contentType: string
  /** The body, base64-encoded. */
  body: string
}

/** Serves `responses` on a free loopback port; any other path gets a 404. */
function serveCanned(responses: readonly CannedResponse[]) {
  const byPath = new Map(
    responses.map(({ path, status, contentType, body }) => [
      path,
      { body: Buffer.from(body, 'base64'), init: { status, headers: { 'content-type': contentType } } },
    ]),
  )
  return Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch(request) {
      const url = request.url
      const canned = byPath.get(url.slice(url.indexOf('/', 'http://'.length)))
      return canned ? new Response(canned.body, canned.init) : new Response('not recorded\n', { status: 404 })
    },
  })
}

if (import.meta.main) {
  const file = process.argv[2]
  if (!file) throw new Error('usage: bun bench/ceiling.ts RESPONSES.json')
  const server = serveCanned(await Bun.file(file).json())
  process.stdout.write(`ceiling listening on ${server.url.origin}\n`)
}
