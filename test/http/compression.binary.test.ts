import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import zlib from 'node:zlib'
import { SCALAR_VERSION } from '../../src/docs/scalar.ts'
import { compress } from '../../src/http/compression.ts'
import { type RunningBinary, startBinary } from '../support/binary.ts'

// The executable as users run it: the files it embeds were compressed when it was built, at the best levels, and a
// list page over HTTP goes compressed to a client that asks.

const BUNDLE = readFileSync(
  join(import.meta.dir, '../../node_modules/@scalar/api-reference/dist/browser/standalone.js'),
)
const KEY = 'rl_compression_test_key_0123456789'

let server: RunningBinary

beforeAll(async () => {
  server = await startBinary(['--port', '0', '--data', ':memory:', '--api-key', KEY, '--log', 'off'])
}, 60_000)

afterAll(() => server?.stop())

/** GETs `path` with `accept-encoding`, its body as it came over the wire. */
async function raw(path: string, acceptEncoding: string) {
  const response = await fetch(`${server.url}${path}`, {
    headers: { 'accept-encoding': acceptEncoding },
    decompress: false,
  })
  return { response, body: new Uint8Array(await response.arrayBuffer()) }
}

describe('the executable', () => {
  test("serves /docs' bundle in brotli compressed at build time: smaller than the quick level makes it", async () => {
    const { response, body } = await raw(`/docs/assets/scalar-api-reference-${SCALAR_VERSION}.js`, 'gzip, br')
    expect(response.headers.get('content-encoding')).toBe('br')
    expect(response.headers.get('vary')).toBe('Accept-Encoding')
    expect(Buffer.from(zlib.brotliDecompressSync(body)).equals(BUNDLE)).toBe(true)
    // The quick level is what a run from the sources makes on the first request; the build's is brotli's best.
    expect(body.byteLength).toBeLessThan(compress(BUNDLE, 'br').byteLength * 0.9)
  })

  test('serves the bundle in gzip to a client without brotli', async () => {
    const { response, body } = await raw(`/docs/assets/scalar-api-reference-${SCALAR_VERSION}.js`, 'gzip')
    expect(response.headers.get('content-encoding')).toBe('gzip')
    expect(Buffer.from(Bun.gunzipSync(body)).equals(BUNDLE)).toBe(true)
    expect(body.byteLength).toBeLessThan(BUNDLE.byteLength / 3)
  })

  test('sends a list page of 100 artists compressed over HTTP, and one artist as it is', async () => {
    for (let i = 0; i < 100; i++) {
      const created = await fetch(`${server.url}/api/v1/artists`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': KEY },
        body: JSON.stringify({ name: `Artist ${i}`, description: 'A legend of Argentine rock. '.repeat(4) }),
      })
      expect(created.status).toBe(201)
    }
    const page = await raw('/api/v1/artists?limit=100', 'gzip, deflate, br, zstd')
    expect(page.response.headers.get('content-encoding')).toBe('zstd')
    const text = new TextDecoder().decode(Bun.zstdDecompressSync(page.body))
    expect(JSON.parse(text).data).toHaveLength(100)
    expect(page.body.byteLength).toBeLessThan(text.length / 4)
    const one = await raw('/api/v1/artists/1', 'gzip, deflate, br, zstd')
    expect(one.response.headers.get('content-encoding')).toBeNull()
    expect(JSON.parse(new TextDecoder().decode(one.body)).name).toBe('Artist 0')
  })
})
