import { type TypeCheck, TypeCompiler } from '@sinclair/typebox/compiler'
import { type ValueError, ValueErrorType } from '@sinclair/typebox/errors'
import { type TSchema, t } from 'elysia'
import { AlbumInput, albumFields } from '../model/album.ts'
import { ArtistInput, artistFields } from '../model/artist.ts'
import type { CatalogueEntry } from '../model/catalogue.ts'
import { describeSchema, type SchemaLike } from '../model/field-detail.ts'
import { SeedError } from './seed-error.ts'

/** How many problems a rejected file lists: enough to fix several at once, few enough to read. */
const MAX_PROBLEMS = 10

/**
 * Where an editor's facts come from, beside an artist or album of a catalogue file: `sources` (the pages or books
 * checked, at least one, each non-blank) and a free-text `note` (say, how disagreeing sources were settled). The
 * reader accepts and then drops them: they are never stored, nor served by the API.
 */
const editorialProperties = {
  sources: t.Optional(
    t.Array(t.String({ minLength: 1, pattern: '\\S', error: 'a non-blank string' }), {
      minItems: 1,
      error: 'a list of at least one source, each a non-blank string',
      description: 'The sources that confirm the entry: URLs, or titles.',
    }),
  ),
  note: t.Optional(
    t.String({ minLength: 1, pattern: '\\S', error: 'a non-blank string', description: 'An editor’s note.' }),
  ),
}

/**
 * The format of a catalogue file (`data/legends.json`, or the file of `--seed=FILE`): `{ "artists": [...] }`, each
 * artist the API's own create body (so the same rules: non-blank names, years up to `latestYear`, image URLs or
 * paths) plus its `albums`, each the API's album body. Ids are not part of it: the store assigns them. Artists and
 * albums may also carry the editorial `sources` and `note`, which go no further than this reader.
 */
export const catalogueFileSchema = (latestYear: number) =>
  t.Object(
    {
      artists: t.Array(
        t.Object(
          {
            ...t.Omit(ArtistInput, ['id']).properties,
            ...editorialProperties,
            albums: t.Array(
              t.Object(
                { ...t.Omit(AlbumInput(latestYear), ['id']).properties, ...editorialProperties },
                { additionalProperties: false },
              ),
            ),
          },
          { additionalProperties: false },
        ),
      ),
    },
    { additionalProperties: false },
  )

/**
 * The schema of the catalogue file format ({@link catalogueFileSchema}); `CatalogueFile['static']` is its type. A type
 * only: the schema itself is made when a catalogue is read, never at start-up.
 */
export type CatalogueFile = ReturnType<typeof catalogueFileSchema>

/** A catalogue file as parsed, once valid. */
export type CatalogueFileData = ReturnType<typeof catalogueFileSchema>['static']

const compiled = new Map<number, TypeCheck<ReturnType<typeof catalogueFileSchema>>>()
/** The compiled check for `latestYear`, compiled once: a start-up cost worth paying only once per year bound. */
function checkerFor(latestYear: number) {
  const check = compiled.get(latestYear) ?? TypeCompiler.Compile(catalogueFileSchema(latestYear))
  compiled.set(latestYear, check)
  return check
}

/** What is wrong at one place, worded like the API's own validation errors. */
function detail(error: ValueError): string {
  if (error.type === ValueErrorType.ObjectRequiredProperty) return 'is required'
  if (error.type === ValueErrorType.ObjectAdditionalProperties) {
    const known = Object.keys((error.schema as TSchema).properties ?? {}).join(', ')
    return `is not a known property (known: ${known})`
  }
  return `must be ${describeSchema(error.schema as SchemaLike)}`
}

/** One `SOURCE: /json/pointer: problem` line per invalid place, at most {@link MAX_PROBLEMS}, and a line if more. */
function problemLines(errors: Iterable<ValueError>, source: string): string[] {
  const lines: string[] = []
  const seen = new Set<string>()
  for (const error of errors) {
    // TypeBox reports a missing property twice (required, then wrong type): keep the first, clearer one.
    if (seen.has(error.path)) continue
    seen.add(error.path)
    if (lines.length === MAX_PROBLEMS) return [...lines, `${source}: (more problems not shown)`]
    lines.push(`${source}: ${error.path || '(root)'}: ${detail(error)}`)
  }
  return lines
}

/**
 * The store entries of a valid file, normalised as the API normalises a create body. `image` is kept as written:
 * absent, the store gives the record its generated cover; null, the record has no picture. The editorial `sources`
 * and `note` are dropped here, so nothing past the reader ever sees them.
 */
function toEntries(file: CatalogueFileData): CatalogueEntry[] {
  return file.artists.map(({ albums, sources: _sources, note: _note, ...artist }) => ({
    ...artistFields(artist),
    image: artist.image,
    albums: albums.map(({ sources: _albumSources, note: _albumNote, ...album }) => ({
      ...albumFields(album),
      image: album.image,
    })),
  }))
}

/**
 * Validates a parsed catalogue file and turns it into store entries. Throws a {@link SeedError} whose message names
 * `source` and lists each problem by JSON Pointer. `latestYear` bounds album years, as in the API (next year).
 */
export function parseCatalogue(
  value: unknown,
  source: string,
  latestYear = new Date().getUTCFullYear() + 1,
): CatalogueEntry[] {
  const check = checkerFor(latestYear)
  if (check.Check(value)) return toEntries(value)
  const lines = problemLines(check.Errors(value), source)
  throw new SeedError(`${source} is not a valid catalogue:\n${lines.join('\n')}`)
}
