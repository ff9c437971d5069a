import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { MAX_TARGET_LENGTH } from '../../src/http/request-target.ts'
import { ensureBinary, type RunningBinary, startBinary } from '../support/binary.ts'

// What a URL that is too long gets from the executable: up to 8 KiB of path and query the app answers as usual;
// beyond, the app answers a 414 problem; past about 16 KiB of request line and headers together, Bun's own parser
// refuses the request with a bare 431 before the app sees it (no hook of Bun.serve runs for it), and the server goes
// on serving. docs/api.md says so.

let server: RunningBinary

/** A target of `length` characters: a search, padded with a parameter the route ignores. */
const target = (length: number) => {
  const head = '/api/v1/artists?q=spinetta&pad='
  return head + 'a'.repeat(length - head.length)
}

beforeAll(async () => {
  await ensureBinary()
  server = await startBinary(['--port', '0', '--data', ':memory:', '--seed', '--log', 'off'])
}, 60_000)
afterAll(() => server.stop())

describe('long URLs, through the executable', () => {
  test('a target of 8 KiB is answered as usual', async () => {
    const response = await fetch(`${server.url}${target(MAX_TARGET_LENGTH)}`)
    expect(response.status).toBe(200)
    expect(((await response.json()) as { meta: { total: number } }).meta.total).toBeGreaterThan(0)
  })

  test.each([MAX_TARGET_LENGTH + 1, 12_000, 16_000])('a target of %d characters → 414 problem', async (length) => {
    for (const method of ['GET', 'POST']) {
      const response = await fetch(`${server.url}${target(length)}`, {
        method,
        headers: { 'content-type': 'application/json', 'x-api-key': 'none' },
        body: method === 'POST' ? '{"name":"x"}' : undefined,
      })
      expect({ method, status: response.status }).toEqual({ method, status: 414 })
      expect(response.headers.get('content-type')).toBe('application/problem+json')
      expect(await response.json()).toMatchObject({ type: '/problems/uri-too-long', status: 414 })
    }
    // A route that does not exist is refused alike.
    expect((await fetch(`${server.url}/nowhere?pad=${'b'.repeat(length)}`)).status).toBe(414)
  })

  test('past about 16 KiB of request line and headers, Bun answers a bare 431 itself, and serving goes on', async () => {
    for (const length of [17_000, 64_000]) {
      const response = await fetch(`${server.url}${target(length)}`)
      expect(response.status).toBe(431)
      expect(await response.text()).toBe('')
    }
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200)
  })
})
