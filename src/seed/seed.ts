import { TypeCompiler } from '@sinclair/typebox/compiler'
import { t } from 'elysia'
import legends from '../../data/legends.json' with { type: 'json' }
import type { CatalogueEntry, Store } from '../store/store.ts'

const year = t.Integer({ minimum: 1900, maximum: 2100 })
const nullableText = (maxLength: number) => t.Union([t.String({ maxLength }), t.Null()])

/** The format of a catalogue file (`data/legends.json`, or the file given to `--seed=FILE`). */
export const CatalogueFile = t.Object(
  {
    artists: t.Array(
      t.Object(
        {
          name: t.String({ minLength: 1, maxLength: 200 }),
          description: t.Optional(nullableText(10_000)),
          band: t.Optional(nullableText(200)),
          image: t.Optional(nullableText(2048)),
          albums: t.Array(
            t.Object(
              {
                name: t.String({ minLength: 1, maxLength: 200 }),
                year: t.Optional(t.Union([year, t.Null()])),
                image: t.Optional(nullableText(2048)),
              },
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

/** Raised when a catalogue file cannot be read or does not match {@link CatalogueFile}. */
export class SeedError extends Error {
  override name = 'SeedError'
}

const check = TypeCompiler.Compile(CatalogueFile)

/** Validates a parsed catalogue file and normalises it into store entries; `source` names it in errors. */
export function parseCatalogue(value: unknown, source: string): CatalogueEntry[] {
  const errors = [...check.Errors(value)].slice(0, 5)
  if (errors.length > 0)
    throw new SeedError(
      `${source} is not a valid catalogue: ${errors.map((e) => `${e.path || '/'}: ${e.message}`).join('; ')}`,
    )
  return (value as typeof CatalogueFile.static).artists.map((artist) => ({
    name: artist.name,
    description: artist.description ?? null,
    band: artist.band ?? null,
    image: artist.image ?? null,
    albums: artist.albums.map((album) => ({ name: album.name, year: album.year ?? null, image: album.image ?? null })),
  }))
}

async function readCatalogue(source: true | string): Promise<CatalogueEntry[]> {
  if (source === true) return parseCatalogue(legends, 'the built-in catalogue')
  let value: unknown
  try {
    value = JSON.parse(await Bun.file(source).text())
  } catch (error) {
    throw new SeedError(`cannot read catalogue ${source}: ${(error as Error).message}`)
  }
  return parseCatalogue(value, source)
}

/** What seeding did. */
export type SeedOutcome = { seeded: true; artists: number; albums: number } | { seeded: false; reason: string }

/**
 * Loads the built-in catalogue (`true`) or a catalogue file into an empty store in one durable write. A store that
 * already holds data is left alone, so `--seed` is safe on every start.
 */
export async function seedStore(store: Store, source: true | string): Promise<SeedOutcome> {
  const catalogue = await readCatalogue(source)
  if (!store.isEmpty()) return { seeded: false, reason: 'the store already holds data' }
  return { seeded: true, ...(await store.load(catalogue)) }
}
