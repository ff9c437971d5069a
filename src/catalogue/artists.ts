import { Elysia } from 'elysia'
import type { authGuard } from '../auth/guard.ts'
import { jsonResponse, recordJson } from '../http/json.ts'
import { PageQuery, Paginated, pageOf, paginate } from '../http/pagination.ts'
import { invalid, Problem } from '../http/problem.ts'
import { problemResponses } from '../http/responses.ts'
import { Artist, ArtistIdParams, ArtistInput } from './model.ts'
import { unknownArtist } from './problems.ts'
import type { Catalogue } from './service.ts'

const BASE = '/api/v1/artists'

// RFC 9745: deprecated since 2025-01-01T00:00:00Z.
const DEPRECATION = { deprecation: '@1735689600', link: '</problems/deprecated-operation>; rel="deprecation"' }

/** Artist routes: list, read, create, replace, and the deprecated delete. */
export const artistRoutes = (catalogue: Catalogue, guard: ReturnType<typeof authGuard>) =>
  new Elysia({ name: 'artists', prefix: BASE })
    .use(guard)
    .get(
      '',
      ({ query }) => {
        const page = pageOf(query)
        return paginate(BASE, page, catalogue.listArtists(page))
      },
      {
        query: PageQuery,
        response: { 200: Paginated(Artist), ...problemResponses(400) },
        detail: { operationId: 'getAllArtists', summary: 'List artists', tags: ['Artists'] },
      },
    )
    .get(
      '/:artistId',
      ({ params }) => {
        const artistId = Number(params.artistId)
        const artist = catalogue.getArtist(artistId)
        if (!artist) throw unknownArtist(artistId)
        return jsonResponse(recordJson(artist))
      },
      {
        params: ArtistIdParams,
        response: { 200: Artist, ...problemResponses(400, 404) },
        detail: { operationId: 'getArtist', summary: 'Get one artist', tags: ['Artists'] },
      },
    )
    .post(
      '',
      async ({ body, set }) => {
        const artist = await catalogue.createArtist(body)
        set.status = 201
        set.headers.location = `${BASE}/${artist.id}`
        return artist
      },
      {
        auth: true,
        body: ArtistInput,
        response: { 201: Artist, ...problemResponses(400, 401, 413, 415, 503) },
        detail: { operationId: 'createArtist', summary: 'Add an artist', tags: ['Artists'] },
      },
    )
    .put(
      '/:artistId',
      async ({ params, body }) => {
        const artistId = Number(params.artistId)
        if (body.id !== undefined && body.id !== artistId)
          throw invalid([
            { pointer: '/id', detail: `must be absent or equal to the artist id in the path (${artistId})` },
          ])
        const artist = await catalogue.replaceArtist(artistId, body)
        if (!artist) throw unknownArtist(artistId)
        return artist
      },
      {
        auth: true,
        params: ArtistIdParams,
        body: ArtistInput,
        response: { 200: Artist, ...problemResponses(400, 401, 404, 413, 415, 503) },
        detail: { operationId: 'updateArtist', summary: 'Replace an artist', tags: ['Artists'] },
      },
    )
    .delete(
      '/:artistId',
      ({ params: { artistId } }) => {
        // The id only appears in the message, as the client wrote it.
        throw new Problem(
          'deprecated-operation',
          `Deleting artists is deprecated and nothing was deleted. To correct artist ${artistId}, replace it with PUT ${BASE}/${artistId}.`,
          {},
          DEPRECATION,
        )
      },
      {
        auth: true,
        params: ArtistIdParams,
        response: problemResponses(400, 401),
        detail: {
          operationId: 'deleteArtist',
          summary: 'Delete an artist (deprecated)',
          deprecated: true,
          tags: ['Artists'],
        },
      },
    )
