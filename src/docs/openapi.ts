import { Elysia, type InternalRoute, t } from 'elysia'
import { sha256 } from '#runtime'
import { ByteCache } from '../cache/byte-cache.ts'
import { compress, encodedHeaders, negotiate, PER_REQUEST } from '../http/compression.ts'
import { CACHE_CONTROL, conditionsWithoutTags, noneMatchHits, refuseUnmatched } from '../http/conditional.ts'
import { assetResponse } from '../http/embedded-assets.ts'
import type { Clients } from '../http/proxies.ts'
import { SECURITY_HEADERS } from '../http/security-headers.ts'
import { sizedResponse } from '../http/sized-response.ts'
import { NotFoundError } from '../model/errors.ts'
import { namedSchemas } from './components.ts'
import { type DeclaredRoute, declaredRoutes } from './declared.ts'
import { docsAssets, docsPage } from './scalar.ts'

const hidden = { detail: { hide: true } }

const JSON_HEADERS = { 'content-type': 'application/json' }

/** What the compressed forms of the document may hold: about a hundred origins' worth. */
const COMPRESSED_BUDGET = 2 * 1024 * 1024

/** What the tags of the document, one per origin, may hold: a thousand origins' worth. */
const TAGS_BUDGET = 128 * 1024

// The request headers the document depends on, for `Vary`. Its `servers` entry is the origin the request reached:
// the scheme and `Host` of its URL, which caches already key every answer by (the URL is the cache key), so `Host`
// needs no mention; but behind a proxy the server trusts (--trust-proxy), the origin comes from the proxy's
// `X-Forwarded-Proto` and `X-Forwarded-Host`, which are not part of the URL a cache between that proxy and this
// server sees: two clients reaching it by two names through one proxy must not get each other's document. Without
// --trust-proxy those headers are never read, and naming them would only split caches for nothing.
const VARY_DIRECT = 'Accept-Encoding'
const VARY_PROXIED = 'Accept-Encoding, X-Forwarded-Proto, X-Forwarded-Host'

/** The 132 first bits of SHA-256, in base64url, as the tags of records and pages. */
const digest = (bytes: Uint8Array) => sha256(bytes, 'base64url').slice(0, 22)

/** The document, built once, as each origin's bytes and the origin a request reached. */
interface Built {
  body: (origin: string) => Blob
  originOf: (url: string) => string
}

/**
 * The API's documentation: the OpenAPI 3.1 document at `/openapi.json`, and interactive documentation at `/docs`
 * whose assets are embedded in the executable, so nothing is fetched from elsewhere. The app passes itself to
 * `declared` once all its routes are registered, before it answers anything; the document is built from what was
 * kept then (src/docs/declared.ts), on its first request, and served as built from then on, with the origin each
 * request reached as its server (src/docs/document.ts, `withServer`): behind a proxy that `clients` trusts
 * (`trustsProxies`), the scheme and host the client asked that proxy for. So every replica of a build, started
 * alike, serves the same bytes to the same origin whatever it answered before, under the same strong `ETag`.
 *
 * @example
 * const documentation = apiDocumentation(clients, trustProxy.length > 0)
 * const app = documentation.declared(new Elysia().use(documentation.routes).use(artistRoutes(catalogue, guard)))
 */
