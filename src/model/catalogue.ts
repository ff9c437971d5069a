/** A catalogue to load in one write (the seed, a fixture's state): artists with their albums, without ids. */
import type { Album } from './album.ts'
import type { Artist } from './artist.ts'
import type { New } from './form.ts'

/**
 * An album of a {@link CatalogueEntry}. An absent `image` may be filled in by `load` (see `LoadOptions`); a null one
 * stays unset.
 */
export interface CatalogueAlbum extends Omit<New<Album>, 'artistId' | 'image'> {
  image?: string | null
}

/** An artist with its albums, as a catalogue to load in one write (the seed); `image` as for albums. */
export interface CatalogueEntry extends Omit<New<Artist>, 'image'> {
  image?: string | null
  albums: CatalogueAlbum[]
}
