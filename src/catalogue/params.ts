import { t } from 'elysia'
import { IntegerParam } from '../http/integer-param.ts'
import { PageQuery } from '../http/pagination.ts'
import { queryParameters } from '../http/query-params.ts'
import { ALBUM_KINDS } from '../model/album.ts'
import { STORABLE } from '../model/rules.ts'
import { ALBUM_SORTS, ARTIST_SORTS, MAX_SEARCH_LENGTH } from '../model/search.ts'

const artistId = IntegerParam({ minimum: 1, description: 'The id of the artist (a positive int64).' })

/** `artistId` in paths: a positive int64. */
export const ArtistIdParams = t.Object({ artistId })

/** `artistId` and `albumId` in the path of one album. */
export const AlbumIdParams = t.Object({
  artistId,
  albumId: IntegerParam({ minimum: 1, description: 'The id of the album.' }),
})

const searchText = (what: string) =>
  t.Optional(
    t.String({
      maxLength: MAX_SEARCH_LENGTH,
      pattern: STORABLE,
      description: `Finds ${what} this text, ignoring case and accents (\`garcia\` finds "García"); empty finds everything. An extension of the published contract.`,
      error: `a text of at most ${MAX_SEARCH_LENGTH} characters`,
    }),
  )

/** The options of `sort`, for its description and its validation message. */
const sortOptions = (sorts: readonly string[], description: string) => ({
  description: `${description} An extension of the published contract.`,
  error: `one of ${sorts.join(', ')}`,
})

/** The query of the artist list: a page, a search by name or band, an order. */
export const ArtistListQuery = queryParameters({
  ...PageQuery.properties,
  q: searchText('artists whose name or band contains'),
  sort: t.Optional(
    t.UnionEnum(
      ARTIST_SORTS,
      sortOptions(
        ARTIST_SORTS,
        'The order: `id` (the default), `-id` (newest first), `name` or `-name` (descending), names compared as a Spanish reader does.',
      ),
    ),
  ),
})

const yearBound = (end: string) =>
  t.Optional(
    IntegerParam({
      minimum: 0,
      maximum: 9999n,
      description: `Only albums released ${end}, this year included; albums without a year are left out. An extension of the published contract.`,
      error: 'a year from 0 to 9999, written in digits only',
    }),
  )

/**
 * `kind` in an album list's query: one of the kinds, or left out for every kind. Without the default `UnionEnum`
 * gives its first value, which would keep the studio albums of a list that names no kind.
 */
function kindParam() {
  const param = t.UnionEnum(ALBUM_KINDS, {
    description: 'Only albums of this kind of release. An extension of the published contract.',
    error: `one of ${ALBUM_KINDS.join(', ')}`,
  })
  delete param.default
  return param
}

/** The query of an artist's album list: a page, a search by name, a range of years, a kind, an order. */
export const AlbumListQuery = queryParameters({
  ...PageQuery.properties,
  q: searchText('albums whose name contains'),
  year_from: yearBound('in or after this year'),
  year_to: yearBound('in or before this year'),
  kind: t.Optional(kindParam()),
  sort: t.Optional(
    t.UnionEnum(
      ALBUM_SORTS,
      sortOptions(
        ALBUM_SORTS,
        'The order: `id` (the default), `-id` (newest first), `year`, `-year` (albums without a year last either way), `name` or `-name`.',
      ),
    ),
  ),
})
