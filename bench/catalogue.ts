import legends from '../data/legends.json' with { type: 'json' }
import type { CatalogueFile } from '../src/seed/seed.ts'

type Catalogue = CatalogueFile['static']

/** Albums per generated artist. */
const ALBUMS_PER_ARTIST = 5
/** The longest generated description, in characters: realistic but short. */
const DESCRIPTION_LENGTH = 150

/** `text` cut at the last word boundary within {@link DESCRIPTION_LENGTH} characters, with an ellipsis if cut. */
function shorten(text: string): string {
  if (text.length <= DESCRIPTION_LENGTH) return text
  const cut = text.slice(0, text.lastIndexOf(' ', DESCRIPTION_LENGTH - 1))
  return `${cut.replace(/[\s,;:.]+$/, '')}…`
}

/**
 * Writes a catalogue file (the `--seed=FILE` format) of `count` artists to `file`, cycling through the built-in
 * catalogue: names get a ` #n` suffix, descriptions are cut to about 150 characters and each artist gets 5 of its
 * albums (repeated when it has fewer). Resolves to the number of albums written.
 */
export async function writeCatalogue(file: string, count: number): Promise<number> {
  // The JSON module types `kind` as any string; the file is checked against the model by test/seed/legends.test.ts.
  const source = legends.artists as Catalogue['artists']
  const artists = Array.from({ length: count }, (_, i) => {
    const artist = source[i % source.length] as Catalogue['artists'][number]
    const albums = Array.from(
      { length: ALBUMS_PER_ARTIST },
      (_, j) => artist.albums[j % artist.albums.length] as Catalogue['artists'][number]['albums'][number],
    )
    const description = artist.description ? shorten(artist.description) : artist.description
    return { ...artist, name: `${artist.name} #${i + 1}`, description, albums }
  })
  const catalogue: Catalogue = { artists }
  await Bun.write(file, JSON.stringify(catalogue))
  return count * ALBUMS_PER_ARTIST
}
