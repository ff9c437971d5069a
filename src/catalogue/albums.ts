import { Elysia, t } from 'elysia'
import type { authGuard } from '../auth/guard.ts'
import { IntegerParam } from '../http/integer-param.ts'
import { jsonResponse, recordJson } from '../http/json.ts'
import { PageQuery, Paginated, pageOf, paginate } from '../http/pagination.ts'
import { problemResponses } from '../http/responses.ts'
import { Album, AlbumInput, ArtistIdParams } from './model.ts'
import { unknownAlbum, unknownArtist } from './problems.ts'
import type { Catalogue } from './service.ts'

const albumsOf = (artistId: number) => `/api/v1/artists/${artistId}/albums`

/** Album routes of an artist: list, read one, add. `latestYear` bounds the year of a new album. */
export const albumRoutes = (catalogue: Catalogue, guard: ReturnType<typeof authGuard>, latestYear: number) =>
  new Elysia({ name: 'albums', prefix: '/api/v1/artists/:artistId/albums' })
    .use(guard)
    .get(
      '',
      ({ params, query }) => {
        const artistId = Number(params.artistId)
        const page = pageOf(query)
        const slice = catalogue.listAlbums(artistId, page)
        if (!slice) throw unknownArtist(artistId)
        return paginate(albumsOf(artistId), page, slice)
      },
      {
        params: ArtistIdParams,
        query: PageQuery,
        response: { 200: Paginated(Album), ...problemResponses(400, 404) },
        detail: { operationId: 'getAllAlbums', summary: "List an artist's albums", tags: ['Albums'] },
      },
    )
    .get(
      '/:albumId',
      ({ params }) => {
        const [artistId, albumId] = [Number(params.artistId), Number(params.albumId)]
        const album = catalogue.getAlbum(artistId, albumId)
        if (!album) throw unknownAlbum(artistId, albumId)
        return jsonResponse(recordJson(album))
      },
      {
        params: t.Object({
          artistId: ArtistIdParams.properties.artistId,
          albumId: IntegerParam({ minimum: 1, description: 'The id of the album.' }),
        }),
        response: { 200: Album, ...problemResponses(400, 404) },
        detail: { operationId: 'getAlbum', summary: 'Get one album', tags: ['Albums'] },
      },
    )
    .post(
      '',
      async ({ params, body, set }) => {
        const artistId = Number(params.artistId)
        const album = await catalogue.createAlbum(artistId, body)
        if (!album) throw unknownArtist(artistId)
        set.status = 201
        set.headers.location = `${albumsOf(artistId)}/${album.id}`
        return album
      },
      {
        auth: true,
        params: ArtistIdParams,
        body: AlbumInput(latestYear),
        response: { 201: Album, ...problemResponses(400, 401, 404, 413, 415, 503) },
        detail: { operationId: 'createAlbum', summary: 'Add an album to an artist', tags: ['Albums'] },
      },
    )
