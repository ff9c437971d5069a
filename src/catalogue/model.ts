// TypeBox's Integer, not Elysia's t.Integer: the latter also accepts numeric strings such as "1973".
import { Type } from '@sinclair/typebox'
import { t } from 'elysia'
import { IntegerParam } from '../http/integer-param.ts'

const IMAGE_RULE = 'an absolute http(s) URL or a path on this server (starting with one /), at most 2048 characters'

/** Text that must not be blank; trimmed by the service before it is stored. */
const Name = (description: string, examples: string[]) =>
  t.String({
    minLength: 1,
    maxLength: 200,
    pattern: '\\S',
    description,
    examples,
    error: 'a string of 1–200 characters, not blank',
  })

const Image = t.Union(
  [t.String({ maxLength: 2048, pattern: '^(?:https?://[^\\s/?#]+[^\\s]*|/(?!/)[^\\s]*)$' }), t.Null()],
  {
    description: `Picture: ${IMAGE_RULE}, or null.`,
    error: `${IMAGE_RULE}, or null`,
  },
)

const nullable = <S extends ReturnType<typeof t.String>>(schema: S, description: string) =>
  t.Union([schema, t.Null()], { description })

/** `artistId` in paths: a positive int64. */
export const ArtistIdParams = t.Object({
  artistId: IntegerParam({ minimum: 1, description: 'The id of the artist (a positive int64).' }),
})

/** An artist as the API returns it. */
export const Artist = t.Object(
  {
    id: Type.Integer({ format: 'int64', description: 'Assigned by the service; never reused.', examples: [1] }),
    name: t.String({ description: 'The artist as they are known.', examples: ['Charly García'] }),
    description: t.Union([t.String(), t.Null()], { description: 'A few sentences about the artist.' }),
    image: t.Union([t.String(), t.Null()], { description: 'A picture: an http(s) URL or a path on this server.' }),
    band: t.Union([t.String(), t.Null()], { description: 'The band the artist is most associated with.' }),
  },
  { description: 'A legend of Argentine rock.' },
)

/** The body of create and update: every field of an artist but `id`, which is optional and read-only. */
export const ArtistInput = t.Object(
  {
    id: t.Optional(
      Type.Integer({ description: 'Ignored on create; on update it must be absent or equal to the path id.' }),
    ),
    name: Name('The artist as they are known.', ['Luis Alberto Spinetta']),
    description: t.Optional(
      nullable(t.String({ maxLength: 10_000 }), 'A few sentences about the artist, at most 10,000 characters.'),
    ),
    image: t.Optional(Image),
    band: t.Optional(nullable(t.String({ maxLength: 200 }), 'The band most associated with the artist.')),
  },
  {
    additionalProperties: false,
    description: 'An artist to add or to replace with; fields left out are null.',
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

/** An album as the API returns it. */
export const Album = t.Object(
  {
    id: Type.Integer({ format: 'int64', description: 'Assigned by the service; never reused.', examples: [1] }),
    artistId: Type.Integer({ format: 'int64', description: 'The artist who recorded it.', examples: [1] }),
    name: t.String({ description: 'The title, as released.', examples: ['Artaud'] }),
    year: t.Union([Type.Integer(), t.Null()], { description: 'Year of first release.', examples: [1973] }),
    image: t.Union([t.String(), t.Null()], { description: 'A cover: an http(s) URL or a path on this server.' }),
  },
  { description: 'An album of an artist.' },
)

/** The body of album creation; `year` may be from 1900 to next year. */
export const AlbumInput = (latestYear: number) =>
  t.Object(
    {
      id: t.Optional(Type.Integer({ description: 'Ignored: ids are assigned by the service.' })),
      name: Name('The title, as released.', ['Artaud']),
      year: t.Optional(
        t.Union([Type.Integer({ minimum: 1900, maximum: latestYear }), t.Null()], {
          description: `Year of first release, 1900–${latestYear}, or null.`,
        }),
      ),
      image: t.Optional(Image),
    },
    {
      additionalProperties: false,
      description: 'An album to add to the artist in the path.',
      examples: [
        { name: 'Artaud', year: 1973 },
        { name: 'Clics modernos', year: 1983 },
      ],
    },
  )
