import { Elysia } from 'elysia'
import type { authGuard } from '../auth/guard.ts'
import { anyCredential, publicAccess } from '../docs/security.ts'
import { answerRead, preconditionOf } from '../http/conditional.ts'
import type { IdempotentRequests } from '../http/idempotency.ts'
import { recordJson, taggedResponse } from '../http/json.ts'
import { keptQuery, Paginated, pageOf, paginator } from '../http/pagination.ts'
import { reportOn } from '../http/rate-limit.ts'
import { described, NoContent, problemResponses } from '../http/responses.ts'
import { Album, AlbumInput, AlbumPatch } from '../model/album.ts'
import { albumTag } from '../store/entity-tag.ts'
import { MAX_ALBUMS_PER_ARTIST } from '../store/store.ts'
import { AlbumIdParams, AlbumListQuery, ArtistIdParams } from './params.ts'
import { CATALOGUE_LIMITS, type Catalogue, rate } from './service.ts'

const albumsOf = (artistId: number) => `/api/v1/artists/${artistId}/albums`

/** A year of a query, validated (digits only), as a number; `undefined` when left out. */
const yearOf = (value: string | undefined) => (value === undefined ? undefined : Number(value))

/** The answer to a read of `album`: 200 with its strong tag, or 304 when `If-None-Match` names that tag. */
const readAlbum = (request: Request, album: Album) => {
  const etag = albumTag(album)
  return answerRead(request, etag, () => taggedResponse(recordJson(album), etag))
}

