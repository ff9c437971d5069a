import { invalid, Problem } from './problem.ts'

/** The largest request body accepted, in bytes. */
export const MAX_BODY_BYTES = 1024 * 1024

/**
 * The largest body of the public routes that take one (sign-up, login), in bytes: twice their largest valid body,
 * every character of every field written as a `\uXXXX` escape (about 8 KB), so that no valid body is refused, and
 * an anonymous sender cannot make the server read and parse a megabyte a request.
 */
export const SMALL_BODY_BYTES = 16 * 1024

const sized = (bytes: number) => (bytes % 1024 ** 2 === 0 ? `${bytes / 1024 ** 2} MiB` : `${bytes / 1024} KiB`)

const tooLarge = (limit: number) =>
  new Problem('payload-too-large', `The request body is larger than ${limit} bytes (${sized(limit)}).`)

// Marks the parse steps made by `jsonBody`, so that a test can find them among a route's hooks (`jsonBodyOf`).
const JSON_BODY = Symbol('jsonBody')

/** What a route's parse step checks before it reads a byte of the body, and the most of the body it reads. */
export interface JsonBodyOptions {
  /** The most of the body read, in bytes: 1 MiB ({@link MAX_BODY_BYTES}) unless lowered (sign-up and login). */
  limit?: number
  /**
   * Checked before the body is read (credentials, a closed sign-up): what it throws is the answer, with the body
   * unread. May wait (a credential check asks the store).
   */
  first?: (request: Request) => unknown
}

/**
 * A route's parse step: `first` (if any), then the JSON body ({@link parseJsonBody}), read up to `limit`. Every route
 * that takes a body has one: the `auth`, `user` and `service` options give it to their routes with their credential
 * check as `first` (src/auth/guard.ts); the public routes that take a body name it themselves.
 *
 * @example
 * .post('/login', handler, { parse: jsonBody({ limit: SMALL_BODY_BYTES }), body: LoginInput })
 */
export function jsonBody({ limit = MAX_BODY_BYTES, first }: JsonBodyOptions = {}) {
  // Destructured on purpose: Elysia reads a hook's parameters to decide what each request must prepare.
  const parse = async ({ request }: { request: Request }) => {
    if (first) await first(request)
    return parseJsonBody({ request }, limit)
  }
  return Object.assign(parse, { [JSON_BODY]: { limit } })
}

/** The limit of a route's parse step made by {@link jsonBody}, from its parse hooks (`route.hooks.parse`), for tests. */
export function jsonBodyOf(parses: unknown): { limit: number } | undefined {
  if (!Array.isArray(parses)) return undefined
  for (const hook of parses) {
    const fn: unknown = typeof hook === 'function' ? hook : (hook as { fn?: unknown } | null)?.fn
    if (typeof fn === 'function' && JSON_BODY in fn) return (fn as { [JSON_BODY]: { limit: number } })[JSON_BODY]
  }
  return undefined
}

const mediaType = (contentType: string) => contentType.split(';', 1)[0]?.trim().toLowerCase() ?? ''

const isJson = (contentType: string) => {
  const type = mediaType(contentType)
  return type === 'application/json' || (type.startsWith('application/') && type.endsWith('+json'))
}

/**
 * What a `PATCH` body may be (RFC 5789 `Accept-Patch`): a JSON merge patch (RFC 7396), also as plain
 * `application/json`, which many clients send whatever the body means. A JSON Patch (RFC 6902) is not taken.
 */
export const ACCEPT_PATCH = 'application/merge-patch+json, application/json'

/** Reads at most `limit` bytes of the body, failing as soon as there is more (chunked bodies included). */
async function readLimited(request: Request, limit: number): Promise<string> {
  const declared = request.headers.get('content-length')
  if (declared !== null && Number(declared) > limit) throw tooLarge(limit)
  if (!request.body) return ''
  const chunks: Uint8Array[] = []
  let size = 0
  for await (const chunk of request.body) {
    size += chunk.byteLength
    if (size > limit) throw tooLarge(limit)
    chunks.push(chunk)
  }
  return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.concat(chunks))
}

