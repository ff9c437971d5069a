import { describe, expect, test } from 'bun:test'
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
