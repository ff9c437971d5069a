import { describe, expect, test } from 'bun:test'
import { createApp } from '../../src/app.ts'
import { openMemoryStore } from '../../src/store/document/memory.ts'

const appWith = (cors: string[]) => createApp({ store: openMemoryStore(), cors, report: () => {} })
const get = (origin: string) => new Request('http://localhost/api/v1/artists', { headers: { origin } })
const preflight = (origin: string) =>
  new Request('http://localhost/api/v1/artists', {
    method: 'OPTIONS',
    headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'x-api-key' },
  })

describe('CORS', () => {
  test('is closed unless configured', async () => {
    const response = await appWith([]).handle(get('https://elsewhere.example'))
    expect(response.status).toBe(200)
    expect(response.headers.get('access-control-allow-origin')).toBeNull()
  })

  test('allows a listed origin, on answers and on problems', async () => {
    const app = appWith(['https://demo.example'])
    const ok = await app.handle(get('https://demo.example'))
    expect(ok.headers.get('access-control-allow-origin')).toBe('https://demo.example')
    expect(ok.headers.get('vary')).toBe('Origin')
    const missing = await app.handle(
      new Request('http://localhost/api/v1/artists/9', { headers: { origin: 'https://demo.example' } }),
    )
    expect(missing.status).toBe(404)
    expect(missing.headers.get('access-control-allow-origin')).toBe('https://demo.example')
  })

  test('ignores an origin that is not listed', async () => {
    const response = await appWith(['https://demo.example']).handle(get('https://evil.example'))
    expect(response.headers.get('access-control-allow-origin')).toBeNull()
  })

  test('answers a preflight with the methods and headers a write needs', async () => {
    const response = await appWith(['*']).handle(preflight('https://any.example'))
    expect(response.status).toBe(204)
    expect(response.headers.get('access-control-allow-origin')).toBe('*')
    expect(response.headers.get('access-control-allow-methods')).toContain('POST')
    const allowed = response.headers.get('access-control-allow-headers')?.split(', ')
    // Every request header the server reads that a page may set, the namespace of --fixtures among them.
    for (const name of ['Authorization', 'Content-Type', 'X-API-Key', 'If-Match', 'If-None-Match', 'Last-Event-ID'])
      expect(allowed).toContain(name)
    expect(allowed).toContain('X-Request-Id')
    expect(allowed).toContain('Rock-Legends-Namespace')
    expect(allowed).toContain('Idempotency-Key')
    const exposed = response.headers.get('access-control-expose-headers')?.split(', ')
    expect(exposed).toContain('X-Request-Id')
    expect(exposed).toContain('Idempotent-Replayed')
  })

  test('a preflight, answered before routing, carries its request id like every answer; it gets no access line', async () => {
    const entries: unknown[] = []
    const app = createApp({
      store: openMemoryStore(),
      cors: ['*'],
      accessLog: (e) => entries.push(e),
      report: () => {},
    })
    const response = await app.handle(preflight('https://any.example'))
    expect(response.status).toBe(204)
    expect(response.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/)
    const echoed = new Request(preflight('https://any.example'), { headers: { 'x-request-id': 'proxy-7' } })
    echoed.headers.set('origin', 'https://any.example')
    echoed.headers.set('access-control-request-method', 'POST')
    expect((await app.handle(echoed)).headers.get('x-request-id')).toBe('proxy-7')
    await Bun.sleep(5)
    expect(entries).toEqual([])
  })
})
