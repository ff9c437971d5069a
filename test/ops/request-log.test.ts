import { afterEach, describe, expect, spyOn, test } from 'bun:test'
import { createApp } from '../../src/app.ts'
import { SECURITY_HEADERS } from '../../src/http/security-headers.ts'
import { type AccessEntry, createLogger, flushLog, jsonAccess, prettyAccess, printErrorLine } from '../../src/log.ts'
import { openMemoryStore } from '../../src/store/document/memory.ts'
import { SERVICE_KEY } from '../helpers.ts'
import { cheapPasswords } from '../support/passwords.ts'

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

/** An app that logs into an array; entries arrive just after each answer is sent. */
function loggedApp(options: { cors?: string[]; readOnly?: boolean } = {}) {
  const entries: AccessEntry[] = []
  const app = createApp({
    store: openMemoryStore(),
    apiKeys: [SERVICE_KEY],
    accessLog: (entry) => entries.push(entry),
    report: () => {},
    ...options,
  })
  const send = async (path: string, init: RequestInit = {}) => {
    const response = await app.handle(new Request(`http://localhost${path}`, init))
    const size = (await response.arrayBuffer()).byteLength
    // The access log is written after the answer has gone out.
    for (let i = 0; i < 100 && entries.length === 0; i++) await Bun.sleep(1)
    return { response, size, entry: entries.shift() }
  }
  return { send, entries }
}

const json = { 'content-type': 'application/json' }

test('health checks carry their request id, and their entries say they are health checks (logged at debug only)', async () => {
  const { send, entries } = loggedApp()
  for (const path of ['/healthz', '/livez', '/readyz']) {
    const { response, entry } = await send(path)
    expect({ path, status: response.status }).toEqual({ path, status: 200 })
    expect(entry).toMatchObject({
      path,
      status: 200,
      healthCheck: true,
      requestId: response.headers.get('x-request-id'),
    })
  }
  // HEAD is one too; another method, a query or another path make none.
  expect((await send('/livez', { method: 'HEAD' })).entry?.healthCheck).toBe(true)
  expect((await send('/healthz', { method: 'POST' })).entry).toMatchObject({ status: 405, healthCheck: false })
  expect((await send('/healthz?from=uptime-check')).entry?.healthCheck).toBe(false)
  expect((await send('/api/v1/artists')).entry).toMatchObject({
    path: '/api/v1/artists',
    status: 200,
    healthCheck: false,
  })
  expect(entries).toEqual([])
})

describe('request ids', () => {
  test('a request without one gets a generated UUIDv7, in the answer and in the log', async () => {
    const { send } = loggedApp()
    const { response, entry } = await send('/api/v1/artists')
    const id = response.headers.get('x-request-id')
    expect(id).toMatch(UUID_V7)
    expect(entry?.requestId).toBe(id as string)
    const second = await send('/api/v1/artists')
    expect(second.response.headers.get('x-request-id')).not.toBe(id)
  })

  test.each([
    ['a UUID', '3f1c2a9e-1b7d-4c55-9a0b-5d2f6e7a8b9c'],
    ['a proxy-style id', 'req-42:abc/def+ghi='],
    ['128 characters', 'x'.repeat(128)],
  ])("the client's own id is echoed: %s", async (_, id) => {
    const { send } = loggedApp()
    const { response, entry } = await send('/api/v1/artists', { headers: { 'x-request-id': id } })
    expect(response.headers.get('x-request-id')).toBe(id)
    expect(entry?.requestId).toBe(id)
  })

  test.each([
    ['too long', 'x'.repeat(129)],
    ['with spaces', 'two words'],
    ['with a control character', 'evil\u0007bell'],
    ['non-ASCII', 'pedido-ñ'],
  ])('an unusable id (%s) is replaced, so it cannot forge a log line', async (_, id) => {
    const { send } = loggedApp()
    const { response } = await send('/api/v1/artists', { headers: { 'x-request-id': id } })
    expect(response.headers.get('x-request-id')).toMatch(UUID_V7)
  })

  test('without an access log there are no ids and no per-request work', async () => {
    const app = createApp({ store: openMemoryStore(), report: () => {} })
    const response = await app.handle(new Request('http://localhost/api/v1/artists'))
    expect(response.headers.get('x-request-id')).toBeNull()
  })
})

