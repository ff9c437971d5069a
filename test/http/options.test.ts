import { describe, expect, test } from 'bun:test'
import { createApp } from '../../src/app.ts'
import { openMemoryStore } from '../../src/store/document/memory.ts'

const appWith = (cors: string[] = []) => createApp({ store: openMemoryStore(), cors, report: () => {} })
const options = (path: string, headers: Record<string, string> = {}) =>
  new Request(`http://localhost${path}`, { method: 'OPTIONS', headers })

describe('OPTIONS', () => {
  test.each([
    ['/api/v1/artists', 'GET, HEAD, OPTIONS, POST'],
    ['/api/v1/artists/1', 'DELETE, GET, HEAD, OPTIONS, PATCH, PUT'],
    ['/api/v1/artists/1/albums', 'GET, HEAD, OPTIONS, POST'],
    ['/api/v1/artists/1/albums/2', 'DELETE, GET, HEAD, OPTIONS, PATCH, PUT'],
    ['/api/v1/events', 'GET, HEAD, OPTIONS'],
    ['/api/v1/user/login', 'OPTIONS, POST'],
    ['/openapi.json', 'GET, HEAD, OPTIONS'],
    ['/covers/artists/1.svg', 'GET, HEAD, OPTIONS'],
    ['/healthz', 'GET, HEAD, OPTIONS'],
  ])('%s → 204 with Allow: %s, without CORS', async (path, allow) => {
    const response = await appWith().handle(options(path))
    expect(response.status).toBe(204)
    expect(response.headers.get('allow')).toBe(allow)
    expect(response.headers.get('x-content-type-options')).toBe('nosniff')
    expect(await response.text()).toBe('')
  })

  test('an unknown path is still 404', async () => {
    const response = await appWith().handle(options('/api/v1/nowhere'))
    expect(response.status).toBe(404)
    expect(response.headers.get('allow')).toBeNull()
  })

  test('405 lists OPTIONS in Allow too', async () => {
    const response = await appWith().handle(new Request('http://localhost/api/v1/artists', { method: 'DELETE' }))
    expect(response.status).toBe(405)
    expect(response.headers.get('allow')).toBe('GET, HEAD, OPTIONS, POST')
  })

  test('with CORS on, a preflight stays a preflight and any other OPTIONS gets Allow', async () => {
    const app = appWith(['https://demo.example'])
    const origin = { origin: 'https://demo.example' }
    const preflight = await app.handle(
      options('/api/v1/artists', { ...origin, 'access-control-request-method': 'POST' }),
    )
    expect(preflight.status).toBe(204)
    expect(preflight.headers.get('access-control-allow-methods')).toBe('GET, HEAD, POST, PUT, PATCH, DELETE')
    expect(preflight.headers.get('allow')).toBeNull()
    const plain = await app.handle(options('/api/v1/artists', origin))
    expect(plain.status).toBe(204)
    expect(plain.headers.get('allow')).toBe('GET, HEAD, OPTIONS, POST')
    expect(plain.headers.get('access-control-allow-origin')).toBe('https://demo.example')
    const sameOrigin = await app.handle(options('/api/v1/artists/1'))
    expect(sameOrigin.headers.get('allow')).toBe('DELETE, GET, HEAD, OPTIONS, PATCH, PUT')
  })
})
