import { t } from 'elysia'
import { IntegerParam } from '../http/integer-param.ts'

const artistId = IntegerParam({ minimum: 1, description: 'The id of the artist (a positive int64).' })

/** `artistId` in paths: a positive int64. */
export const ArtistIdParams = t.Object({ artistId })

/** `artistId` and `albumId` in the path of one album. */
export const AlbumIdParams = t.Object({
  artistId,
  albumId: IntegerParam({ minimum: 1, description: 'The id of the album.' }),
})