describe('the access log', () => {
  test('a --read-only refusal, answered before routing, carries its id and is logged', async () => {
    const { send } = loggedApp({ readOnly: true })
    const { response, entry } = await send('/api/v1/artists', { method: 'POST', body: '{}', headers: json })
    expect(response.status).toBe(403)
    expect(response.headers.get('x-request-id')).toMatch(UUID_V7)
    expect(entry).toMatchObject({ method: 'POST', status: 403, requestId: response.headers.get('x-request-id') })
  })

  test.each([
    ['GET', '/api/v1/artists?limit=2', undefined, {}, 200],
    ['GET', '/api/v1/artists/7', undefined, {}, 404],
    ['GET', '/api/v1/artists?limit=abc', undefined, {}, 400],
    ['GET', '/no/such/thing', undefined, {}, 404],
    ['PATCH', '/api/v1/artists', undefined, {}, 405],
    ['POST', '/api/v1/artists', '{"name":"Moris"}', json, 401],
    ['POST', '/api/v1/artists', '{"name":"Moris"}', { ...json, 'x-api-key': SERVICE_KEY }, 201],
    ['POST', '/api/v1/artists', 'name=Moris', { 'content-type': 'text/plain', 'x-api-key': SERVICE_KEY }, 415],
    ['POST', '/api/v1/artists', '{"name":', { ...json, 'x-api-key': SERVICE_KEY }, 400],
    ['HEAD', '/api/v1/artists', undefined, {}, 200],
    ['GET', '/healthz?from=uptime-check', undefined, {}, 200],
  ] as const)('%s %s → %d is logged with that status', async (method, path, body, headers, status) => {
    const { send } = loggedApp()
    const { response, entry } = await send(path, { method, body, headers: { ...headers, 'user-agent': 'tests/1.0' } })
    expect(response.status).toBe(status)
    expect(entry).toMatchObject({ method, path, status, requestId: response.headers.get('x-request-id') as string })
    // Calls without a socket are `in-process`; the user agent is the client's.
    expect(entry).toMatchObject({ client: 'in-process', userAgent: 'tests/1.0' })
    expect(entry?.durationMs).toBeGreaterThanOrEqual(0)
  })

  test('pretty lines read left to right, colour only when asked', () => {
    const entry = {
      method: 'GET',
      path: '/api/v1/artists',
      status: 200,
      bytes: 2417,
      durationMs: 1.234,
      requestId: 'abc',
      client: '203.0.113.7',
      userAgent: 'curl/8.5.0',
    }
    expect(prettyAccess(entry)).toBe('GET /api/v1/artists 200 2417 B 1.2 ms 203.0.113.7 "curl/8.5.0" abc')
    expect(prettyAccess({ ...entry, userAgent: undefined })).toBe(
      'GET /api/v1/artists 200 2417 B 1.2 ms 203.0.113.7 abc',
    )
    // A streamed body (an event stream, a backup) has no size until it ends.
    expect(prettyAccess({ ...entry, bytes: undefined })).toBe(
      'GET /api/v1/artists 200 stream 1.2 ms 203.0.113.7 "curl/8.5.0" abc',
    )
    expect(prettyAccess({ ...entry, status: 503 }, true)).toContain('\x1b[31m503\x1b[0m')
  })
})

