import { describe, expect, test } from 'bun:test'
import zlib from 'node:zlib'
import { createApp } from '../../src/app.ts'
import { SCALAR_VERSION } from '../../src/docs/scalar.ts'
import { type Coding, MIN_COMPRESSED_BYTES, negotiate, PER_REQUEST } from '../../src/http/compression.ts'
import { EMBEDDED_CODINGS } from '../../src/http/embedded-assets.ts'
import { paginator } from '../../src/http/pagination.ts'
import { pageAssets } from '../../src/web/assets.ts'
import { addArtists, testApp } from '../helpers.ts'
import { testStore } from '../support/backends.ts'

const BROWSER = 'gzip, deflate, br, zstd'

/** `body` decompressed from `coding` (none: as it is). */
function decoded(body: Uint8Array<ArrayBuffer>, coding: string | null): string {
  const bytes =
    coding === 'zstd'
      ? Bun.zstdDecompressSync(body)
      : coding === 'br'
        ? zlib.brotliDecompressSync(body)
        : coding === 'gzip'
          ? Bun.gunzipSync(body)
          : body
  return new TextDecoder().decode(bytes)
}

/** GETs `path` in-process with `accept-encoding` (none when undefined), the body left as it came. */
async function get(app: ReturnType<typeof testApp>['app'], path: string, acceptEncoding?: string, host = 'localhost') {
  const headers: Record<string, string> = acceptEncoding === undefined ? {} : { 'accept-encoding': acceptEncoding }
  const response = await app.handle(new Request(`http://${host}${path}`, { headers }))
  const body = new Uint8Array(await response.arrayBuffer())
  const coding = response.headers.get('content-encoding')
  return {
    status: response.status,
    headers: response.headers,
    coding,
    size: body.byteLength,
    text: decoded(body, coding),
  }
}

describe('Accept-Encoding: which coding a client gets', () => {
  const cases: [string | null, readonly Coding[], Coding | undefined][] = [
    [null, PER_REQUEST, undefined],
    ['', PER_REQUEST, undefined],
    ['identity', PER_REQUEST, undefined],
    // A browser names them all: the server's order decides.
    [BROWSER, PER_REQUEST, 'zstd'],
    [BROWSER, EMBEDDED_CODINGS, 'br'],
    ['gzip', PER_REQUEST, 'gzip'],
    ['GZip', PER_REQUEST, 'gzip'],
    ['x-gzip', PER_REQUEST, 'gzip'],
    ['deflate', PER_REQUEST, undefined],
    // Weights outrank the server's order; 0 refuses.
    ['zstd;q=0.5, gzip', PER_REQUEST, 'gzip'],
    ['br;q=1.0, zstd;q=0.999', PER_REQUEST, 'br'],
    ['zstd;q=0, br;q=0, gzip;q=0', PER_REQUEST, undefined],
    ['gzip;level=9;q=0.2, br;q=0.1', PER_REQUEST, 'gzip'],
    ['gzip ; q = 0.5', PER_REQUEST, 'gzip'],
    // `*` stands for every coding not named.
    ['*', PER_REQUEST, 'zstd'],
    ['*;q=0.5, zstd;q=0, br;q=0.1', PER_REQUEST, 'gzip'],
    ['zstd', EMBEDDED_CODINGS, undefined],
    // A malformed weight counts for nothing; so does a coding named twice after its first.
    ['zstd;q=2, gzip', PER_REQUEST, 'gzip'],
    ['zstd;q=abc', PER_REQUEST, undefined],
    ['br;q=0, br;q=1', PER_REQUEST, undefined],
    [',,, ;q=1, gzip', PER_REQUEST, 'gzip'],
  ]
  for (const [header, offered, expected] of cases)
    test(`${JSON.stringify(header)} offered ${offered.join(', ')} → ${expected ?? 'as it is'}`, () => {
      expect(negotiate(header, offered)).toBe(expected)
    })

  test('a header of thousands of members is read no further than its first 16', () => {
    const header = `${Array.from({ length: 5000 }, (_, i) => `x-${i}`).join(', ')}, gzip`
    expect(negotiate(header, PER_REQUEST)).toBeUndefined()
    expect(negotiate(`gzip, ${header}`, PER_REQUEST)).toBe('gzip')
  })
})

