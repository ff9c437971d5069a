import { Elysia } from 'elysia'
import type { authGuard } from '../auth/guard.ts'
import { anyCredential, publicAccess } from '../docs/security.ts'
import { answerRead, noneMatchHits, preconditionOf } from '../http/conditional.ts'
import type { IdempotentRequests } from '../http/idempotency.ts'
import { recordJson, taggedResponse } from '../http/json.ts'
import { keptQuery, PageQuery, Paginated, pageOf, paginator } from '../http/pagination.ts'
import { deprecated, Problem } from '../http/problem.ts'
import { reportOn } from '../http/rate-limit.ts'
import { described, problemResponses } from '../http/responses.ts'
import { Artist, ArtistInput, ArtistPatch } from '../model/artist.ts'
import { ArtistChange, HISTORY_PER_ARTIST } from '../model/history.ts'
import { artistTag } from '../store/entity-tag.ts'
import { ArtistIdParams, ArtistListQuery } from './params.ts'
import { CATALOGUE_LIMITS, type Catalogue, rate } from './service.ts'

const BASE = '/api/v1/artists'

// RFC 9745: deprecated since 2025-01-01T00:00:00Z.
const DEPRECATED_SINCE = new Date('2025-01-01T00:00:00Z')

/** The answer to a read of `artist`: 200 with its strong tag, or 304 when `If-None-Match` names that tag. */
const readArtist = (request: Request, artist: Artist) => {
  const etag = artistTag(artist)
  return answerRead(request, etag, () => taggedResponse(recordJson(artist), etag))
}