describe('writing the access log', () => {
  const entry = {
    method: 'GET',
    path: '/api/v1/artists/1',
    status: 200,
    bytes: 487,
    durationMs: 0.25,
    requestId: 'id-1',
    client: '::1',
    userAgent: 'node',
  }
  const written = () => {
    const spy = spyOn(console, 'error').mockImplementation(() => {})
    return { spy, text: () => spy.mock.calls.map((call) => `${call[0]}\n`).join('') }
  }
  afterEach(() => {
    flushLog()
  })

  test('lines are written together, in order, in one write, soon after the first', async () => {
    flushLog()
    const { spy, text } = written()
    try {
      const access = createLogger('pretty').access as (entry: AccessEntry) => void
      for (let i = 0; i < 100; i++) access({ ...entry, requestId: `id-${i}` })
      expect(spy).not.toHaveBeenCalled()
      for (let i = 0; i < 100 && spy.mock.calls.length === 0; i++) await Bun.sleep(10)
      expect(spy).toHaveBeenCalledTimes(1)
      expect(text()).toBe(
        Array.from({ length: 100 }, (_, i) => `${prettyAccess({ ...entry, requestId: `id-${i}` })}\n`).join(''),
      )
    } finally {
      spy.mockRestore()
    }
  })

  test('waiting lines go out before any other line on stderr, and on flushLog', () => {
    flushLog()
    const { spy, text } = written()
    try {
      const logger = createLogger('pretty')
      logger.access?.(entry)
      logger.error('it broke')
      logger.access?.({ ...entry, requestId: 'id-2' })
      printErrorLine('rock-legends: bye')
      logger.access?.({ ...entry, requestId: 'id-3' })
      flushLog()
      expect(text()).toBe(
        [
          prettyAccess(entry),
          'error: it broke',
          prettyAccess({ ...entry, requestId: 'id-2' }),
          'rock-legends: bye',
          prettyAccess({ ...entry, requestId: 'id-3' }),
          '',
        ].join('\n'),
      )
    } finally {
      spy.mockRestore()
    }
  })

  test('a request let through by its credentials names its caller, never a secret; others name none', async () => {
    const entries: AccessEntry[] = []
    const app = createApp({
      store: openMemoryStore(),
      apiKeys: [SERVICE_KEY],
      accessLog: (entry) => entries.push(entry),
      report: () => {},
      passwords: cheapPasswords,
    })
    const send = async (path: string, body?: unknown, headers: Record<string, string> = {}) => {
      const init = { method: body === undefined ? 'GET' : 'POST', headers: { ...json, ...headers } }
      const response = await app.handle(
        new Request(`http://localhost${path}`, body === undefined ? init : { ...init, body: JSON.stringify(body) }),
      )
      const answer = await response.json().catch(() => undefined)
      for (let i = 0; i < 100 && entries.length === 0; i++) await Bun.sleep(1)
      return { answer, entry: entries.shift() }
    }
    const ana = { name: 'Ana', email: 'ana@rock-legends.com', password: 'long enough' }
    expect((await send('/api/v1/artists', { name: 'Moris' }, { 'x-api-key': SERVICE_KEY })).entry).toMatchObject({
      status: 201,
      caller: 'service',
    })
    expect((await send('/api/v1/user/signup', ana)).entry?.caller).toBeUndefined()
    const { answer } = await send('/api/v1/user/login', { email: ana.email, password: ana.password })
    const { token, user } = answer as { token: string; user: { id: number } }
    const me = await send('/api/v1/user/me', undefined, { authorization: `Bearer ${token}` })
    expect(me.entry?.caller).toMatch(new RegExp(`^user:${user.id}/token:\\d+$`))
    const wrong = await send('/api/v1/user/me', undefined, { authorization: 'Bearer rl_tok_wrong' })
    expect(wrong.entry).toMatchObject({ status: 401 })
    expect(wrong.entry?.caller).toBeUndefined()
    for (const entry of [me.entry, wrong.entry]) expect(JSON.stringify(entry)).not.toContain('rl_tok_')
  })

  test("each line has the size of the body as sent: compressed, serialised by Elysia, a problem's, none", async () => {
    const { send } = loggedApp()
    const json = { 'content-type': 'application/json', 'x-api-key': SERVICE_KEY }
    const created = await send('/api/v1/artists', {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ name: 'Fito Páez', description: 'Rosario. '.repeat(200) }),
    })
    expect(created.response.status).toBe(201)
    const answers = [
      created,
      await send('/api/v1/artists/1'),
      await send('/api/v1/artists?limit=100', { headers: { 'accept-encoding': 'gzip' } }),
      await send('/api/v1/artists?limit=100'),
      await send('/api/v1/artists/999'),
      await send('/openapi.json', { headers: { 'accept-encoding': 'br' } }),
      await send('/', { headers: { 'accept-encoding': 'zstd' } }),
    ]
    expect(answers[2]?.response.headers.get('content-encoding')).toBe('gzip')
    for (const { response, size, entry } of answers) {
      expect(size).toBeGreaterThan(0)
      expect({ status: response.status, path: entry?.path, bytes: entry?.bytes }).toEqual({
        status: response.status,
        path: entry?.path,
        bytes: size,
      })
    }
    // A HEAD answer and a 304 send no body.
    expect((await send('/api/v1/artists/1', { method: 'HEAD' })).entry?.bytes).toBe(0)
    const etag = answers[1]?.response.headers.get('etag') as string
    const unchanged = await send('/api/v1/artists/1', { headers: { 'if-none-match': etag } })
    expect({ status: unchanged.response.status, bytes: unchanged.entry?.bytes }).toEqual({ status: 304, bytes: 0 })
  })

  test('a user agent is kept to 256 characters, and is left out when none was sent', async () => {
    const { send } = loggedApp()
    const long = await send('/api/v1/artists', { headers: { 'user-agent': 'x'.repeat(10_000) } })
    expect(long.entry?.userAgent).toBe('x'.repeat(256))
    expect((await send('/api/v1/artists')).entry?.userAgent).toBeUndefined()
    expect(JSON.parse(jsonAccess({ ...entry, userAgent: undefined }))).not.toHaveProperty('userAgent')
    expect(JSON.parse(jsonAccess({ ...entry, caller: 'user:3/key:7' }))).toMatchObject({ caller: 'user:3/key:7' })
    expect(JSON.parse(jsonAccess(entry))).not.toHaveProperty('caller')
    expect(prettyAccess({ ...entry, caller: 'service' })).toBe(
      'GET /api/v1/artists/1 200 487 B 0.3 ms ::1 "node" service id-1',
    )
  })

  test('JSON lines are JSON objects with the fields of the entry', () => {
    const line = JSON.parse(jsonAccess({ ...entry, path: '/a?q="x"\\', durationMs: 1.23456 }))
    expect(line).toMatchObject({ level: 'info', message: 'request', ...entry, path: '/a?q="x"\\', durationMs: 1.235 })
    expect(Date.parse(line.time)).toBeNumber()
  })
})

