import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createApp } from '../../src/app.ts'
import { requirementOf } from '../../src/auth/guard.ts'
import { MAX_BODY_BYTES } from '../../src/http/body.ts'
import { openMemoryStore } from '../../src/store/document/memory.ts'
import { asService, SERVICE_KEY } from '../helpers.ts'
import { answerHead, ensureBinary, type RunningBinary, startBinary, statusOf } from '../support/binary.ts'

// An anonymous sender costs the server nothing for its body: on every route that needs credentials they are checked
// before a byte of the body is read, so whatever it sends (a near-1 MiB body, a stream without end, bytes that are
// not JSON) it gets the same 401, at once. Public routes and authenticated callers keep the body's own answers.

const app = () =>
  createApp({ store: openMemoryStore(), apiKeys: [SERVICE_KEY], reset: async () => {}, report: () => {} })

/** Every route that needs credentials, with its path parameters filled in, read from the app itself. */
function protectedRoutes() {
  return app()
    .routes.filter((route) => requirementOf(route.hooks.transform) && !['GET', 'HEAD'].includes(route.method))
    .map((route) => ({ method: route.method, path: route.path.replaceAll(/:\w+/g, '1') }))
}

/** A body that counts how much of it was read; `chunks` of 64 KiB, or without end. */
function countedBody(chunk: Uint8Array, chunks = Number.POSITIVE_INFINITY) {
  const read = { chunks: 0 }
  const stream = new ReadableStream({
    pull(controller) {
      read.chunks++
      controller.enqueue(chunk)
      if (read.chunks >= chunks) controller.close()
    },
  })
  return { stream, read }
}

const manyStrings = new TextEncoder().encode(`{"name":"x","tags":[${Array(16_000).fill('"a"')}]}`)
const spaces = new TextEncoder().encode(' '.repeat(64 * 1024))

const BODIES: [string, Record<string, string>, () => { stream: ReadableStream; read: { chunks: number } }][] = [
  ['a JSON body just under 1 MiB', { 'content-type': 'application/json' }, () => countedBody(manyStrings, 15)],
  ['a stream without end', { 'content-type': 'application/json' }, () => countedBody(spaces)],
  [
    'a declared 3 MiB',
    { 'content-type': 'application/json', 'content-length': String(3 * MAX_BODY_BYTES) },
    () => countedBody(spaces, 48),
  ],
  ['a body that is not JSON', { 'content-type': 'text/plain' }, () => countedBody(spaces, 4)],
  ['a body without a type', {}, () => countedBody(spaces, 4)],
]

/** No credentials, an unknown key, a forged token. */
const ANONYMOUS: Record<string, string>[] = [
  {},
  { 'x-api-key': `${SERVICE_KEY}x` },
  { authorization: 'Bearer rl_tok_forged' },
]

describe('credentials before the body (in-process)', () => {
  test('the routes that need credentials are found: every write of the catalogue, the account and the reset', () => {
    const routes = protectedRoutes().map(({ method, path }) => `${method} ${path}`)
    expect(routes).toEqual(
      expect.arrayContaining([
        'POST /api/v1/artists',
        'PUT /api/v1/artists/1',
        'DELETE /api/v1/artists/1',
        'POST /api/v1/artists/1/albums',
        'POST /api/v1/user/api-keys',
        'DELETE /api/v1/user/api-keys/1',
        'POST /api/v1/user/logout',
        'POST /__admin/reset',
      ]),
    )
    expect(routes).not.toContain('POST /api/v1/user/signup')
    expect(routes).not.toContain('POST /api/v1/user/login')
  })

  for (const [label, headers, body] of BODIES)
    test(`${label}, sent anonymously to every protected route → 401, and the body is never read`, async () => {
      const server = app()
      for (const { method, path } of protectedRoutes())
        for (const credentials of ANONYMOUS) {
          const { stream, read } = body()
          const response = await server.handle(
            new Request(`http://localhost${path}`, { method, headers: { ...headers, ...credentials }, body: stream }),
          )
          const context = `${method} ${path} ${JSON.stringify(credentials)}`
          expect(response.status, context).toBe(401)
          expect(response.headers.get('www-authenticate'), context).toBe('Bearer realm="rock-legends"')
          expect(response.headers.get('content-type'), context).toBe('application/problem+json')
          // A ReadableStream asks for its first chunk as it is made; none after that.
          expect(read.chunks, context).toBeLessThanOrEqual(1)
        }
    })

  test.each([
    ['a service key on a user route', 'POST', '/api/v1/user/api-keys', asService, 403],
    ['a service key on a user route', 'POST', '/api/v1/user/logout', asService, 403],
  ])('%s (%s %s) → %d before the body is read', async (_, method, path, credentials, status) => {
    const { stream, read } = countedBody(spaces)
    const response = await app().handle(
      new Request(`http://localhost${path}`, {
        method,
        headers: { 'content-type': 'application/json', ...credentials },
        body: stream,
      }),
    )
    expect(response.status).toBe(status)
    expect(read.chunks).toBeLessThanOrEqual(1)
  })

  test.each([
    ['too large', { 'content-type': 'application/json' }, `"${'x'.repeat(MAX_BODY_BYTES)}"`, 413],
    ['not JSON', { 'content-type': 'text/plain' }, 'hi', 415],
    ['malformed', { 'content-type': 'application/json' }, '{"name":', 400],
    ['a __proto__ key', { 'content-type': 'application/json' }, '{"__proto__":{}}', 400],
  ])(
    'the body is still checked where credentials are given or not needed: %s → %d',
    async (_, headers, body, status) => {
      const server = app()
      const send = (path: string, extra: Record<string, string> = {}) =>
        server.handle(
          new Request(`http://localhost${path}`, { method: 'POST', headers: { ...headers, ...extra }, body }),
        )
      expect((await send('/api/v1/artists', asService)).status).toBe(status)
      expect((await send('/api/v1/user/signup')).status).toBe(status)
      expect((await send('/api/v1/user/login')).status).toBe(status)
    },
  )

  test('a request is authenticated once, though both the parser and the route ask', async () => {
    const store = openMemoryStore()
    const server = createApp({ store, report: () => {} })
    const signUp = { name: 'Ana', email: 'ana@example.com', password: 'long enough' }
    const json = { 'content-type': 'application/json' }
    await server.handle(
      new Request('http://localhost/api/v1/user/signup', {
        method: 'POST',
        headers: json,
        body: JSON.stringify(signUp),
      }),
    )
    const login = await server.handle(
      new Request('http://localhost/api/v1/user/login', {
        method: 'POST',
        headers: json,
        body: JSON.stringify({ email: signUp.email, password: signUp.password }),
      }),
    )
    const { token } = (await login.json()) as { token: string }
    const uses: string[] = []
    const noteUse = store.credentials.noteUse.bind(store.credentials)
    store.credentials.noteUse = (id, at) => {
      uses.push(at)
      return noteUse(id, at)
    }
    const created = await server.handle(
      new Request('http://localhost/api/v1/artists', {
        method: 'POST',
        headers: { ...json, authorization: `Bearer ${token}` },
        body: '{"name":"Moris"}',
      }),
    )
    expect(created.status).toBe(201)
    expect(uses).toHaveLength(1)
  })
})

