import { CACHE_CONTROL } from '../http/conditional.ts'
import { problemResponse } from './responses.ts'
import type { Header, Operation, Parameter, Response } from './shapes.ts'

/**
 * What each operation does with entity tags (src/http/conditional.ts): a read answers a strong (one record) or weak
 * (a list page) `ETag` and honours `If-None-Match` (304) and `If-Match` (412); a write answers the `ETag` of what it
 * stored and honours both (412). The routes do not say it in their schemas (a 304 carries no body to validate), so the document
 * says it here; every answer the tests see is checked against it (test/support/openapi.ts), so it cannot drift.
 */
const CONDITIONAL: Record<string, { read?: 'strong' | 'weak'; write?: number; target?: string }> = {
  getArtist: { read: 'strong' },
  getAlbum: { read: 'strong' },
  getAllArtists: { read: 'weak' },
  getAllAlbums: { read: 'weak' },
  getArtistHistory: { read: 'weak' },
  createArtist: { write: 201, target: 'the artist collection (the weak tag of its first page)' },
  createAlbum: { write: 201, target: 'the artist' },
  updateArtist: { write: 200 },
  patchArtist: { write: 200 },
  updateAlbum: { write: 200 },
  patchAlbum: { write: 200 },
  // A 204 has no body, so no tag of one.
  deleteAlbum: { write: 204 },
}

const TAG_EXAMPLE = '"q3ZCr0YdUuq1pW4pVfDgxw"'

const header = (description: string, examples: string[]): Header => ({
  description,
  required: true,
  schema: { type: 'string', examples },
})

const strongTag = (what: string) =>
  header(
    `The version of ${what} (a strong entity tag): send it in \`If-None-Match\` to ask whether it changed, or in \`If-Match\` on a write (\`PUT\`, \`PATCH\`, \`DELETE\`) so as not to overwrite a change made since.`,
    [TAG_EXAMPLE],
  )

const weakTag = header(
  'The version of this page (a weak entity tag, of its bytes): send it in `If-None-Match` to get 304 while the page is unchanged.',
  [`W/${TAG_EXAMPLE}`],
)

const cacheControl = header('Caches may keep the answer, but must ask again (`If-None-Match`) before each use.', [
  CACHE_CONTROL,
])

const requestHeader = (name: string, description: string, example: string): Parameter => ({
  name,
  in: 'header',
  required: false,
  description,
  // The transport refuses any header over 16 KiB (431); of a longer list, only the first 64 tags are looked at
  // (MAX_TAGS, src/http/conditional.ts).
  schema: { type: 'string', maxLength: 8192, examples: [example] },
})

const ifNoneMatch = requestHeader(
  'If-None-Match',
  'The `ETag` of a copy you hold (or several, comma-separated, or `*`): while it is still current, the answer is 304 without a body. Compared weakly, as RFC 9110 says: `W/"x"` matches `"x"`.',
  TAG_EXAMPLE,
)

const ifMatch = (what: string) =>
  requestHeader(
    'If-Match',
    `The \`ETag\` of ${what} as you read it (or several, comma-separated): the request is served only while it is still that version, otherwise 412 (with the current \`ETag\`) and nothing changes. Compared strongly (a weak tag never matches); \`*\` matches any current version. Left out, the request is served whatever changed meanwhile.`,
    // An example a documentation UI may fill in and send as it is: \`*\` holds for anything that exists.
    '*',
  )

const ifNoneMatchOnWrite = (what: string) =>
  requestHeader(
    'If-None-Match',
    `Tags of ${what} (or \`*\`) that must not be current: when one is (\`*\`: when it exists at all), 412 with the current \`ETag\` and nothing changes. Compared weakly.`,
    // Sent as it is by a documentation UI, a tag nothing has holds.
    TAG_EXAMPLE,
  )

/**
 * Adds the entity tags, `If-None-Match` and 304, and `If-Match` to the operations that have them (see `CONDITIONAL`),
 * and to the others what RFC 9110 makes of those headers on a resource without tags (`conditionsWithoutTags`).
 */
export function documentConditional(operation: Operation, method: string): void {
  const conditional = CONDITIONAL[operation.operationId]
  // The deprecated delete answers 400 whatever is sent.
  if (!conditional) {
    if (!operation.deprecated) documentWithoutTags(operation, method)
    return
  }
  const { responses } = operation
  if (conditional.read) {
    const etag = conditional.read === 'strong' ? strongTag(`the ${whatOf(operation)}`) : weakTag
    const ok = responses[200]
    if (ok) ok.headers = { ...ok.headers, ETag: etag, 'Cache-Control': cacheControl }
    operation.parameters = [...(operation.parameters ?? []), ifNoneMatch]
    operation.responses = sorted({
      ...responses,
      304: {
        description: 'Not modified: the `ETag` in `If-None-Match` is still current. No body; the headers of a 200.',
        headers: { ETag: etag, 'Cache-Control': cacheControl },
      },
    })
  }
  if (conditional.write && conditional.write !== 204) {
    const written = responses[conditional.write]
    if (written) written.headers = { ...written.headers, ETag: strongTag(`the ${whatOf(operation)} as stored now`) }
  }
  const what = conditional.target ?? `the ${whatOf(operation)}`
  operation.parameters = [
    ...(operation.parameters ?? []),
    ifMatch(what),
    ...(conditional.write ? [ifNoneMatchOnWrite(what)] : []),
  ]
}

/** The 412 (and, for a read, the 304) of `If-Match` and `If-None-Match: *` on a resource that has no `ETag`. */
function documentWithoutTags(operation: Operation, method: string): void {
  const refused = problemResponse(['precondition-failed'])
  refused.description =
    'This resource has no `ETag`: `If-Match` holds only as `*` where the resource exists, and `If-None-Match: *` fails where it does. Nothing was done.'
  // No current tag to send.
  delete refused.headers
  const added: Record<string, Response> = { 412: refused }
  if (method === 'get')
    added[304] = { description: '`If-None-Match: *`, and the resource exists (it has no `ETag`). No body.' }
  operation.responses = sorted({ ...operation.responses, ...added })
}

/** What an operation's answer is, for the tags' descriptions. */
const whatOf = (operation: Operation) => (operation.operationId.includes('Album') ? 'album' : 'artist')

const sorted = <T>(responses: Record<string, T>): Record<string, T> =>
  Object.fromEntries(Object.entries(responses).sort(([a], [b]) => Number(a) - Number(b)))
