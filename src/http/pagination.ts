import { Type } from '@sinclair/typebox'
import { type TSchema, t } from 'elysia'
import { ByteCache, CACHE_BUDGET_BYTES, estimateBytes } from '../cache/byte-cache.ts'
import type { Slice } from '../store/store.ts'
import {
  type Coding,
  compress,
  encodedHeaders,
  MIN_COMPRESSED_BYTES,
  negotiate,
  PER_REQUEST,
  VARY,
} from './compression.ts'
import { answerRead, weakTag } from './conditional.ts'
import { IntegerParam } from './integer-param.ts'
import { recordJson, taggedResponse } from './json.ts'
import { queryParameters } from './query-params.ts'

/** Items per page when the client does not say. */
export const DEFAULT_LIMIT = 10
/** The most items one page holds; larger limits are lowered to it. */
export const MAX_LIMIT = 100

/**
 * Query schema of every list: `limit` (1…, capped at 100, default 10) and `offset` (≥ 0, default 0); other parameters
 * are ignored (src/http/query-params.ts).
 */
export const PageQuery = queryParameters({
  limit: t.Optional(
    IntegerParam({
      minimum: 1,
      description: `How many items to return: at least 1, default ${DEFAULT_LIMIT}; values above ${MAX_LIMIT} are lowered to ${MAX_LIMIT}.`,
      // int64's maximum is the pattern's bound, but no page holds more than MAX_LIMIT: say what a client can use.
      error: `a whole number of at least 1, written in digits only (above ${MAX_LIMIT} counts as ${MAX_LIMIT})`,
    }),
  ),
  // Bounded by what a JSON number holds exactly, so that meta.offset always echoes the request.
  offset: t.Optional(
    IntegerParam({
      minimum: 0,
      maximum: BigInt(Number.MAX_SAFE_INTEGER),
      description: 'How many items to skip, default 0.',
    }),
  ),
})

/** The list wrapper of `items`: `{ data, meta: { limit, offset, total, next } }`. */
export const Paginated = <S extends TSchema>(items: S) =>
  t.Object({
    data: t.Array(items),
    meta: t.Object({
      limit: Type.Integer({ description: 'The limit applied.' }),
      offset: Type.Integer({ description: 'The offset applied.' }),
      total: Type.Integer({ description: 'How many items the whole list holds.' }),
      next: t.Union([t.String(), t.Null()], {
        description: 'The path and query of the next page, or null on the last page.',
      }),
    }),
  })

/** The page a (validated) query asks for, with defaults filled in and the limit lowered to at most 100. */
export const pageOf = (query: { limit?: string; offset?: string }) => ({
  // The pattern has bounded both: a limit's digits may exceed 2^53, but then the cap applies anyway.
  limit: query.limit === undefined ? DEFAULT_LIMIT : Math.min(Number(query.limit), MAX_LIMIT),
  offset: query.offset === undefined ? 0 : Number(query.offset),
})

/**
 * The search, order and filters a list was asked with, as its next page keeps them (`&q=…&sort=…&year_from=…`,
 * encoded, in the order given); empty for the whole list in the default order (`sort=id`), the common case.
 */
export function keptQuery({
  q,
  sort,
  ...filters
}: { q?: string; sort?: string } & Record<string, string | undefined>): string {
  let kept = `${q ? `&q=${encodeURIComponent(q)}` : ''}${sort && sort !== 'id' ? `&sort=${encodeURIComponent(sort)}` : ''}`
  for (const [name, value] of Object.entries(filters))
    if (value !== undefined) kept += `&${name}=${encodeURIComponent(value)}`
  return kept
}

/** The `meta` of a page of a list at `path`: the limit and offset applied, the total, and the next page's link. */
export function pageMeta(path: string, page: { limit: number; offset: number }, total: number, kept = '') {
  const nextOffset = page.offset + page.limit
  return {
    limit: page.limit,
    offset: page.offset,
    total,
    next: nextOffset < total ? `${path}?limit=${page.limit}&offset=${nextOffset}${kept}` : null,
  }
}

/**
 * The `Link` header of a page (RFC 8288): `first`, `prev` (not on the first page), `next` (while there is one, the
 * same as `meta.next`) and `last`, each a path and query on this server like `meta.next` (a relative reference,
 * resolved against the request's URL), keeping the limit and the `kept` parameters. `last` is the page whose offset
 * is the largest multiple of the limit below the total (offset 0 for an empty list); `prev` is `limit` items back,
 * never below 0.
 */
export function pageLinks(path: string, page: { limit: number; offset: number }, total: number, kept = ''): string {
  const { limit, offset } = page
  const at = (to: number, rel: string) => `<${path}?limit=${limit}&offset=${to}${kept}>; rel="${rel}"`
  const links = [at(0, 'first')]
  if (offset > 0) links.push(at(Math.max(0, offset - limit), 'prev'))
  if (offset + limit < total) links.push(at(offset + limit, 'next'))
  links.push(at(total === 0 ? 0 : Math.floor((total - 1) / limit) * limit, 'last'))
  return links.join(', ')
}

