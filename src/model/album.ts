/**
 * The album: the one model from which the API's response and request body, the seed file's reader, the data file's
 * check and the documentation derive.
 */
import { type Static, Type } from '@sinclair/typebox'
import { acceptedProperties, mergePatch, patchProperties, servedProperties, storedProperties } from './form.ts'
import { IMAGE_RULES, NAME_RULES, RECORD_ID, STORED_ID } from './rules.ts'

/** The earliest year an album may carry. */
export const FIRST_YEAR = 1900

/**
 * The kinds of release, one per album: what a listener gets, in MusicBrainz's terms where they have one. `studio` is
 * an album of new studio recordings (MusicBrainz's primary type Album); `live`, `compilation` and `soundtrack` are
 * its secondary types of those names; `ep` is a record shorter than an album (a mini-album, a maxi single);
 * `re-recordings` is a studio album of new recordings of songs the artist had already released.
 */
const kind = Type.Union(
  [
    Type.Literal('studio'),
    Type.Literal('live'),
    Type.Literal('ep'),
    Type.Literal('compilation'),
    Type.Literal('soundtrack'),
    Type.Literal('re-recordings'),
  ],
  { examples: ['live'] },
)

/** A kind of release. */
export type AlbumKind = Static<typeof kind>

/** Every kind of release, in the order the documentation lists them. */
export const ALBUM_KINDS = kind.anyOf.map((each) => each.const) as readonly AlbumKind[] as readonly [
  AlbumKind,
  ...AlbumKind[],
]

/** The kind of an album that does not say: albums stored before kinds were kept are studio albums. */
export const DEFAULT_KIND: AlbumKind = 'studio'

/** Each field of an album a client sends, as served and documented. */
const fields = {
  name: Type.String({ description: 'The title, as released.', examples: ['Artaud'] }),
  year: Type.Integer({ description: 'Year of first release.', examples: [1973] }),
  image: Type.String({ description: 'A cover: an absolute http(s) URL or a path on this server.' }),
  kind: Type.Union(kind.anyOf, {
    ...kind,
    description: `The kind of release: ${ALBUM_KINDS.map((each) => `\`${each}\``).join(', ')}; \`${DEFAULT_KIND}\` when not given. \`studio\` is an album of new studio recordings, \`ep\` a record shorter than an album, \`re-recordings\` a studio album of new recordings of songs already released. An extension of the published contract.`,
  }),
}

/** What a client's value must also be, field by field; the latest year allowed is next year. */
const rules = (latestYear: number) => ({
  name: NAME_RULES,
  year: {
    minimum: FIRST_YEAR,
    maximum: latestYear,
    description: `Year of first release, ${FIRST_YEAR}–${latestYear}.`,
  },
  image: IMAGE_RULES,
  kind: { error: `one of ${ALBUM_KINDS.join(', ')}` },
})

const required = ['name'] as const

const artistId = Type.Integer({ format: 'int64', description: 'The artist who recorded it.', examples: [1] })

/** An album as the API returns it: unset fields are left out, never null. */
export const Album = Type.Object(
  { id: RECORD_ID, artistId, ...servedProperties(fields, required) },
  { description: 'An album of an artist.' },
)

/** An album as served and stored. */
export type Album = Static<typeof Album>

/** The body of album creation, with album years bounded by `latestYear` (next year, in the API). */
export const AlbumInput = (latestYear: number) =>
  Type.Object(
    {
      id: Type.Optional(
        Type.Union([Type.Integer(), Type.Null()], {
          description:
            'Ignored when adding an album (ids are assigned by the service); when replacing one, it must be absent (or null) or equal to the album id in the path.',
        }),
      ),
      ...acceptedProperties(fields, rules(latestYear), required),
    },
    {
      additionalProperties: false,
      description:
        'An album to add to the artist in the path, or to replace one with: fields left out (or null) are unset.',
      examples: [
        { name: 'Artaud', year: 1973 },
        { name: 'Clics modernos', year: 1983 },
        { name: 'Adiós Sui Generis', year: 1975, kind: 'live' },
      ],
    },
  )

/** What a client sends to add an album. */
export type AlbumInput = Static<ReturnType<typeof AlbumInput>>

/** The body of a merge patch (RFC 7396) of an album, with years bounded by `latestYear` as for a new album. */
export const AlbumPatch = (latestYear: number) =>
  Type.Object(
    {
      id: Type.Optional(
        Type.Union([Type.Integer(), Type.Null()], {
          description: 'Must be absent (or null) or equal to the album id in the path.',
        }),
      ),
      ...patchProperties(fields, rules(latestYear), required),
    },
    {
      additionalProperties: false,
      description:
        'Changes to an album, as a JSON merge patch (RFC 7396): a field sent replaces its value, null removes it (`name` cannot be removed), a field left out stays as it is.',
      examples: [{ year: 1973 }, { name: 'Artaud (remastered)', image: null }],
    },
  )

/** What a client sends to change some fields of an album. */
export type AlbumPatch = Static<ReturnType<typeof AlbumPatch>>

/** The fields of `album` with `patch` applied, as `albumFields` makes them of a whole body. */
export const patchedAlbum = (album: Album, patch: AlbumPatch): Omit<Album, 'id' | 'artistId'> =>
  albumFields(mergePatch(album, patch) as AlbumInput)

// What a stored album must be: what a client may send, but for the latest year, which moves on with time.
const storedRules = { ...rules(Number.MAX_SAFE_INTEGER), year: { minimum: FIRST_YEAR } }

/**
 * An album as a data file may hold it: files written by 0.1 builds hold null for unset fields
 * (src/model/upgrade.ts).
 */
export const StoredAlbum = Type.Object({
  id: STORED_ID,
  artistId: STORED_ID,
  ...storedProperties(fields, storedRules, required),
})

/**
 * The fields to store for a client's album: the name trimmed, null unset, `id` dropped (the store assigns it). Used
 * for the API's bodies and the seed file alike; the artist comes from elsewhere (the path, the seed file's nesting).
 */
export function albumFields({ name, year, image, kind }: Omit<AlbumInput, 'id'>): Omit<Album, 'id' | 'artistId'> {
  return { name: name.trim(), year: year ?? undefined, image: image ?? undefined, kind: kind ?? DEFAULT_KIND }
}

/** The kind of `album`: {@link DEFAULT_KIND} for one stored before kinds were kept. */
export const kindOf = (album: { kind?: AlbumKind | null }): AlbumKind => album.kind ?? DEFAULT_KIND
