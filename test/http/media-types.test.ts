import { describe, expect, test } from 'bun:test'
import { createApp } from '../../src/app.ts'
import { accepts, offeredBy } from '../../src/http/accept.ts'
import { openMemoryStore } from '../../src/store/document/memory.ts'
import { asService, testApp } from '../helpers.ts'

/** Sends `path` to `app` and answers its Content-Type. */
async function contentType(app: ReturnType<typeof testApp>['app'], path: string, init: RequestInit = {}) {
  const response = await app.handle(new Request(`http://localhost${path}`, init))
  await response.arrayBuffer()
  return { status: response.status, type: response.headers.get('content-type') }
}

describe('JSON media types', () => {
  test('every JSON answer and every problem says its type without a charset parameter (RFC 8259 defines none)', async () => {
    const { app } = testApp()
    const created = await contentType(app, '/api/v1/artists', {
      method: 'POST',
      headers: { ...asService, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Charly García' }),
    })
    expect(created).toEqual({ status: 201, type: 'application/json' })
    const json = [
      '/api/v1/artists',
      '/api/v1/artists?limit=1',
      '/api/v1/artists/1',
      '/api/v1/artists/1/albums',
      '/openapi.json',
      '/livez',
      '/healthz',
    ]
    for (const path of json)
      expect({ path, ...(await contentType(app, path)) }).toEqual({ path, status: 200, type: 'application/json' })
    const users = await contentType(app, '/__admin/users', { headers: asService })
    expect(users).toEqual({ status: 200, type: 'application/json' })
    for (const path of ['/api/v1/artists/9', '/api/v1/artists/x', '/nowhere'])
      expect((await contentType(app, path)).type).toBe('application/problem+json')
  })
})

describe('406 when Accept excludes every type a route sends', () => {
  test('parses Accept as RFC 9110 says: weights, q=0, type/*, */*, the most specific range deciding', () => {
    const json = ['application/json', 'application/problem+json']
    const cases: [string | null, boolean][] = [
      [null, true],
      ['', true],
      ['*/*', true],
      ['application/json', true],
      ['application/*', true],
      ['application/json; charset=utf-8', true],
      ['APPLICATION/JSON', true],
      ['application/problem+json', true],
      ['text/html, */*;q=0.1', true],
      ['text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8', true],
      ['application/xml', false],
      ['text/html', false],
      ['application/json;q=0, application/problem+json;q=0', false],
      ['*/*;q=0', false],
      ['application/*;q=0, */*', false],
      ['*/*, application/json;q=0, application/problem+json;q=0', false],
      ['application/json;q=0.001', true],
      ['application/json;q=2', false],
      ['application/json;q=abc', false],
    ]
    for (const [header, expected] of cases)
      expect({ header, ok: accepts(header, json) }).toEqual({ header, ok: expected })
  })

  test.each([
    ['/api/v1/artists/1', 'application/xml'],
    ['/api/v1/artists', 'text/html'],
    ['/api/v1/artists/1/albums', 'application/json;q=0'],
    ['/openapi.json', 'text/csv'],
    ['/covers/artists/1.svg', 'image/png'],
    ['/api/v1/events', 'application/json'],
  ])('%s with Accept: %s → 406 problem, sent as problem+json anyway', async (path, accept) => {
    const { app } = testApp()
    await app.handle(
      new Request('http://localhost/api/v1/artists', {
        method: 'POST',
        headers: { ...asService, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'Virus' }),
      }),
    )
    const response = await app.handle(new Request(`http://localhost${path}`, { headers: { accept } }))
    expect(response.status).toBe(406)
    expect(response.headers.get('content-type')).toBe('application/problem+json')
    expect(await response.json()).toMatchObject({ type: '/problems/not-acceptable', status: 406 })
  })

  test('a write is refused before anything is written', async () => {
    const { app, store } = testApp()
    const response = await app.handle(
      new Request('http://localhost/api/v1/artists', {
        method: 'POST',
        headers: { ...asService, 'content-type': 'application/json', accept: 'application/xml' },
        body: JSON.stringify({ name: 'Virus' }),
      }),
    )
    expect(response.status).toBe(406)
    expect((await store.artists.list({ limit: 10, offset: 0 })).total).toBe(0)
  })

  test('what each route sends is accepted: JSON, pages, covers, the stream; assets and problem pages take any', async () => {
    const { app } = testApp()
    await app.handle(
      new Request('http://localhost/api/v1/artists', {
        method: 'POST',
        headers: { ...asService, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'Virus' }),
      }),
    )
    const BROWSER = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8'
    const cases: [string, string][] = [
      ['/api/v1/artists/1', 'application/json'],
      ['/api/v1/artists/1', BROWSER],
      ['/', 'text/html'],
      ['/artists/1', 'text/html'],
      ['/covers/artists/1.svg', 'image/svg+xml'],
      ['/covers/artists/1.svg', 'image/*'],
      ['/problems/not-found', 'text/plain'],
      ['/favicon.svg', 'image/png'],
    ]
    for (const [path, accept] of cases) {
      const response = await app.handle(new Request(`http://localhost${path}`, { headers: { accept } }))
      await response.arrayBuffer()
      expect({ path, accept, status: response.status }).toEqual({ path, accept, status: 200 })
    }
    const controller = new AbortController()
    const stream = await app.handle(
      new Request('http://localhost/api/v1/events', {
        headers: { accept: 'text/event-stream' },
        signal: controller.signal,
      }),
    )
    expect(stream.status).toBe(200)
    controller.abort()
    await stream.body?.cancel().catch(() => {})
  })

  test('every route either says what it sends or takes any Accept on purpose', () => {
    const app = createApp({ store: openMemoryStore() })
    const open = app.routes.filter((route) => offeredBy(route.path, true) === undefined).map((route) => route.path)
    expect(open.sort()).toEqual([
      '/assets/:file',
      '/docs/assets/:file',
      '/favicon.ico',
      '/favicon.svg',
      '/problems/:kind',
    ])
  })
})
