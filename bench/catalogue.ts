import legends from '../data/legends.json' with { type: 'json' }
import type { CatalogueFile } from '../src/seed/seed.ts'

type Catalogue = (typeof CatalogueFile)['static']

/**
 * Writes a catalogue file (the `--seed=FILE` format) of `count` artists to `file`, cycling through the built-in
 * catalogue so that descriptions and album lists have realistic sizes; names get a ` #n` suffix. Resolves to the
 * number of albums written.
 */
export async function writeCatalogue(file: string, count: number): Promise<number> {
  const source: Catalogue['artists'] = legends.artists
  const artists = Array.from({ length: count }, (_, i) => {
    const artist = source[i % source.length] as Catalogue['artists'][number]
    return { ...artist, name: `${artist.name} #${i + 1}` }
  })
  const catalogue: Catalogue = { artists }
  await Bun.write(file, JSON.stringify(catalogue))
  return artists.reduce((albums, artist) => albums + (artist.albums?.length ?? 0), 0)
}