/** Album routes of an artist: list, read one, add, replace, patch, remove. `latestYear` bounds an album's year. */
export const albumRoutes = (
  catalogue: Catalogue,
  guard: ReturnType<typeof authGuard>,
  latestYear: number,
  once: IdempotentRequests['create'],
) => {
  const paginate = paginator()
  return new Elysia({ name: 'albums', prefix: '/api/v1/artists/:artistId/albums' })
    .use(guard)
    .get(
      '',
      async ({ params, query: { q, sort, year_from, year_to, kind, ...query }, request }) => {
        const artistId = Number(params.artistId)
        const page = pageOf(query)
        const years = { yearFrom: yearOf(year_from), yearTo: yearOf(year_to) }
        const slice = await catalogue.listAlbums(artistId, page, { q, sort, ...years, kind })
        return paginate(albumsOf(artistId), page, slice, keptQuery({ q, sort, year_from, year_to, kind }), request)
      },
      {
        params: ArtistIdParams,
        query: AlbumListQuery,
        response: {
          200: described(Paginated(Album), "One page of the artist's albums, in id order; empty if there are none."),
          ...problemResponses(400, 404, 412, 503),
        },
        detail: {
          operationId: 'getAllAlbums',
          summary: "List an artist's albums",
          description:
            'The albums of one artist, a page at a time, in id order. An artist without albums gives an empty page; an unknown artist is 404. `q`, `year_from`, `year_to`, `kind` and `sort` (extensions of the published contract) search by name, keep the albums released in a range of years (both ends included; an album without a year is outside every range; a range whose start is after its end holds none), keep the albums of one kind of release (`kind=live`) and order by id, year or name, either way; `meta.total` counts the matches and `meta.next` keeps them all.',
          tags: ['Artists'],
          security: publicAccess,
        },
      },
    )
    .get(
      '/:albumId',
      ({ params, request }) =>
        catalogue
          .getAlbum(Number(params.artistId), Number(params.albumId))
          .then<Response>((album) => readAlbum(request, album)),
      {
        params: AlbumIdParams,
        response: { 200: described(Album, 'The album.'), ...problemResponses(400, 404, 412, 503) },
        detail: {
          operationId: 'getAlbum',
          summary: 'Get one album',
          description:
            "One album of an artist, where a new album's `Location` points. An album of another artist is 404 here.",
          tags: ['Artists'],
          security: publicAccess,
        },
      },
    )
    .post(
      '',
      ({ params, body, caller, request, set }) =>
        once<Album>(request, caller, body, {
          create: (keep) =>
            catalogue.createAlbum(Number(params.artistId), body, caller, {
              condition: preconditionOf(request),
              keep,
              report: reportOn(set),
            }),
          created: (album) => ({
            location: `${albumsOf(album.artistId)}/${album.id}`,
            etag: albumTag(album),
            record: album,
          }),
        }),
      {
        auth: true,
        params: ArtistIdParams,
        body: AlbumInput(latestYear),
        response: {
          201: described(Album, 'The album as stored, with the id the server gave it.'),
          ...problemResponses(400, 401, 404, 409, 412, 413, 415, 422, 429, 503),
        },
        detail: {
          operationId: 'createAlbum',
          summary: 'Add an album to an artist',
          description: `Adds an album to the discography of the artist in the path. \`year\` is the year of first release, from 1900 to next year; left out (or null) it is unset. Answers with \`Location\`. An artist has at most ${MAX_ALBUMS_PER_ARTIST} albums: one more is 409, whoever asks. An account adds at most ${rate(CATALOGUE_LIMITS.albumsPerAccount, 'albums')} (with all its tokens and keys together): past that, 429 with \`Retry-After\`. The operator's service keys are not counted. \`If-Match\` and \`If-None-Match\` are checked against the artist's \`ETag\` (the album list is part of the artist), in the same step as the insert: send the tag of the artist as you read it to add the album only while the artist is unchanged; otherwise 412 with the artist's current \`ETag\`, and nothing is added. Safe to retry with \`Idempotency-Key\`, as adding an artist is.`,
          tags: ['Artists'],
          security: anyCredential,
        },
      },
    )
    .put(
      '/:albumId',
      async ({ params, body, request, set, caller }) => {
        const { artistId, albumId } = params
        const album = await catalogue.replaceAlbum(
          Number(artistId),
          Number(albumId),
          body,
          caller,
          preconditionOf(request),
        )
        set.headers.etag = albumTag(album)
        return album
      },
      {
        auth: true,
        params: AlbumIdParams,
        body: AlbumInput(latestYear),
        response: {
          200: described(Album, 'The album as now stored.'),
          ...problemResponses(400, 401, 404, 412, 413, 415, 503),
        },
        detail: {
          operationId: 'updateAlbum',
          summary: 'Replace an album',
          description:
            "Replaces every field of an album, held to the rules of adding one (`year` from 1900 to next year): fields left out (or null) become unset. An `id` in the body must be absent or equal to the album id in the path. An album of another artist, or an unknown one, is 404; this never creates one. With `If-Match` (the album's `ETag` as you read it), only while it is still that version: otherwise 412 with the current `ETag`, and nothing changes. The answer carries the new `ETag`.",
          tags: ['Artists'],
          security: anyCredential,
        },
      },
    )
    .patch(
      '/:albumId',
      async ({ params, body, request, set, caller }) => {
        const { artistId, albumId } = params
        const album = await catalogue.patchAlbum(
          Number(artistId),
          Number(albumId),
          body,
          caller,
          preconditionOf(request),
        )
        set.headers.etag = albumTag(album)
        return album
      },
      {
        auth: true,
        params: AlbumIdParams,
        body: AlbumPatch(latestYear),
        response: {
          200: described(Album, 'The album as now stored.'),
          ...problemResponses(400, 401, 404, 409, 412, 413, 415, 503),
        },
        detail: {
          operationId: 'patchAlbum',
          summary: 'Change some fields of an album',
          description:
            'Changes only the fields the body names, as a JSON merge patch (RFC 7396, `Content-Type: application/merge-patch+json`; `application/json` is taken as the same): a field sent replaces its value, null removes it, a field left out stays as it is. Every field sent is held to the rules of adding an album, and `name` cannot be removed. The patch applies to the album as stored when it is written: a change saved in between is kept, and the patch applied over it. With `If-Match`, only while the album is still that version: otherwise 412 with the current `ETag`. The answer carries the new `ETag`.',
          tags: ['Artists'],
          security: anyCredential,
        },
      },
    )
    .delete(
      '/:albumId',
      async ({ params, request, caller }) => {
        await catalogue.deleteAlbum(Number(params.artistId), Number(params.albumId), caller, preconditionOf(request))
        return new Response(null, { status: 204 })
      },
      {
        auth: true,
        params: AlbumIdParams,
        response: {
          204: NoContent('The album is removed; no body.'),
          ...problemResponses(400, 401, 404, 412, 503),
        },
        detail: {
          operationId: 'deleteAlbum',
          summary: 'Remove an album',
          description: `Removes an album from the artist's discography, with any credential that may add one. Its id is never given again; its URL answers 404 from then on, and removing it again is 404 too. The artist may take another album in its place (at most ${MAX_ALBUMS_PER_ARTIST} at a time); the account that added it gets no room back in its rate of new albums, which counts additions. With \`If-Match\` (the album's \`ETag\`), only while it is still that version: otherwise 412 with the current \`ETag\`, and nothing is removed.`,
          tags: ['Artists'],
          security: anyCredential,
        },
      },
    )
}
