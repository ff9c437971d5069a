import { Elysia, type InternalRoute, t } from 'elysia'
import { ByteCache } from '../cache/byte-cache.ts'
import { compress, encodedHeaders, negotiate, PER_REQUEST, VARY } from '../http/compression.ts'
import { assetResponse } from '../http/embedded-assets.ts'
import type { Clients } from '../http/proxies.ts'
import { sizedResponse } from '../http/sized-response.ts'
import { NotFoundError } from '../model/errors.ts'
import { docsAssets, docsPage } from './scalar.ts'

const hidden = { detail: { hide: true } }

const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8' }

/** What the compressed forms of the document may hold: about a hundred origins' worth. */
const COMPRESSED_BUDGET = 2 * 1024 * 1024

/**
 * The API's documentation: the OpenAPI 3.1 document at `/openapi.json`, and interactive documentation at `/docs`
 * whose assets are embedded in the executable, so nothing is fetched from elsewhere. `routes` lists every route of
 * the app; the document is built from them on its first request, once, and served as built from then on, with the
 * origin each request reached as its server (src/docs/document.ts, `withServer`): behind a proxy that `clients`
 * trusts, the scheme and host the client asked that proxy for.
 *
 * @example
 * app.use(docsRoutes(() => app.routes, clients))
 */
export function docsRoutes(routes: () => readonly InternalRoute[], clients: Clients) {
  // A promise, so that requests arriving together while it is built wait for the one build.
  let document: Promise<{ body: (origin: string) => Blob; originOf: (url: string) => string }> | undefined
  // The compressed forms of the document, by coding and origin: few in practice (one origin per name the server is
  // reached by), bounded by bytes since a request chooses its `Host`.
  const compressed = new ByteCache<Uint8Array>(COMPRESSED_BUDGET)
  return new Elysia({ name: 'docs' })
    .get(
      '/openapi.json',
      async ({ request, server }) => {
        // The generator is loaded with the first request for the document, not at start-up (bench/startup.ts).
        document ??= import('./document.ts').then(({ buildDocument, originOf, withServer }) => ({
          body: withServer(buildDocument(routes)),
          originOf,
        }))
        const { body, originOf } = await document
        const { proto, host } = clients.sender(server, request)
        const origin = originOf(proto || host ? reached(request.url, proto, host) : request.url)
        const coding = negotiate(request.headers.get('accept-encoding'), PER_REQUEST)
        if (!coding) return sizedResponse(body(origin), { headers: { ...JSON_HEADERS, ...VARY } })
        const key = `${coding} ${origin}`
        let bytes = compressed.get(key)
        if (!bytes) {
          bytes = compress(await body(origin).bytes(), coding)
          compressed.set(key, bytes, bytes.byteLength)
        }
        return sizedResponse(bytes, { headers: { ...JSON_HEADERS, ...encodedHeaders(coding) } })
      },
      hidden,
    )
    .get('/docs', docsPage, hidden)
    .get(
      '/docs/assets/:file',
      ({ params: { file }, request }) => {
        const asset = docsAssets.get(file)
        if (!asset) throw new NotFoundError(`There is no documentation asset ${file}.`)
        return assetResponse(request, asset)
      },
      { params: t.Object({ file: t.String() }), ...hidden },
    )
}

/** `url` with the scheme and host a client asked a trusted proxy for, where it named them. */
function reached(url: string, proto: string | undefined, host: string | undefined): string {
  const scheme = url.indexOf('://')
  if (scheme < 0) return url
  const path = url.indexOf('/', scheme + 3)
  const authority = path < 0 ? url.slice(scheme + 3) : url.slice(scheme + 3, path)
  return `${proto ?? url.slice(0, scheme)}://${host ?? authority}${path < 0 ? '/' : url.slice(path)}`
}