describe('a list page of 100 artists', () => {
  const PAGE = '/api/v1/artists?limit=100'

  for (const coding of PER_REQUEST)
    test(`goes in ${coding} to a client that accepts it, the same JSON with the same tag`, async () => {
      const { app, store } = testApp()
      await addArtists(store, 120)
      const plain = await get(app, PAGE)
      const compressed = await get(app, PAGE, coding)
      expect(compressed.status).toBe(200)
      expect(compressed.coding).toBe(coding)
      expect(compressed.headers.get('vary')).toBe('Accept-Encoding')
      expect(compressed.headers.get('content-type')).toBe(plain.headers.get('content-type'))
      expect(compressed.text).toBe(plain.text)
      expect(compressed.size).toBeLessThan(plain.size / 2)
      expect(compressed.headers.get('etag')).toBe(plain.headers.get('etag'))
    })

  test('goes as it is without Accept-Encoding, saying that it varies with it', async () => {
    const { app, store } = testApp()
    await addArtists(store, 120)
    const plain = await get(app, PAGE)
    expect(plain.coding).toBeNull()
    expect(plain.headers.get('vary')).toBe('Accept-Encoding')
    expect(JSON.parse(plain.text).data).toHaveLength(100)
  })

  test('is compressed once per coding: the cached page keeps its compressed forms, counted in its budget', async () => {
    const paginate = paginator()
    const items = Array.from({ length: 100 }, (_, i) => ({ id: i + 1, name: `Artist ${i + 1}`, image: null }))
    const answer = (acceptEncoding: string) =>
      paginate('/api/v1/artists', { limit: 100, offset: 0 }, { items, total: 100 }, '', ask(acceptEncoding))
    const ask = (acceptEncoding: string) =>
      new Request('http://localhost/api/v1/artists?limit=100', { headers: { 'accept-encoding': acceptEncoding } })
    answer('identity')
    const plain = paginate.cache.bytes
    const first = answer('br')
    const withBrotli = paginate.cache.bytes
    const size = (await first.bytes()).byteLength
    // The page's compressed form, and nothing else, was added to what the cache counts.
    expect(withBrotli - plain).toBe(size)
    answer('br')
    expect(paginate.cache.bytes).toBe(withBrotli)
    answer('gzip')
    expect(paginate.cache.bytes).toBeGreaterThan(withBrotli)
    expect(paginate.cache.size).toBe(1)
  })

  test('a page that fits the cache only as it is stays cached; its compressed form is sent, not kept', async () => {
    const items = Array.from({ length: 100 }, (_, i) => ({ id: i + 1, name: `Artist ${i + 1}`, image: null }))
    const ask = (acceptEncoding: string) =>
      new Request('http://localhost/api/v1/artists?limit=100', { headers: { 'accept-encoding': acceptEncoding } })
    const measure = paginator()
    measure('/api/v1/artists', { limit: 100, offset: 0 }, { items, total: 100 }, '', ask('identity'))
    // A cache whose largest entry is the page as it is, and not a byte more.
    const paginate = paginator(measure.cache.bytes * 8)
    const answer = (acceptEncoding: string) =>
      paginate('/api/v1/artists', { limit: 100, offset: 0 }, { items, total: 100 }, '', ask(acceptEncoding))
    answer('identity')
    const held = paginate.cache.bytes
    expect(paginate.cache.size).toBe(1)
    const compressed = answer('gzip')
    expect(compressed.headers.get('content-encoding')).toBe('gzip')
    const text = decoded(new Uint8Array(await compressed.arrayBuffer()), 'gzip')
    expect(JSON.parse(text).data).toHaveLength(100)
    expect({ size: paginate.cache.size, bytes: paginate.cache.bytes }).toEqual({ size: 1, bytes: held })
  })

  test('If-None-Match with its tag is 304, whatever the coding asked for', async () => {
    const { app, store } = testApp()
    await addArtists(store, 120)
    const etag = (await get(app, PAGE, 'gzip')).headers.get('etag') as string
    const response = await app.handle(
      new Request(`http://localhost${PAGE}`, { headers: { 'accept-encoding': 'zstd', 'if-none-match': etag } }),
    )
    expect(response.status).toBe(304)
    expect(response.headers.get('content-encoding')).toBeNull()
  })

  test('a page below 1 KiB goes as it is, with no Vary', async () => {
    const { app, store } = testApp()
    await addArtists(store, 2)
    const small = await get(app, '/api/v1/artists?limit=1', BROWSER)
    expect(small.size).toBeLessThan(MIN_COMPRESSED_BYTES)
    expect(small.coding).toBeNull()
    expect(small.headers.get('vary')).toBeNull()
  })
})

