/**
 * The two attacks on a fixture server's memory that bench/fixtures-memory.ts (over HTTP, resident memory) and
 * bench/fixtures-heap.ts (in-process, the heap) both send: each a number of requests, request `i` given as a path and
 * its init, sent 50 at a time.
 */

/** The service key the servers of both benchmarks are started with. */
export const KEY = 'k'.repeat(24)

/** An 8 KiB JSON body of empty objects: the body that weighs most once parsed. */
const body = `[${Array(2730).fill('{}').join(',')}]`
const description = 'x'.repeat(10_000)

export interface Attack {
  name: string
  requests: number
  request(i: number): { path: string; init: RequestInit }
}

export const ATTACKS: Attack[] = [
  {
    name: `anonymous POSTs of ${body.length} bytes over 500 namespaces`,
    requests: 10_000,
    request: (i) => ({
      path: '/api/v1/artists',
      init: {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'rock-legends-namespace': `ns-${i % 500}` },
        body,
      },
    }),
  },
  {
    name: 'PUTs of a 10,000-character description over 20 namespaces',
    requests: 20_000,
    request: (i) => ({
      path: '/api/v1/artists/1',
      init: {
        method: 'PUT',
        headers: { 'content-type': 'application/json', 'rock-legends-namespace': `ns-${i % 20}`, 'x-api-key': KEY },
        body: JSON.stringify({ name: `Charly ${i}`, description }),
      },
    }),
  },
]

/** Sends every request of `attack` through `send`, 50 at a time, each answer read to its end. */
export async function run(attack: Attack, send: (path: string, init: RequestInit) => Promise<Response>): Promise<void> {
  for (let i = 0; i < attack.requests; i += 50)
    await Promise.all(
      Array.from({ length: 50 }, (_, j) => {
        const { path, init } = attack.request(i + j)
        return send(path, init).then((response) => response.text())
      }),
    )
}