describe('the hostile-key scan', () => {
  const send = (body: string) =>
    app().handle(
      new Request('http://localhost/api/v1/artists', {
        method: 'POST',
        headers: { ...asService, 'content-type': 'application/json' },
        body,
      }),
    )
  // `x` and the arrays inside it: `levels` levels below the body itself.
  const nested = (levels: number) => `{"name":"A","x":${'['.repeat(levels)}${']'.repeat(levels)}}`

  test.each([
    ['at the top', '{"name":"A","__proto__":{}}', '/__proto__', 'is not a known property'],
    ['written with escapes', '{"name":"A","\\u005f_proto__":{}}', '/__proto__', 'is not a known property'],
    [
      'inside arrays and odd keys',
      '{"a/b~c":[0,{"y":[{"__proto__":1}]}]}',
      '/a~1b~0c/1/y/0/__proto__',
      'is not a known property',
    ],
    [
      'after 90,000 harmless keys',
      `{${Array.from({ length: 90_000 }, (_, i) => `"k${i}":0,`).join('')}"__proto__":0}`,
      '/__proto__',
      'is not a known property',
    ],
    ['33 levels deep', nested(33), `/x${'/0'.repeat(32)}`, 'nests more than 32 levels deep'],
    ['5,000 levels deep', nested(5000), `/x${'/0'.repeat(32)}`, 'nests more than 32 levels deep'],
  ])('finds a __proto__ key or too deep a body %s, with its pointer', async (_, body, pointer, detail) => {
    const response = await send(body)
    expect(response.status).toBe(400)
    expect(((await response.json()) as { errors: unknown }).errors).toEqual([{ pointer, detail }])
  })

  test('32 levels are allowed through to the schema, which names the unknown property', async () => {
    const response = await send(nested(32))
    expect(response.status).toBe(400)
    expect(((await response.json()) as { errors: { pointer: string }[] }).errors[0]?.pointer).toBe('/x')
  })
})

describe('credentials before the body (the executable, over a socket)', () => {
  let server: RunningBinary
  let port: number
  beforeAll(async () => {
    await ensureBinary()
    server = await startBinary(['--port', '0', '--data', ':memory:', '--api-key', 'k', '--log', 'off'])
    port = Number(new URL(server.url).port)
  }, 120_000)
  afterAll(() => server.stop())

  /** Sends the head of a POST declaring a body just under 1 MiB, and 20 bytes of it; what comes back within `ms`. */
  const partialPost = (path: string, headers: string, ms: number) =>
    answerHead(
      port,
      `POST ${path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n${headers}Content-Length: ${MAX_BODY_BYTES - 100}\r\n\r\n{"name":"x","tags":[`,
      ms,
    )

  test.each([
    ['no credentials', ''],
    ['an unknown key', 'X-API-Key: nope\r\n'],
    ['a forged token', 'Authorization: Bearer rl_tok_forged\r\n'],
  ])('an anonymous write (%s) is answered 401 without waiting for its body', async (_, headers) => {
    const { answer, afterMs } = await partialPost('/api/v1/artists', headers, 3000)
    expect(statusOf(answer)).toBe(401)
    expect(answer.toLowerCase()).toContain('www-authenticate: bearer realm="rock-legends"')
    expect(afterMs).toBeLessThan(1000)
  })

  test('a service key on a user route is answered 403 without waiting for the body', async () => {
    const { answer, afterMs } = await partialPost('/api/v1/user/api-keys', 'X-API-Key: k\r\n', 3000)
    expect(statusOf(answer)).toBe(403)
    expect(afterMs).toBeLessThan(1000)
  })

  test('with a valid key the same request waits for its body (so the 401 above is not a timeout)', async () => {
    const { answer } = await partialPost('/api/v1/artists', 'X-API-Key: k\r\n', 1000)
    expect(answer).toBe('')
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200)
  })
})