/** Artist routes: list, read, create (once per `Idempotency-Key`, with `once`), replace, and the deprecated delete. */
export const artistRoutes = (
  catalogue: Catalogue,
  guard: ReturnType<typeof authGuard>,
  once: IdempotentRequests['create'],
) => {
  const paginate = paginator()
  const paginateHistory = paginator()

  /**
   * The conditions of a create, on its target: the artist collection, whose representation is its first page
   * (`GET /api/v1/artists`) and whose only validator is that page's weak tag. So `If-Match` holds only as `*` (the
   * strong comparison never matches a weak tag), `If-None-Match: *` never holds (the collection exists), and tags in
   * `If-None-Match` are compared with the page's, read when the request has a condition (few do). Throws the 412.
   */
  const collectionCondition = async (request: Request) => {
    const first = { limit: 10, offset: 0 }
    const etag = paginate(BASE, first, await catalogue.listArtists(first)).headers.get('etag') as string
    const ifMatch = request.headers.get('if-match')
    const ifNoneMatch = request.headers.get('if-none-match')
    if ((ifMatch === null || ifMatch.trim() === '*') && !noneMatchHits(ifNoneMatch, etag)) return
    throw new Problem(
      'precondition-failed',
      `The artist collection's version is now ${etag}, a weak tag: If-Match holds here only as *, and If-None-Match must name none of its versions (* names any). Nothing was created.`,
      {},
      { etag },
    )
  }
  return new Elysia({ name: 'artists', prefix: BASE })
    .use(guard)
    .get(
      '',
      async ({ query: { q, sort, ...query }, request }) => {
        const page = pageOf(query)
        return paginate(BASE, page, await catalogue.listArtists(page, { q, sort }), keptQuery({ q, sort }), request)
      },
      {
        query: ArtistListQuery,
        response: {
          200: described(
            Paginated(Artist),
            'One page of artists (those matching `q`, in `sort` order), with a link to the next page.',
          ),
          ...problemResponses(400, 412, 503),
        },
        detail: {
          operationId: 'getAllArtists',
          summary: 'List artists',
          description:
            'The legends of Argentine rock, a page at a time, in id order. Follow `meta.next` for the next page; it is `null` on the last one. `q` and `sort` (extensions of the published contract) search by name or band and order by id or name, either way (`-id`: newest first); `meta.total` counts the matches and `meta.next` keeps both.',
          tags: ['Artists'],
          security: publicAccess,
        },
      },
    )
    .get(
      '/:artistId',
      ({ params, request }) =>
        catalogue.getArtist(Number(params.artistId)).then<Response>((artist) => readArtist(request, artist)),
      {
        params: ArtistIdParams,
        response: { 200: described(Artist, 'The artist.'), ...problemResponses(400, 404, 412, 503) },
        detail: {
          operationId: 'getArtist',
          summary: 'Get one artist',
          description:
            "One artist by id. An id that is not a positive integer is 400; a well-formed id no artist has is 404. The answer carries the artist's version as a strong `ETag`: send it back in `If-None-Match` to get 304 while the artist is unchanged, or in `If-Match` on `PUT` or `PATCH` so as not to overwrite a change made since.",
          tags: ['Artists'],
          security: publicAccess,
        },
      },
    )
    .post(
      '',
      ({ body, caller, request, set }) =>
        once<Artist>(request, caller, body, {
          create: async (keep) => {
            if (preconditionOf(request)) await collectionCondition(request)
            return catalogue.createArtist(body, caller, { keep, report: reportOn(set) })
          },
          created: (artist) => ({ location: `${BASE}/${artist.id}`, etag: artistTag(artist), record: artist }),
        }),
      {
        auth: true,
        body: ArtistInput,
        response: {
          201: described(Artist, 'The artist as stored, with the id the server gave it.'),
          ...problemResponses(400, 401, 409, 412, 413, 415, 422, 429, 503),
        },
        detail: {
          operationId: 'createArtist',
          summary: 'Add an artist',
          description: `Adds a legend to the catalogue. The server assigns the id (an \`id\` in the body is ignored) and answers with \`Location\`. Unknown properties are rejected, each named in the problem. An account adds at most ${rate(CATALOGUE_LIMITS.artistsPerAccount, 'artists')} (with all its tokens and keys together): past that, 429 with \`Retry-After\`. The operator's service keys are not counted. Safe to retry with \`Idempotency-Key\`: the same key and body within 24 hours answer the first answer again (marked \`Idempotent-Replayed: true\`) without adding a second artist; the same key with another body is 422, and while the first is still being processed, 409.`,
          tags: ['Artists'],
          security: anyCredential,
        },
      },
    )
    .put(
      '/:artistId',
      async ({ params, body, request, set, caller }) => {
        const artist = await catalogue.replaceArtist(Number(params.artistId), body, caller, preconditionOf(request))
        set.headers.etag = artistTag(artist)
        return artist
      },
      {
        auth: true,
        params: ArtistIdParams,
        body: ArtistInput,
        response: {
          200: described(Artist, 'The artist as now stored.'),
          ...problemResponses(400, 401, 404, 412, 413, 415, 503),
        },
        detail: {
          operationId: 'updateArtist',
          summary: 'Replace an artist',
          description:
            'Replaces every field of an artist: fields left out (or null) become unset, and are left out of answers. An `id` in the body must be absent or equal to the one in the path. An unknown artist is 404; this never creates one. With `If-Match` (the `ETag` of the artist as you read it), the artist is replaced only if nobody changed it since: otherwise 412, nothing changes, and the `ETag` header of the problem is the current version. Without `If-Match` the last write wins. The answer carries the new `ETag`.',
          tags: ['Artists'],
          security: anyCredential,
        },
      },
    )
    .patch(
      '/:artistId',
      async ({ params, body, request, set, caller }) => {
        const artist = await catalogue.patchArtist(Number(params.artistId), body, caller, preconditionOf(request))
        set.headers.etag = artistTag(artist)
        return artist
      },
      {
        auth: true,
        params: ArtistIdParams,
        body: ArtistPatch,
        response: {
          200: described(Artist, 'The artist as now stored.'),
          ...problemResponses(400, 401, 404, 409, 412, 413, 415, 503),
        },
        detail: {
          operationId: 'patchArtist',
          summary: 'Change some fields of an artist',
          description:
            'Changes only the fields the body names, as a JSON merge patch (RFC 7396, `Content-Type: application/merge-patch+json`; `application/json` is taken as the same): a field sent replaces its value, null removes it, a field left out stays as it is. Every field sent is held to the rules of `PUT`, and `name` cannot be removed; an `id` in the body must be absent or equal to the one in the path. An unknown artist is 404. The patch applies to the artist as stored when it is written: a change saved in between by someone else is kept, and the patch applied over it. With `If-Match` (the `ETag` you read), only while the artist is still that version: otherwise 412 with the current `ETag`, and nothing changes. The answer carries the new `ETag`. Same credentials as `PUT`.',
          tags: ['Artists'],
          security: anyCredential,
        },
      },
    )
    .get(
      '/:artistId/history',
      async ({ params, query, request }) => {
        const id = Number(params.artistId)
        const page = pageOf(query)
        return paginateHistory(`${BASE}/${id}/history`, page, await catalogue.artistHistory(id, page), '', request)
      },
      {
        params: ArtistIdParams,
        query: PageQuery,
        response: {
          200: described(
            Paginated(ArtistChange),
            "One page of the artist's changes and its albums', newest first, with a link to the next page.",
          ),
          ...problemResponses(400, 404, 412, 503),
        },
        detail: {
          operationId: 'getArtistHistory',
          summary: "List an artist's changes",
          description: `Who changed the artist and its albums, and when, newest first, a page at a time like every list: each change with its kind (\`artist-created\`, \`artist-updated\` for PUT and PATCH, \`album-created\`, \`album-updated\`, \`album-deleted\`), the time, the credential that made it (\`by\`: \`service\`, or \`user:<id>/token:<id>\` or \`user:<id>/key:<id>\`, the ids of the account and of its credential, never a secret) and the record as it became (for a removed album, as it was). The server keeps the last ${HISTORY_PER_ARTIST} changes of each artist, its albums' included; older ones are gone. A catalogue loaded at start (\`--seed\`) has no history; a restore of a backup brings back the histories the backup holds. Public like every read, as the event stream that carries the same \`by\` is: it names accounts and credentials by their ids alone, which grant nothing. An unknown artist is 404. Pages carry a weak \`ETag\` (\`If-None-Match\` → 304).`,
          tags: ['Artists'],
          security: publicAccess,
        },
      },
    )
    .delete(
      '/:artistId',
      ({ params: { artistId } }) => {
        // The id only appears in the message, as the client wrote it.
        throw deprecated(
          `Deleting artists is deprecated and nothing was deleted. To correct artist ${artistId}, replace it with PUT ${BASE}/${artistId}.`,
          DEPRECATED_SINCE,
        )
      },
      {
        auth: true,
        params: ArtistIdParams,
        response: problemResponses(400, 401, 503),
        detail: {
          operationId: 'deleteArtist',
          summary: 'Delete an artist (deprecated)',
          description:
            'Deprecated: deleting artists caused too much controversy. With valid credentials this answers 400 with a `Deprecation` header and deletes nothing; to correct an artist, replace it with PUT instead.',
          deprecated: true,
          tags: ['Artists'],
          security: anyCredential,
        },
      },
    )
}
