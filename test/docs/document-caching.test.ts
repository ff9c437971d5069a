/**
 * `/openapi.json` as a cache sees it: a strong `ETag` of the bytes sent (the origin in `servers` and the coding
 * included), `Cache-Control: no-cache`, `If-None-Match` answered with 304, and `Vary` naming what the bytes depend on:
 * `Accept-Encoding`, and the forwarding headers when the server trusts a proxy to name the origin.
 */
import { afterAll, describe, expect, test } from 'bun:test'
import { createApp } from '../../src/app.ts'
import { type RunningServer, startServer } from '../../src/server.ts'
import { openMemoryStore } from '../../src/store/document/memory.ts'

const fresh = () => createApp({ store: openMemoryStore(), report: () => {} })

/** Asks `app` for the document with `headers` (and as `host`); its status, headers and bytes. */
async function ask(app: ReturnType<typeof fresh>, headers: Record<string, string> = {}, host = 'localhost') {
  const response = await app.handle(new Request(`http://${host}/openapi.json`, { headers }))
  return { status: response.status, headers: response.headers, bytes: new Uint8Array(await response.arrayBuffer()) }
}

const STRONG_TAG = /^"[A-Za-z0-9_-]{22}(-(zstd|br|gzip))?"$/

describe('the ETag of /openapi.json', () => {
  test('is strong, and equal on two apps that answered different requests first', async () => {
    const first = fresh()
    const second = fresh()
    await (await second.handle(new Request('http://localhost/api/v1/artists/1'))).text()
    await (await second.handle(new Request('http://localhost/api/v1/artists?limit=0'))).text()
    const [one, other] = [await ask(first), await ask(second)]
    expect(one.headers.get('etag')).toMatch(STRONG_TAG)
    expect(other.headers.get('etag')).toBe(one.headers.get('etag') as string)
    expect(other.bytes).toEqual(one.bytes)
  })

  test('differs with the origin named in `servers`, which is in the bytes', async () => {
    const app = fresh()
    const here = await ask(app, {}, 'api.example.com')
    const there = await ask(app, {}, 'other.example.com:8080')
    expect(new TextDecoder().decode(there.bytes)).toContain('"servers":[{"url":"http://other.example.com:8080"')
    expect(there.headers.get('etag')).not.toBe(here.headers.get('etag') as string)
    // And is the same again for the same origin.
    expect((await ask(app, {}, 'api.example.com')).headers.get('etag')).toBe(here.headers.get('etag') as string)
  })

  test('differs with each content coding, each a representation of its own', async () => {
    const app = fresh()
    const identity = (await ask(app)).headers.get('etag') as string
    const tags = new Set([identity])
    for (const coding of ['zstd', 'br', 'gzip']) {
      const answer = await ask(app, { 'accept-encoding': coding })
      expect(answer.headers.get('content-encoding')).toBe(coding)
      expect(answer.headers.get('etag')).toBe(`${identity.slice(0, -1)}-${coding}"`)
      tags.add(answer.headers.get('etag') as string)
    }
    expect(tags.size).toBe(4)
  })
})

describe('revalidating /openapi.json', () => {
  test('If-Match naming another version is 412 with the current ETag; the current one or * is the document', async () => {
    const app = fresh()
    const etag = (await ask(app)).headers.get('etag') as string
    const refused = await ask(app, { 'if-match': '"an-older-document"' })
    expect(refused.status).toBe(412)
    expect(refused.headers.get('etag')).toBe(etag)
    for (const ifMatch of [etag, '*']) expect((await ask(app, { 'if-match': ifMatch })).status).toBe(200)
  })

  test('200 says caches must revalidate, and what it varies on', async () => {
    const answer = await ask(fresh())
    expect(answer.status).toBe(200)
    expect(answer.headers.get('cache-control')).toBe('no-cache')
    expect(answer.headers.get('vary')).toBe('Accept-Encoding')
  })

  test.each([
    ['its own tag', (tag: string) => tag],
    ['its tag among others', (tag: string) => `"stale", ${tag}`],
    ['its tag, weak', (tag: string) => `W/${tag}`],
    ['*', () => '*'],
  ])('If-None-Match with %s: 304, no body, the headers of the 200', async (_, condition) => {
    const app = fresh()
    for (const coding of [undefined, 'gzip']) {
      const headers: Record<string, string> = coding ? { 'accept-encoding': coding } : {}
      const tag = (await ask(app, headers)).headers.get('etag') as string
      const again = await ask(app, { ...headers, 'if-none-match': condition(tag) })
      expect(again.status).toBe(304)
      expect(again.bytes.byteLength).toBe(0)
      expect(again.headers.get('etag')).toBe(tag)
      expect(again.headers.get('cache-control')).toBe('no-cache')
      expect(again.headers.get('vary')).toBe('Accept-Encoding')
      expect(again.headers.get('x-content-type-options')).toBe('nosniff')
    }
  })

  test.each([
    ['a stale tag', () => '"q3ZCr0YdUuq1pW4pVfDgxw"'],
    [
      'the tag of another origin',
      async (app: ReturnType<typeof fresh>) => (await ask(app, {}, 'other.example.com')).headers.get('etag') as string,
    ],
    [
      'the tag of the gzip bytes, asked without gzip',
      async (app: ReturnType<typeof fresh>) =>
        (await ask(app, { 'accept-encoding': 'gzip' })).headers.get('etag') as string,
    ],
  ])('If-None-Match with %s: 200 and the document', async (_, condition) => {
    const app = fresh()
    const expected = await ask(app)
    const answer = await ask(app, { 'if-none-match': await condition(app) })
    expect(answer.status).toBe(200)
    expect(answer.bytes).toEqual(expected.bytes)
  })
})

describe('/openapi.json behind a proxy the server trusts', () => {
  let server: RunningServer
  afterAll(() => server?.stop())

  test('names the forwarded origin, and varies on the forwarding headers too', async () => {
    server = await startServer({ port: 0, data: ':memory:', log: 'off', trustProxy: ['loopback'] })
    const get = (headers: Record<string, string>) => fetch(`${server.url}/openapi.json`, { headers })
    const proxied = await get({ 'x-forwarded-proto': 'https', 'x-forwarded-host': 'api.example.com' })
    const direct = await get({})
    expect(((await proxied.json()) as { servers: { url: string }[] }).servers[0]?.url).toBe('https://api.example.com')
    expect(((await direct.json()) as { servers: { url: string }[] }).servers[0]?.url).toBe(server.url)
    for (const answer of [proxied, direct])
      expect(answer.headers.get('vary')).toBe('Accept-Encoding, X-Forwarded-Proto, X-Forwarded-Host')
    expect(proxied.headers.get('etag')).not.toBe(direct.headers.get('etag') as string)
  })
})
