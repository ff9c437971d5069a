import { describe, expect, test } from 'bun:test'
import { createApp } from '../../src/app.ts'
import { MAX_BODY_BYTES } from '../../src/http/body.ts'
import { problemTypes } from '../../src/http/problem-types.ts'
import { openMemoryStore } from '../../src/store/document/memory.ts'
import { type Store, StoreUnavailableError } from '../../src/store/store.ts'
import { asService, testApp } from '../helpers.ts'

const json = { ...asService, 'content-type': 'application/json' }

describe('problem details for every error', () => {
  test.each([
    ['an unknown route', 'GET', '/nowhere', {}, undefined, 404],
    ['an unknown API route', 'GET', '/api/v1/albums', {}, undefined, 404],
    ['a body that is not JSON', 'POST', '/api/v1/artists', { ...asService, 'content-type': 'text/plain' }, 'hi', 415],
    [
      'a form body',
      'POST',
      '/api/v1/artists',
      { ...asService, 'content-type': 'application/x-www-form-urlencoded' },
      'name=A',
      415,
    ],
    ['malformed JSON', 'POST', '/api/v1/artists', json, '{"name":', 400],
    ['an empty JSON body', 'POST', '/api/v1/artists', json, '', 400],
    ['a JSON array', 'POST', '/api/v1/artists', json, '[{"name":"A"}]', 400],
    ['a JSON string', 'POST', '/api/v1/artists', json, '"A"', 400],
    ['JSON null', 'POST', '/api/v1/artists', json, 'null', 400],
    ['a body of 1 MiB + 1 byte', 'POST', '/api/v1/artists', json, `"${'x'.repeat(MAX_BODY_BYTES - 1)}"`, 413],
  ])('%s → %d', async (_, method, path, headers, body, status) => {
    const { call } = testApp()
    const response = await call(path, { method, headers, body })
    expect(response.status).toBe(status)
    expect(response.headers.get('content-type')).toBe('application/problem+json')
    expect(response.json).toMatchObject({
      status,
      type: expect.stringMatching(/^\/problems\//),
      title: expect.any(String),
    })
    expect(response.json.detail.length).toBeGreaterThan(10)
  })

  test('a body without a Content-Type is refused with 415', async () => {
    const { app } = testApp()
    const response = await app.handle(
      new Request('http://localhost/api/v1/artists', {
        method: 'POST',
        headers: asService,
        body: new TextEncoder().encode('{"name":"A"}'),
      }),
    )
    expect(response.status).toBe(415)
  })

  test('a declared Content-Length over 1 MiB is refused before the body is read', async () => {
    const { app } = testApp()
    let pulled = 0
    const body = new ReadableStream({
      pull(controller) {
        pulled++
        controller.enqueue(new Uint8Array(64 * 1024))
        if (pulled > 100) controller.close()
      },
    })
    const response = await app.handle(
      new Request('http://localhost/api/v1/artists', {
        method: 'POST',
        headers: { ...json, 'content-length': String(MAX_BODY_BYTES + 1) },
        body,
      }),
    )
    expect(response.status).toBe(413)
    expect(pulled).toBeLessThan(3)
  })

  test('a streamed body is cut off once it passes 1 MiB', async () => {
    const { app } = testApp()
    let pulled = 0
    const body = new ReadableStream({
      pull(controller) {
        pulled++
        controller.enqueue(new TextEncoder().encode(' '.repeat(64 * 1024)))
      },
    })
    const response = await app.handle(
      new Request('http://localhost/api/v1/artists', { method: 'POST', headers: json, body }),
    )
    expect(response.status).toBe(413)
    expect(pulled).toBeLessThan(20)
  })

  test('a __proto__ key anywhere is refused', async () => {
    const { call } = testApp()
    const response = await call('/api/v1/artists', {
      method: 'POST',
      headers: json,
      body: '{"name":"A","description":null,"__proto__":{"isAdmin":true}}',
    })
    expect(response.status).toBe(400)
    expect(response.json.errors).toEqual([{ pointer: '/__proto__', detail: 'is not a known property' }])
  })

  test.each([
    ['POST', '/api/v1/artists/1', 'DELETE, GET, HEAD, OPTIONS, PATCH, PUT'],
    ['POST', '/api/v1/artists/1/albums/1', 'DELETE, GET, HEAD, OPTIONS, PATCH, PUT'],
    ['DELETE', '/api/v1/artists', 'GET, HEAD, OPTIONS, POST'],
    ['PUT', '/api/v1/artists/1/albums', 'GET, HEAD, OPTIONS, POST'],
    ['POST', '/healthz', 'GET, HEAD, OPTIONS'],
  ])('%s %s → 405 with Allow: %s', async (method, path, allow) => {
    const { call } = testApp()
    const response = await call(path, { method, headers: asService })
    expect(response.status).toBe(405)
    expect(response.headers.get('allow')).toBe(allow)
    expect(response.json).toMatchObject({ type: '/problems/method-not-allowed', status: 405 })
  })

  test('HEAD works wherever GET does, as Allow promises', async () => {
    const { app } = testApp()
    const response = await app.handle(new Request('http://localhost/api/v1/artists', { method: 'HEAD' }))
    expect(response.status).toBe(200)
  })

  test('an unexpected failure is a generic 500; the stack goes to the log only', async () => {
    const broken = openMemoryStore()
    const failing: Store = {
      ...broken,
      artists: {
        ...broken.artists,
        get: () => {
          throw new Error('disk on fire at /secret/path')
        },
      },
    }
    const reported: unknown[] = []
    const app = createApp({ store: failing, report: (_, error) => reported.push(error) })
    const response = await app.handle(new Request('http://localhost/api/v1/artists/1'))
    const text = await response.text()
    expect(response.status).toBe(500)
    expect(response.headers.get('content-type')).toBe('application/problem+json')
    expect(JSON.parse(text)).toMatchObject({ type: '/problems/internal-error', status: 500 })
    expect(text).not.toContain('disk on fire')
    expect(text).not.toContain('/secret/path')
    expect(reported).toHaveLength(1)
  })

  test('a write the store cannot make durable is a 503', async () => {
    const broken = openMemoryStore()
    const failing: Store = {
      ...broken,
      artists: {
        ...broken.artists,
        insert: () => Promise.reject(new StoreUnavailableError('ENOSPC: no space left on device')),
      },
    }
    const app = createApp({ store: failing, apiKeys: [asService['x-api-key']], report: () => {} })
    const response = await app.handle(
      new Request('http://localhost/api/v1/artists', { method: 'POST', headers: json, body: '{"name":"A"}' }),
    )
    expect(response.status).toBe(503)
    const body = (await response.json()) as { detail: string }
    expect(body).toMatchObject({ type: '/problems/store-unavailable', status: 503 })
    expect(body.detail).not.toContain('ENOSPC')
  })
})

describe('around the API', () => {
  test('GET /healthz', async () => {
    const { call } = testApp()
    expect(await call('/healthz')).toMatchObject({ status: 200, json: { status: 'ok' } })
  })

  test('every problem type URI answers with an explanation', async () => {
    const { call } = testApp()
    for (const [kind, { title }] of Object.entries(problemTypes)) {
      const response = await call(`/problems/${kind}`)
      expect(response.status).toBe(200)
      expect(response.text).toContain(title)
    }
  })

  test.each(['constructor', '__proto__', 'toString', 'hasOwnProperty', 'nope'])(
    'GET /problems/%s, not a problem type, is a 404 problem',
    async (kind) => {
      const { call } = testApp()
      const response = await call(`/problems/${kind}`)
      expect(response.status).toBe(404)
      expect(response.json).toMatchObject({ type: '/problems/not-found', detail: `There is no problem type ${kind}.` })
    },
  )

  test('GET /openapi.json is an OpenAPI 3.1 document of the API', async () => {
    const { call } = testApp()
    const { status, json: document } = await call('/openapi.json')
    expect(status).toBe(200)
    expect(document.openapi).toMatch(/^3\.1\./)
    expect(Object.keys(document.paths)).toContain('/api/v1/artists/{artistId}')
  })
})