describe('security headers', () => {
  const expectSecure = (response: Response) => {
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) expect(response.headers.get(name)).toBe(value)
  }

  test.each([
    ['a record', '/api/v1/artists'],
    ['a problem', '/api/v1/artists/9'],
    ['an unknown route', '/nope'],
    ['the OpenAPI document', '/openapi.json'],
    ['the health check', '/healthz'],
  ])('on %s, with or without an access log', async (_, path) => {
    for (const accessLog of [undefined, () => {}]) {
      const app = createApp({ store: openMemoryStore(), accessLog, report: () => {} })
      expectSecure(await app.handle(new Request(`http://localhost${path}`)))
    }
  })

  test('on a CORS preflight and a CORS answer, beside the CORS headers', async () => {
    const app = createApp({ store: openMemoryStore(), cors: ['https://demo.example'], report: () => {} })
    const origin = { origin: 'https://demo.example' }
    const preflight = await app.handle(
      new Request('http://localhost/api/v1/artists', {
        method: 'OPTIONS',
        headers: { ...origin, 'access-control-request-method': 'POST' },
      }),
    )
    expect(preflight.status).toBe(204)
    expectSecure(preflight)
    const answer = await app.handle(new Request('http://localhost/api/v1/artists', { headers: origin }))
    expect(answer.headers.get('access-control-allow-origin')).toBe('https://demo.example')
    expectSecure(answer)
  })

  test("a route's own value wins and is not repeated", async () => {
    const store = openMemoryStore()
    await store.load([{ name: 'Moris', albums: [] }])
    const app = createApp({ store, report: () => {} })
    const cover = await app.handle(new Request('http://localhost/covers/artists/1.svg'))
    expect(cover.headers.get('x-content-type-options')).toBe('nosniff')
    expect(cover.headers.get('content-security-policy')).toBe("default-src 'none'")
  })
})
