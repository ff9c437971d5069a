import { CACHE_CONTROL } from './conditional.ts'
import { SECURITY_HEADERS } from './security-headers.ts'
import { sizedResponse } from './sized-response.ts'

/**
 * The headers of JSON answers. The Content-Type has no charset, as Elysia spells it for the answers it serialises:
 * RFC 8259 defines no charset parameter for application/json (JSON text is UTF-8), so every JSON answer says the same.
 */
export const JSON_HEADERS = { 'content-type': 'application/json', ...SECURITY_HEADERS }

const serialised = new WeakMap<object, string>()

/**
 * The JSON text of a stored artist or album, serialised once. The store replaces such a record with a new object
 * when it changes and never edits it in place, so a cached text cannot go stale, and the entry goes with the object.
 */
export function recordJson(record: object): string {
  let text = serialised.get(record)
  if (text === undefined) {
    text = JSON.stringify(record)
    serialised.set(record, text)
  }
  return text
}

/** A 200 answer carrying JSON that is already serialised: the hot read paths skip serialising per request. */
export const jsonResponse = (body: string | Uint8Array) => sizedResponse(body, { headers: JSON_HEADERS })

/**
 * A 200 answer carrying JSON already serialised, with its entity tag: caches may keep it and ask again with
 * `If-None-Match` (src/http/conditional.ts); `more` are further headers (a compressed page's).
 */
export const taggedResponse = (body: string | Uint8Array, etag: string, more?: Record<string, string>) =>
  sizedResponse(body, { headers: { ...JSON_HEADERS, etag, 'cache-control': CACHE_CONTROL, ...more } })