/**
 * `{ data, meta }` of a page of a list at `path` not kept by a {@link paginator} (the few lists that are small or
 * only for the operator), with its `Link` header set on `set`.
 */
export function pageAnswer<T>(
  set: { headers: Record<string, unknown> },
  path: string,
  page: { limit: number; offset: number },
  items: readonly T[],
  total: number,
  kept = '',
) {
  set.headers.link = pageLinks(path, page, total, kept)
  return { data: [...items], meta: pageMeta(path, page, total, kept) }
}

function pageText(path: string, page: { limit: number; offset: number }, slice: Slice<object>, kept: string): string {
  const meta = pageMeta(path, page, slice.total, kept)
  return `{"data":[${slice.items.map(recordJson).join(',')}],"meta":${JSON.stringify(meta)}}`
}

const sameItems = (a: readonly object[], b: readonly object[]) =>
  a.length === b.length && a.every((item, i) => item === b[i])

/**
 * A page a paginator remembers: the items it was built from, the list's total then, the encoded answer and its weak
 * entity tag (made once, with the bytes).
 */
interface CachedPage {
  items: readonly object[]
  total: number
  body: Uint8Array<ArrayBuffer>
  etag: string
  /** Its `Link` header, as the headers added to its answers that are not compressed. */
  links: { link: string }
  /** The body compressed, in each coding a client asked for so far: made once per page and coding. */
  compressed: Partial<Record<Coding, Uint8Array>>
  /** What the cache counts the page at, its compressed forms included. */
  bytes: number
}

/**
 * A function answering one page of a list: `{ data, meta }`, linking the next page while there is one (with the
 * `kept` parameters of a search, from {@link keptQuery}), and the first, previous, next and last in its `Link`
 * header ({@link pageLinks}, made once with the page's bytes). It keeps
 * the encoded bytes of the pages it served: records are replaced, never edited in place, so a page whose items are
 * the same objects and whose total is unchanged has the same bytes, and answering it again costs no serialising or
 * encoding at all. Each page carries a weak `ETag` made from its bytes when they are encoded; given the `request`,
 * an `If-None-Match` naming it is answered 304 (src/http/conditional.ts), and a page of 1 KiB or more goes in the
 * coding the client accepts (src/http/compression.ts), compressed once per page and coding and kept with it.
 *
 * What it keeps is bounded by bytes, not pages (a {@link ByteCache} of `budget`, 16 MiB by default, the pages used
 * longest ago going first): each page counts its encoded bytes, its records' serialised text (which `recordJson`
 * keeps while the records live, at two bytes a character), the records themselves, all of which the cached page
 * keeps alive, and its compressed forms. A page larger than an eighth of the budget is answered but not kept. `cache.bytes` says what is held.
 *
 * @example
 * const paginate = paginator()
 * return paginate('/api/v1/artists', page, await store.artists.list(page))
 */
export function paginator(budget = CACHE_BUDGET_BYTES) {
  const pages = new ByteCache<CachedPage>(budget)
  const encoder = new TextEncoder()
  const paginate = (
    path: string,
    page: { limit: number; offset: number },
    slice: Slice<object>,
    kept = '',
    request?: Request,
  ): Response => {
    const key = `${path}?limit=${page.limit}&offset=${page.offset}${kept}`
    let cached = pages.get(key)
    if (!cached || cached.total !== slice.total || !sameItems(cached.items, slice.items)) {
      const text = pageText(path, page, slice, kept)
      const body = encoder.encode(text)
      const etag = weakTag(body)
      // The page's text stands for its records' texts, which it is made of.
      const links = { link: pageLinks(path, page, slice.total, kept) }
      const bytes =
        body.byteLength + text.length * 2 + estimateBytes(slice.items) + etag.length * 2 + links.link.length * 2
      cached = { items: slice.items, total: slice.total, body, etag, links, compressed: {}, bytes }
      pages.set(key, cached, bytes)
    }
    const served = cached
    if (!request) return taggedResponse(served.body, served.etag, served.links)
    return answerRead(request, served.etag, () => {
      if (served.body.byteLength < MIN_COMPRESSED_BYTES) return taggedResponse(served.body, served.etag, served.links)
      const coding = negotiate(request.headers.get('accept-encoding'), PER_REQUEST)
      if (!coding) return taggedResponse(served.body, served.etag, { ...served.links, ...VARY })
      let compressed = served.compressed[coding]
      if (!compressed) {
        compressed = compress(served.body, coding)
        // Kept with the page while the page still fits the cache's share of one entry; sent either way.
        if (pages.fits(key, served.bytes + compressed.byteLength)) {
          served.compressed[coding] = compressed
          served.bytes += compressed.byteLength
          pages.set(key, served, served.bytes)
        }
      }
      // The same weak tag for every coding: the representations are equivalent, and a weak tag says no more.
      return taggedResponse(compressed, served.etag, { ...served.links, ...encodedHeaders(coding) })
    })
  }
  // The cache itself, for tests and the bench to read its `bytes`.
  return Object.assign(paginate, { cache: pages as Pick<ByteCache<CachedPage>, 'bytes' | 'size' | 'budget'> })
}
