/**
 * Compressed answers (RFC 9110, 8.4 and 12.5.3): a client that names `zstd`, `br` or `gzip` in `Accept-Encoding`
 * gets large answers in one of them, with `Vary: Accept-Encoding` so that caches keep one copy per coding. Answers
 * made per request (list pages, pages, the OpenAPI document) are compressed at quick levels when they are made; the
 * files embedded in the executable were compressed once, at the best levels, when it was built
 * (src/http/embedded-assets.ts).
 */
import zlib from 'node:zlib'
import { gzip, hasZstd, zstd } from '#runtime'
import { sizedResponse } from './sized-response.ts'
import { weightOf } from './weight.ts'

/** A content coding this server answers in. */
export type Coding = 'zstd' | 'br' | 'gzip'

/**
 * Answers smaller than this are sent as they are: they fit in a packet or two either way, so compressing them costs
 * the server and the client more time than the bytes it saves (one artist is about 500 bytes).
 */
export const MIN_COMPRESSED_BYTES = 1024

/**
 * What answers made per request are offered in, best first when a client accepts several equally: zstd compresses
 * about as well as brotli's quick levels in a fraction of the time, gzip is what every client has.
 */
export const PER_REQUEST: readonly Coding[] = hasZstd ? ['zstd', 'br', 'gzip'] : ['br', 'gzip']

/** At most this many members of `Accept-Encoding` are read: browsers send four or five. */
const MAX_MEMBERS = 16

/**
 * The coding of `offered` that the `Accept-Encoding` value `header` (null when absent) prefers: the highest weight,
 * ties going to the earlier in `offered`; `*` weighs every coding the header does not name, and a member whose
 * weight is malformed counts for nothing. `undefined` when the header is absent or accepts none of them: then the
 * answer goes as it is (identity is always acceptable here, as the RFC allows unless the client refuses it too,
 * which no client does in practice).
 */
export function negotiate(header: string | null, offered: readonly Coding[]): Coding | undefined {
  if (header === null || header === '') return undefined
  const weights = new Map<string, number>()
  for (const member of header.split(',', MAX_MEMBERS)) {
    const [name = '', ...parameters] = member.split(';', 4)
    const coding = name.trim().toLowerCase()
    if (coding === '' || weights.has(coding)) continue
    const weight = weightOf(parameters)
    weights.set(coding, weight)
  }
  const any = weights.get('*') ?? 0
  let best: Coding | undefined
  let bestWeight = 0
  for (const coding of offered) {
    const weight = weights.get(coding) ?? (coding === 'gzip' ? weights.get('x-gzip') : undefined) ?? any
    if (weight > bestWeight) {
      best = coding
      bestWeight = weight
    }
  }
  return best
}

/** A level for each coding (gzip's from 0 to 9). */
type Levels = Readonly<{ zstd: number; br: number; gzip: number }>

/**
 * The levels of answers made per request: ratios near the best, at about 2 to 3 µs per kilobyte for zstd and 10 for
 * brotli (bench/compression.ts).
 */
const QUICK: Levels = { zstd: 3, br: 4, gzip: 6 }

/** The best levels, for a file compressed once and served many times: seconds for a large file. */
export const BEST: Levels = { zstd: 19, br: zlib.constants.BROTLI_MAX_QUALITY, gzip: 9 }

/** `body` compressed in `coding` at the level `levels` give it. */
function compressAt(body: Uint8Array<ArrayBuffer>, coding: Coding, levels: Levels): Uint8Array {
  // zstd is offered only where the runtime has it: it is never asked for elsewhere.
  if (coding === 'zstd') return zstd(body, levels.zstd) as Uint8Array
  if (coding === 'gzip') return gzip(body, levels.gzip)
  const { BROTLI_PARAM_QUALITY, BROTLI_PARAM_SIZE_HINT } = zlib.constants
  return zlib.brotliCompressSync(body, {
    params: { [BROTLI_PARAM_QUALITY]: levels.br, [BROTLI_PARAM_SIZE_HINT]: body.byteLength },
  })
}

/** `body` compressed in `coding` at a quick level, for an answer made per request. */
export const compress = (body: Uint8Array<ArrayBuffer>, coding: Coding) => compressAt(body, coding, QUICK)

/** `body` compressed in `coding` at the best level, once, for a file served many times (the build spends the time). */
export const compressBest = (body: Uint8Array<ArrayBuffer>, coding: Coding) => compressAt(body, coding, BEST)

/** The headers that say a body is in `coding`, and that the answer depends on `Accept-Encoding`. */
export const encodedHeaders = (coding: Coding) => ({ 'content-encoding': coding, vary: 'Accept-Encoding' })

/** The header of an answer that could have been compressed: caches must keep one copy per `Accept-Encoding`. */
export const VARY = { vary: 'Accept-Encoding' }

/**
 * An answer with `body`, compressed for `request` when it is large enough and the client accepts a coding; with
 * `headers` (and `status`) either way.
 *
 * @example
 * return compressedResponse(request, html, { 'content-type': 'text/html; charset=utf-8' })
 */
export function compressedResponse(
  request: Request,
  body: Uint8Array<ArrayBuffer> | string,
  headers: Record<string, string>,
  status = 200,
): Response {
  const bytes = typeof body === 'string' ? new TextEncoder().encode(body) : body
  if (bytes.byteLength < MIN_COMPRESSED_BYTES) return sizedResponse(bytes, { status, headers })
  const coding = negotiate(request.headers.get('accept-encoding'), PER_REQUEST)
  if (!coding) return sizedResponse(bytes, { status, headers: { ...headers, ...VARY } })
  return sizedResponse(compress(bytes, coding), { status, headers: { ...headers, ...encodedHeaders(coding) } })
}

/**
 * `response` compressed for `request` as {@link compressedResponse} would make it: for answers whose body is made by
 * code that does not see the request (the pages). Its body is read, so only for bodies of a bounded size.
 */
export async function compressAnswer(request: Request, response: Response): Promise<Response> {
  if (!response.body || response.headers.has('content-encoding')) return response
  const headers = Object.fromEntries(response.headers)
  return compressedResponse(request, new Uint8Array(await response.arrayBuffer()), headers, response.status)
}