/**
 * The body of a request, for a route's parse step ({@link jsonBody}, which checks credentials first where the route
 * needs them): bodies must be JSON (415 otherwise), at most `limit` bytes (413; 1 MiB unless the route lowered it),
 * well-formed (400) and an object (400). A request without a body, or with an empty one, parses to `undefined`,
 * which the route's schema then rejects where the route takes a body.
 */
export async function parseJsonBody({ request }: { request: Request }, limit = MAX_BODY_BYTES): Promise<unknown> {
  const contentType = request.headers.get('content-type')
  if (request.body === null && !contentType) return undefined
  if (!contentType || !isJson(contentType)) {
    // A body-less request that names a type (some clients always send one) is still body-less.
    if (request.headers.get('content-length') === '0') return undefined
    throw new Problem(
      'unsupported-media-type',
      `The request body must be JSON sent with Content-Type: application/json${contentType ? `, not ${contentType}` : ''}.`,
    )
  }
  if (request.method === 'PATCH' && !ACCEPT_PATCH.split(', ').includes(mediaType(contentType)))
    throw new Problem(
      'unsupported-media-type',
      `A PATCH body must be a JSON merge patch (RFC 7396) sent with Content-Type: application/merge-patch+json (or application/json), not ${contentType}.`,
      {},
      { 'accept-patch': ACCEPT_PATCH },
    )
  let text: string
  try {
    text = await readLimited(request, limit)
  } catch (error) {
    if (error instanceof Problem) throw error
    throw new Problem('malformed-json', 'The request body is not valid UTF-8.')
  }
  // Body-less, whatever the headers say: many clients send Content-Type: application/json on every request, a reset
  // or a delete included. A route that needs a body then says so, as it does for a request without one.
  if (text.trim() === '') return undefined
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch (error) {
    throw new Problem('malformed-json', `The request body is not valid JSON: ${(error as Error).message}.`)
  }
  // Every body of this API is an object; saying so here is clearer than a list of missing fields.
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw invalid([{ pointer: '', detail: 'the request body must be a JSON object' }])
  const found = scan(body, 0)
  if (found?.tooDeep) throw invalid([{ pointer: found.pointer, detail: `nests more than ${MAX_DEPTH} levels deep` }])
  if (found) throw invalid([{ pointer: found.pointer, detail: 'is not a known property' }])
  return body
}

/** How deeply a body may nest; no body of this API needs more than two levels. */
const MAX_DEPTH = 32

/** What {@link scan} found: a `__proto__` key, or an object or array nested too deep, with its JSON Pointer. */
interface Finding {
  pointer: string
  tooDeep: boolean
}

const escapeKey = (key: string) => key.replaceAll('~', '~0').replaceAll('/', '~1')

/**
 * The first `__proto__` key, or the first object nested more than MAX_DEPTH levels deep, in a parsed body. JSON.parse
 * makes `__proto__` a harmless own property, but Elysia merges bodies into schema defaults with Object.assign, which
 * would turn it into the object's prototype. One pass over the values that allocates nothing unless it finds
 * something (the pointer is built on the way back up): no key arrays, no pointer per key, primitives not visited.
 */
function scan(value: object, depth: number): Finding | undefined {
  if (depth > MAX_DEPTH) return { pointer: '', tooDeep: true }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i]
      if (typeof item !== 'object' || item === null) continue
      const found = scan(item, depth + 1)
      if (found) {
        found.pointer = `/${i}${found.pointer}`
        return found
      }
    }
    return undefined
  }
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue
    if (key === '__proto__') return { pointer: '/__proto__', tooDeep: false }
    const item: unknown = (value as Record<string, unknown>)[key]
    if (typeof item !== 'object' || item === null) continue
    const found = scan(item, depth + 1)
    if (found) {
      found.pointer = `/${escapeKey(key)}${found.pointer}`
      return found
    }
  }
  return undefined
}