export function apiDocumentation(clients: Clients, trustsProxies: boolean) {
  let declared: { routes: readonly DeclaredRoute[]; schemas: Record<string, unknown> } | undefined
  // A promise, so that requests arriving together while it is built wait for the one build.
  let document: Promise<Built> | undefined
  // The compressed forms of the document, by coding and origin, and the tag of each origin's bytes: few in practice
  // (one origin per name the server is reached by), bounded by bytes since a request chooses its `Host`.
  const compressed = new ByteCache<Uint8Array>(COMPRESSED_BUDGET)
  const tags = new ByteCache<string>(TAGS_BUDGET)
  const vary = trustsProxies ? VARY_PROXIED : VARY_DIRECT

  const build = (): Promise<Built> => {
    if (!declared)
      throw new Error('The documentation was not given the routes: pass the app to declared() once it has them all')
    const { routes, schemas } = declared
    // The generator is loaded with the first request for the document, not at start-up (bench/startup.ts).
    const building = import('./document.ts').then(({ buildDocument, originOf, withServer }) => ({
      body: withServer(buildDocument(routes, schemas)),
      originOf,
    }))
    // A build that failed is tried again by the next request rather than answering 500 for the life of the process.
    building.catch(() => {
      if (document === building) document = undefined
    })
    return building
  }

  /** The strong tag of the document as sent to `origin` in `coding`: equal bytes, equal tag, on every replica. */
  const tagOf = async ({ body }: Built, origin: string, coding: string | undefined) => {
    let hash = tags.get(origin)
    if (!hash) {
      hash = digest(await body(origin).bytes())
      tags.set(origin, hash, hash.length * 2)
    }
    // Each coding is a representation of its own (RFC 9110, 8.8.3): its bytes differ, so its strong tag does too.
    return coding ? `"${hash}-${coding}"` : `"${hash}"`
  }

  // The page and its assets have no ETag (the document has its own).
  const untagged = conditionsWithoutTags(() => routes.routes)
  const routes = new Elysia({ name: 'docs' })
    .get(
      '/openapi.json',
      async ({ request, server }) => {
        document ??= build()
        const built = await document
        const { proto, host } = clients.sender(server, request)
        const origin = built.originOf(proto || host ? reached(request.url, proto, host) : request.url)
        const coding = negotiate(request.headers.get('accept-encoding'), PER_REQUEST)
        const etag = await tagOf(built, origin, coding)
        const validators = { etag, 'cache-control': CACHE_CONTROL, vary }
        refuseUnmatched(request, etag)
        // Clients revalidate each time (`no-cache`): an unchanged document costs them a 304 without its bytes.
        if (noneMatchHits(request.headers.get('if-none-match'), etag))
          return sizedResponse(null, { status: 304, headers: { ...validators, ...SECURITY_HEADERS } })
        if (!coding) return sizedResponse(built.body(origin), { headers: { ...JSON_HEADERS, ...validators } })
        const key = `${coding} ${origin}`
        let bytes = compressed.get(key)
        if (!bytes) {
          bytes = compress(await built.body(origin).bytes(), coding)
          compressed.set(key, bytes, bytes.byteLength)
        }
        return sizedResponse(bytes, { headers: { ...JSON_HEADERS, ...encodedHeaders(coding), ...validators } })
      },
      hidden,
    )
    .get('/docs', docsPage, { ...hidden, beforeHandle: untagged })
    .get(
      '/docs/assets/:file',
      ({ params: { file }, request }) => {
        const asset = docsAssets.get(file)
        if (!asset) throw new NotFoundError(`There is no documentation asset ${file}.`)
        return assetResponse(request, asset)
      },
      { params: t.Object({ file: t.String() }), ...hidden, beforeHandle: untagged },
    )
  return {
    routes,
    /** Keeps the routes of `app` as declared, for the document, and returns it: call it before `app` answers. */
    declared<App extends { routes: readonly InternalRoute[] }>(app: App): App {
      declared = { routes: declaredRoutes(app.routes), schemas: namedSchemas }
      return app
    },
  }
}

/** `url` with the scheme and host a client asked a trusted proxy for, where it named them. */
function reached(url: string, proto: string | undefined, host: string | undefined): string {
  const scheme = url.indexOf('://')
  if (scheme < 0) return url
  const path = url.indexOf('/', scheme + 3)
  const authority = path < 0 ? url.slice(scheme + 3) : url.slice(scheme + 3, path)
  return `${proto ?? url.slice(0, scheme)}://${host ?? authority}${path < 0 ? '/' : url.slice(path)}`
}
