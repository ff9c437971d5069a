/**
 * Conditional requests (RFC 9110, section 13): reads answer an `ETag` and honour `If-None-Match` with 304; the
 * replacement of an artist honours `If-Match` (its check is the store's, in the same step as the write). Tags of
 * records come from the store (src/store/entity-tag.ts); a list page's is a weak tag of its bytes, made here once
 * per encoded page (src/http/pagination.ts).
 */
import { SECURITY_HEADERS } from './security-headers.ts'

/**
 * What every tagged read answers with: caches may keep it but must ask again each time (`If-None-Match`), which a
 * 304 makes cheap. A 304 repeats it, as RFC 9110 (15.4.5) asks.
 */
export const CACHE_CONTROL = 'no-cache'

/** At most this many tags of a conditional header are looked at: no valid request names more. */
export const MAX_TAGS = 64

// One entity tag of a list: optional W/, then a quoted string of etagc (no DQUOTE, no controls, no space).
const ENTITY_TAG = /^(W\/)?("[\x21\x23-\x7e\x80-\xff]*")$/

/** The tags of an `If-Match` or `If-None-Match` value: `*`, or its entity tags (malformed members are dropped). */
function parseTags(value: string): '*' | { weak: boolean; tag: string }[] {
  const trimmed = value.trim()
  if (trimmed === '*') return '*'
  const tags: { weak: boolean; tag: string }[] = []
  // Entity tags hold no commas in practice (ours never do): a comma ends a member.
  for (const member of trimmed.split(',', MAX_TAGS)) {
    const match = ENTITY_TAG.exec(member.trim())
    if (match?.[2]) tags.push({ weak: match[1] !== undefined, tag: match[2] })
  }
  return tags
}

/**
 * Whether `If-None-Match` (the header's value, null when absent) matches the current tag `etag` by the weak
 * comparison RFC 9110 asks for it (13.1.2): `W/"x"` and `"x"` match each other. `*` matches any current
 * representation, which a read that found one has.
 */
export function noneMatchHits(ifNoneMatch: string | null, etag: string): boolean {
  if (ifNoneMatch === null) return false
  const tags = parseTags(ifNoneMatch)
  if (tags === '*') return true
  const opaque = etag.startsWith('W/') ? etag.slice(2) : etag
  return tags.some(({ tag }) => tag === opaque)
}

/**
 * The strong tags an `If-Match` value names, for the store to compare with the record's current tag (the strong
 * comparison, RFC 9110 13.1.1: a weak tag never matches); `undefined` when there is no condition to check: no header,
 * or `*`, which any existing artist matches (an unknown one is 404 before any condition, as 13.2.2 orders). A value
 * whose tags are all weak or malformed names none: it is never met.
 */
export function ifMatchTags(ifMatch: string | null): readonly string[] | undefined {
  if (ifMatch === null) return undefined
  const tags = parseTags(ifMatch)
  if (tags === '*') return undefined
  return tags.filter(({ weak }) => !weak).map(({ tag }) => tag)
}

/** 304 Not Modified for a read whose current tag is `etag`: no body, and the headers its 200 would have had. */
export const notModified = (etag: string) =>
  new Response(null, { status: 304, headers: { etag, 'cache-control': CACHE_CONTROL, ...SECURITY_HEADERS } })

/**
 * The answer to a read: `ok` (a 200 carrying `etag`) unless the request's `If-None-Match` names that tag, then 304.
 *
 * @example
 * const etag = artistTag(artist)
 * return answerRead(request, etag, () => taggedResponse(recordJson(artist), etag))
 */
export function answerRead(request: Request, etag: string, ok: () => Response): Response {
  return noneMatchHits(request.headers.get('if-none-match'), etag) ? notModified(etag) : ok()
}

// The first 132 bits of SHA-256, in base64url, as the records' tags.
const digest = (bytes: Uint8Array) => Bun.SHA256.hash(bytes, 'base64url').slice(0, 22)

/**
 * The weak tag of an encoded answer (a list page): equal bytes, equal tag, on every replica, and across restarts.
 * Weak because it validates a view for caches only: no write is conditional on a page (`If-Match` takes a record's
 * strong tag), and `If-None-Match` compares weakly anyway.
 */
export const weakTag = (bytes: Uint8Array) => `W/"${digest(bytes)}"`
