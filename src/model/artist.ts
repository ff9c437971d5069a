/**
 * The artist: the one model from which the API's response and request body, the seed file's reader, the data file's
 * check and the documentation derive.
 */
import { type Static, Type } from '@sinclair/typebox'
import { acceptedProperties, mergePatch, patchProperties, servedProperties, storedProperties } from './form.ts'
import { IMAGE_RULES, NAME_RULES, RECORD_ID, STORED_ID, TEXT_RULES } from './rules.ts'

/** Each field of an artist, as served and documented. */
const fields = {
  name: Type.String({ description: 'The artist as they are known.', examples: ['Charly García'] }),
  description: Type.String({ description: 'A few sentences about the artist.' }),
  image: Type.String({ description: 'A picture: an absolute http(s) URL or a path on this server.' }),
  band: Type.String({ description: 'The band the artist is most associated with.' }),
}

/** What a client's value must also be, field by field. */
const rules = {
  name: { ...NAME_RULES, examples: ['Luis Alberto Spinetta'] },
  description: {
    ...TEXT_RULES,
    maxLength: 10_000,
    description: 'A few sentences about the artist, at most 10,000 characters.',
  },
  image: IMAGE_RULES,
  band: {
    ...TEXT_RULES,
    maxLength: 200,
    description: 'The band most associated with the artist, at most 200 characters.',
  },
}

const required = ['name'] as const

/** An artist as the API returns it: unset fields are left out, never null. */
export const Artist = Type.Object(
  { id: RECORD_ID, ...servedProperties(fields, required) },
  { description: 'A legend of Argentine rock.' },
)

/** An artist as served and stored. */
export type Artist = Static<typeof Artist>

/** The body of create and update: every field of an artist, and an `id` that is optional and read-only. */
export const ArtistInput = Type.Object(
  {
    id: Type.Optional(
      Type.Union([Type.Integer(), Type.Null()], {
        description: 'Ignored on create; on update it must be absent (or null) or equal to the path id.',
      }),
    ),
    ...acceptedProperties(fields, rules, required),
  },
  {
    additionalProperties: false,
    description: 'An artist to add, or to replace one with: fields left out (or null) are unset.',
    // Shown as ready-to-send bodies in the interactive documentation.
    examples: [
      {
        name: 'Charly García',
        description: 'Pianist, singer and songwriter; one of the most influential musicians of Argentine rock.',
        band: 'Serú Girán',
      },
      {
        name: 'María Gabriela Epumer',
        description: 'Guitarist and singer, from Viudas e Hijas de Roque Enroll to Charly García’s band.',
        band: 'Viudas e Hijas de Roque Enroll',
      },
    ],
  },
)

/** What a client sends to create or replace an artist. */
export type ArtistInput = Static<typeof ArtistInput>

/** The body of a merge patch (RFC 7396) of an artist: the fields to change, null for those to remove. */
export const ArtistPatch = Type.Object(
  {
    id: Type.Optional(
      Type.Union([Type.Integer(), Type.Null()], {
        description: 'Must be absent (or null) or equal to the artist id in the path.',
      }),
    ),
    ...patchProperties(fields, rules, required),
  },
  {
    additionalProperties: false,
    description:
      'Changes to an artist, as a JSON merge patch (RFC 7396): a field sent replaces its value, null removes it (`name`, which every artist has, cannot be removed), a field left out stays as it is.',
    examples: [{ band: 'Invisible' }, { description: 'Guitarist, singer and poet.', image: null }],
  },
)

/** What a client sends to change some fields of an artist. */
export type ArtistPatch = Static<typeof ArtistPatch>

/** The fields of `artist` with `patch` applied, as `artistFields` makes them of a whole body (trimmed, blank band unset). */
export const patchedArtist = (artist: Artist, patch: ArtistPatch): Omit<Artist, 'id'> =>
  artistFields(mergePatch(artist, patch) as ArtistInput)

/**
 * An artist as a data file may hold it: files written by 0.1 builds hold null for unset fields
 * (src/model/upgrade.ts).
 */
export const StoredArtist = Type.Object({ id: STORED_ID, ...storedProperties(fields, rules, required) })

/**
 * The fields to store for a client's artist: the name and band trimmed, a blank band unset, null unset, `id`
 * dropped (the store assigns it). Used for the API's bodies and the seed file alike.
 */
export function artistFields({ name, description, image, band }: Omit<ArtistInput, 'id'>): Omit<Artist, 'id'> {
  return {
    name: name.trim(),
    description: description ?? undefined,
    image: image ?? undefined,
    band: band?.trim() || undefined,
  }
}
