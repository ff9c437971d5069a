import { describe, expect, test } from 'bun:test'
import { createApp } from '../../src/app.ts'
import { problemResponder } from '../../src/http/error-handler.ts'
import { requestTarget } from '../../src/http/request-target.ts'
import type { AccessEntry } from '../../src/log.ts'
import { openMemoryStore } from '../../src/store/document/memory.ts'

// However odd the request, the answer is a problem (never a bare 500 or a crash of the error handler) and the access
// log gets one entry for it. test/http/odd-requests.binary.test.ts sends the same over a socket to the executable.

/**
 * A request whose `url` is what Bun hands the app for a target it cannot make absolute: CONNECT's authority-form
 * (`example.com:443`), or a path whose Host header is not a valid host (`/api/v1/artists/1`).
 */
function rawTarget(target: string, method: string, host?: string): Request {
  const request = new Request('http://localhost/', { method, headers: host === undefined ? {} : { host } })
  Object.defineProperty(request, 'url', { value: target })
  return request
}

function oddApp() {
  const entries: AccessEntry[] = []
  const reported: unknown[] = []
  const app = createApp({
    store: openMemoryStore(),
    report: (_, error) => reported.push(error),
    accessLog: (entry) => entries.push(entry),
  })
  return { app, entries, reported }
}

/** Checks that `response` is a problem whose `status` is the HTTP status, and returns its body. */
async function expectProblem(response: Response, status: number) {
  expect(response.status).toBe(status)
  expect(response.headers.get('content-type')).toBe('application/problem+json')
  const body = (await response.json()) as { type: string; status: number; detail: string }
  expect(body).toMatchObject({ type: expect.stringMatching(/^\/problems\/[a-z-]+$/), status })
  expect(body.detail.length).toBeGreaterThan(10)
  return body
}

// Bun makes every URL absolute except these kinds of target: CONNECT's, and a path whose Host header is invalid (or
// absent: HTTP/1.0, which is served).
// Each row names its Host header (none for CONNECT), so that every row passes the test all five values.
const RAW_TARGETS: [string, string, string, number, string | undefined][] = [
  ['CONNECT to a host and port (a client taking the server for a proxy)', 'CONNECT', 'example.com:443', 404, undefined],
  ['CONNECT to a bare name', 'CONNECT', 'foo', 404, undefined],
  ['CONNECT to an IPv6 address', 'CONNECT', '[::1]:80', 404, undefined],
  ['a read with an invalid Host header', 'GET', '/api/v1/artists/1', 400, 'exa mple'],
  ['a write with an invalid Host header', 'POST', '/api/v1/artists', 400, 'exa mple'],
]

describe('targets that are not URLs', () => {
  test.each(RAW_TARGETS)('%s → %d problem and one access entry', async (_, method, target, status, host) => {
    const { app, entries, reported } = oddApp()
    await expectProblem(await app.handle(rawTarget(target, method, host)), status)
    await Bun.sleep(0)
    expect(entries).toEqual([expect.objectContaining({ method, status })])
    expect(reported).toEqual([])
  })

  test.each([
    ['/healthz', 200],
    ['/livez', 200],
    ['/readyz', 200],
    ['/api/v1/artists/1/albums', 400],
    ['/nowhere', 400],
  ] as const)('GET %s without Host (HTTP/1.0, as load balancers check) → %d', async (target, status) => {
    const { app, entries, reported } = oddApp()
    const response = await app.handle(rawTarget(target, 'GET'))
    expect(response.status).toBe(status)
    await Bun.sleep(0)
    // Each gets its entry: a check's is marked so (the log writes it at debug only), the refusals' are not.
    expect(entries).toEqual([
      expect.objectContaining({ method: 'GET', path: target, status, healthCheck: status === 200 }),
    ])
    expect(reported).toEqual([])
  })

  // The log takes the path with `requestTarget`: slicing from the first slash after `//` logged `example.com:443` as `3`.
  test.each(RAW_TARGETS)('%s: the access entry records the target as sent', async (_, method, target, __, host) => {
    const { app, entries } = oddApp()
    await app.handle(rawTarget(target, method, host))
    await Bun.sleep(0)
    expect(entries[0]?.path).toBe(target)
  })

  test.each([
    ['http://localhost/api/v1/artists?q=a', '/api/v1/artists?q=a'],
    ['http://localhost/', '/'],
    ['http://[::1]:3000//healthz', '//healthz'],
    ['example.com:443', 'example.com:443'],
    ['/api/v1/artists/1', '/api/v1/artists/1'],
    ['foo', 'foo'],
  ])('requestTarget(%p) is %p', (url, target) => {
    expect(requestTarget(url)).toBe(target)
  })
})

describe('odd methods and paths', () => {
  test.each([
    ['CONNECT', '/', 405],
    ['CONNECT', '/api/v1/artists', 405],
    ['TRACE', '/', 405],
    ['TRACE', '/nowhere', 404],
    ['PROPFIND', '/api/v1/artists', 405],
    ['QUERY', '/api/v1/artists/1', 405],
    ['PURGE', '/nowhere', 404],
    ['MKCOL', '/problems/__proto__', 405],
    ['PATCH', '/problems/constructor', 405],
    ['GET', '/problems/constructor', 404],
    ['GET', '/problems/__proto__', 404],
    ['GET', '/problems/toString', 404],
    ['GET', '/%zz', 404],
    ['GET', '/api/v1/artists/%00', 400],
    ['GET', '/api/v1/artists/constructor', 400],
    ['DELETE', '/__proto__', 404],
  ])('%s %s → %d problem and one access entry', async (method, path, status) => {
    const { app, entries, reported } = oddApp()
    const response = await app.handle(new Request(`http://localhost${path}`, { method }))
    await expectProblem(response, status)
    if (status === 405) expect(response.headers.get('allow')).toMatch(/^[A-Z]+(, [A-Z]+)*$/)
    await Bun.sleep(0)
    expect(entries).toEqual([expect.objectContaining({ method, path, status })])
    expect(reported).toEqual([])
  })

  test('a failure inside the error handler is still a 500 problem, reported', async () => {
    const reported: unknown[] = []
    const respond = problemResponder(
      () => {
        throw new TypeError('the route table is broken')
      },
      (_, error) => reported.push(error),
    )
    const set: { status?: number } = {}
    const response = respond({ code: 'NOT_FOUND', error: new Error(), request: new Request('http://localhost/x'), set })
    const body = await expectProblem(response, 500)
    expect(body.detail).not.toContain('route table')
    expect(set.status).toBe(500)
    expect(reported).toHaveLength(1)
  })
})

describe('a short host', () => {
  // `Host: x` is a valid host; the app answers such requests itself with --fixtures and while a takeover holds them.
  for (const host of ['x', 'ab', 'a:1', '[::1]'])
    test(`routes http://${host}/ by its whole path`, async () => {
      const { app } = oddApp()
      const list = await app.handle(new Request(`http://${host}/api/v1/artists`))
      expect(list.status).toBe(200)
      expect(await list.json()).toMatchObject({ data: [], meta: { total: 0 } })
      expect((await app.handle(new Request(`http://${host}/api/v1/artists/7`))).status).toBe(404)
    })
})