describe('with --cors', () => {
  test('a compressed answer varies with Origin as well as Accept-Encoding, so caches keep each apart', async () => {
    const store = testStore()
    await addArtists(store, 120)
    const app = createApp({ store, cors: ['https://demo.example'], report: () => {} })
    for (const acceptEncoding of ['gzip', 'identity']) {
      const response = await app.handle(
        new Request('http://localhost/api/v1/artists?limit=100', {
          headers: { origin: 'https://demo.example', 'accept-encoding': acceptEncoding },
        }),
      )
      const vary = (response.headers.get('vary') ?? '').split(',').map((name) => name.trim())
      expect({ acceptEncoding, vary: vary.sort() }).toEqual({ acceptEncoding, vary: ['Accept-Encoding', 'Origin'] })
      expect(response.headers.get('access-control-allow-origin')).toBe('https://demo.example')
    }
    const page = await app.handle(
      new Request('http://localhost/', { headers: { origin: 'https://demo.example', 'accept-encoding': 'br' } }),
    )
    expect(page.headers.get('content-encoding')).toBe('br')
    expect(page.headers.get('vary')).toBe('Accept-Encoding, Origin')
  })
})

describe('answers left alone', () => {
  test('one artist goes as it is: compressing it would cost more than it saves', async () => {
    const { app, store } = testApp()
    await addArtists(store, 1)
    const one = await get(app, '/api/v1/artists/1', BROWSER)
    expect(one.status).toBe(200)
    expect(one.coding).toBeNull()
    expect(one.headers.get('vary')).toBeNull()
    expect(JSON.parse(one.text).name).toBe('Artist 1')
  })

  test('a problem goes as it is', async () => {
    const { app } = testApp()
    const missing = await get(app, '/api/v1/artists/999', BROWSER)
    expect(missing.status).toBe(404)
    expect(missing.coding).toBeNull()
  })
})

describe('the OpenAPI document', () => {
  test('is compressed in each coding, naming the origin each request reached', async () => {
    const { app } = testApp()
    const plain = await get(app, '/openapi.json', undefined, 'api.example.com')
    expect(plain.headers.get('vary')).toBe('Accept-Encoding')
    for (const coding of PER_REQUEST) {
      for (const host of ['api.example.com', 'other.example.com:8080']) {
        const compressed = await get(app, '/openapi.json', coding, host)
        expect(compressed.coding).toBe(coding)
        expect(compressed.size).toBeLessThan(plain.size / 4)
        expect(JSON.parse(compressed.text).servers[0].url).toBe(`http://${host}`)
        if (host === 'api.example.com') expect(compressed.text).toBe(plain.text)
      }
    }
  })
})

describe('the pages and their files', () => {
  test('/ and an artist page are compressed, the same HTML', async () => {
    const { app, store } = testApp()
    await addArtists(store, 30)
    for (const path of ['/', '/artists/1']) {
      const plain = await get(app, path)
      const compressed = await get(app, path, 'br')
      expect(compressed.coding).toBe('br')
      expect(compressed.headers.get('content-type')).toBe('text/html; charset=utf-8')
      expect(compressed.headers.get('content-security-policy')).toBe(plain.headers.get('content-security-policy'))
      expect(compressed.text).toBe(plain.text)
    }
  })

  test('a missing artist page keeps its 404 when compressed', async () => {
    const { app } = testApp()
    const missing = await get(app, '/artists/999', 'gzip')
    expect(missing.status).toBe(404)
    expect(missing.text).toContain('Not found')
  })

  test('the stylesheet and scripts go in brotli or gzip, the same bytes, still cacheable for good', async () => {
    const { app } = testApp()
    for (const asset of Object.values(pageAssets()))
      for (const coding of EMBEDDED_CODINGS) {
        const compressed = await get(app, asset.path, `${coding}, zstd;q=0.5`)
        expect(compressed.coding).toBe(coding)
        expect(compressed.headers.get('cache-control')).toBe('public, max-age=31536000, immutable')
        expect(compressed.text).toBe((await get(app, asset.path)).text)
      }
  })

  test("/docs' bundle goes in brotli, and in gzip to a client without it; never in zstd", async () => {
    const { app } = testApp()
    const bundle = `/docs/assets/scalar-api-reference-${SCALAR_VERSION}.js`
    const plain = await get(app, bundle)
    const br = await get(app, bundle, BROWSER)
    expect(br.coding).toBe('br')
    expect(br.size).toBeLessThan(plain.size / 3)
    expect(br.text).toBe(plain.text)
    expect((await get(app, bundle, 'gzip')).coding).toBe('gzip')
    const zstd = await get(app, bundle, 'zstd')
    expect(zstd.coding).toBeNull()
    expect(zstd.headers.get('vary')).toBe('Accept-Encoding')
  })

  test('files below 1 KiB go as they are', async () => {
    const { app } = testApp()
    const init = await get(app, '/docs/assets/docs.js', BROWSER)
    expect(init.coding).toBeNull()
    expect(init.headers.get('vary')).toBeNull()
  })
})
