/**
 * Conditional requests (RFC 9110, section 13): reads answer an `ETag`, honour `If-Match` (412) and `If-None-Match`
 * (304); writes pass both to the store as a {@link Precondition}, checked in the same step as the write (412). Tags of
 * records come from the store (src/store/entity-tag.ts); a list page's is a weak tag of its bytes, made here once
 * per encoded page (src/http/pagination.ts).
 */

import { sha256 } from '#runtime'
import type { Precondition } from '../store/entity-tag.ts'
import { allowedMethods } from './allowed-methods.ts'
import { Problem } from './problem.ts'
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
 * The condition of a request's `If-Match` and `If-None-Match` (RFC 9110, 13.1.1 and 13.1.2), for a write to check in
 * its store step; `undefined` when it has neither. `If-Match` keeps its strong tags only (the strong comparison: a weak
 * tag never matches, so a value whose tags are all weak or malformed is never met); `If-None-Match` keeps every tag
 * without its `W/` (the weak comparison).
 */
export function preconditionOf(request: Request): Precondition | undefined {
  const ifMatch = request.headers.get('if-match')
  const ifNoneMatch = request.headers.get('if-none-match')
  if (ifMatch === null && ifNoneMatch === null) return undefined
  const condition: { ifMatch?: '*' | string[]; ifNoneMatch?: '*' | string[] } = {}
  if (ifMatch !== null) {
    const tags = parseTags(ifMatch)
    condition.ifMatch = tags === '*' ? '*' : tags.filter(({ weak }) => !weak).map(({ tag }) => tag)
  }
  if (ifNoneMatch !== null) {
    const tags = parseTags(ifNoneMatch)
    condition.ifNoneMatch = tags === '*' ? '*' : tags.map(({ tag }) => tag)
  }
  return condition
}

/** 304 Not Modified for a read whose current tag is `etag`: no body, and the headers its 200 would have had. */
export const notModified = (etag: string) =>
  new Response(null, { status: 304, headers: { etag, 'cache-control': CACHE_CONTROL, ...SECURITY_HEADERS } })

/**
 * Whether an `If-Match` value (null when absent) holds for a representation whose tag is `etag`, by the strong
 * comparison: `*` holds for any, a weak tag (a list page's) is never matched by a tag.
 */
function matchHolds(ifMatch: string | null, etag: string): boolean {
  if (ifMatch === null) return true
  const tags = parseTags(ifMatch)
  if (tags === '*') return true
  return !etag.startsWith('W/') && tags.some(({ weak, tag }) => !weak && tag === etag)
}

/**
 * The answer to a read, in the order RFC 9110 evaluates preconditions (13.2.2): 412 problem with the current `ETag`
 * when `If-Match` does not hold; 304 when `If-None-Match` names the current tag `etag`; else `ok` (a 200 carrying
 * `etag`). Only called once the resource is found: an unknown one is 404 whatever the conditions (13.2.1).
 *
 * @example
 * const etag = artistTag(artist)
 * return answerRead(request, etag, () => taggedResponse(recordJson(artist), etag))
 */
export function answerRead(request: Request, etag: string, ok: () => Response): Response {
  refuseUnmatched(request, etag)
  return noneMatchHits(request.headers.get('if-none-match'), etag) ? notModified(etag) : ok()
}

/**
 * The first step of every tagged read (RFC 9110, 13.2.2): a 412 problem with the current `ETag` when the request's
 * `If-Match` does not hold for the representation tagged `etag`; nothing otherwise. For reads that answer their 304
 * their own way (the covers, `/openapi.json`); the others call {@link answerRead}.
 */
export function refuseUnmatched(request: Request, etag: string): void {
  if (!matchHolds(request.headers.get('if-match'), etag))
    throw new Problem(
      'precondition-failed',
      `If-Match names no current version of this resource: its version is now ${etag}${etag.startsWith('W/') ? ', a weak tag, which If-Match never matches' : ''}. Read it without If-Match to get it.`,
      {},
      { etag },
    )
}

/**
 * RFC 9110's conditions (13.1.1, 13.1.2) on the resources that have no entity tag: an account's, the operator's and
 * the fixtures' controls, health checks, the event stream, the pages. No tag can match one, so `If-Match` holds only
 * as `*`, and only where the resource has a current representation (its path answers GET); `If-None-Match` fails only
 * as `*` where it has one: 304 for a read, 412 otherwise. The `beforeHandle` hook of a group of such routes (`routes`,
 * the group's), so it runs after their credentials and validation (a 401, 403 or 400 comes first, as 13.2.1 asks)
 * and before the method is performed.
 *
 * @example
 * const group = new Elysia().onBeforeHandle(conditionsWithoutTags(() => group.routes)).get('/livez', live)
 */
export function conditionsWithoutTags(routes: () => readonly { method: string; path: string }[]) {
  const allowed = allowedMethods(routes)
  return ({ request }: { request: Request }): Response | undefined => {
    const ifMatch = request.headers.get('if-match')
    const ifNoneMatch = request.headers.get('if-none-match')
    if (ifMatch === null && ifNoneMatch === null) return undefined
    const current = allowed(new URL(request.url).pathname).includes('GET')
    if (ifMatch !== null && !(current && parseTags(ifMatch) === '*'))
      throw new Problem(
        'precondition-failed',
        current
          ? 'This resource has no versions (no ETag), so If-Match can only hold as *. Send the request without If-Match.'
          : 'This resource has no representation to match, so If-Match never holds here. Send the request without it.',
      )
    if (ifNoneMatch === null || !current || parseTags(ifNoneMatch) !== '*') return undefined
    if (request.method === 'GET' || request.method === 'HEAD')
      return new Response(null, { status: 304, headers: { ...SECURITY_HEADERS } })
    throw new Problem(
      'precondition-failed',
      'If-None-Match: * asks that this resource have no current representation, and it has one: nothing was done.',
    )
  }
}

// The first 132 bits of SHA-256, in base64url, as the records' tags.
const digest = (bytes: Uint8Array) => sha256(bytes, 'base64url').slice(0, 22)

/**
 * The weak tag of an encoded answer (a list page): equal bytes, equal tag, on every replica, and across restarts.
 * Weak because it validates a view for caches only: no write is conditional on a page (`If-Match` takes a record's
 * strong tag), and `If-None-Match` compares weakly anyway.
 */
export const weakTag = (bytes: Uint8Array) => `W/"${digest(bytes)}"`
