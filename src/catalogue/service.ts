import type { Album, Artist, Page, Store } from '../store/store.ts'

/** What a client sends to create or replace an artist. */
export interface ArtistFields {
  name: string
  description?: string | null
  image?: string | null
  band?: string | null
}

/** What a client sends to add an album. */
export interface AlbumFields {
  name: string
  year?: number | null
  image?: string | null
}

const artistRecord = (fields: ArtistFields) => ({
  name: fields.name.trim(),
  description: fields.description ?? null,
  image: fields.image ?? null,
  band: fields.band?.trim() || null,
})

/** The catalogue's rules over a store. Not-found answers are `undefined`; the routes decide what they mean. */
export class Catalogue {
  /** A catalogue over `store`. */
  constructor(private readonly store: Store) {}

  /** One page of artists in id order. */
  listArtists(page: Page) {
    return this.store.artists.list(page)
  }

  /** The artist with `id`. */
  getArtist(id: number): Artist | undefined {
    return this.store.artists.get(id)
  }

  /** Adds an artist; the id is assigned here, whatever the client sent. */
  createArtist(fields: ArtistFields): Promise<Artist> {
    return this.store.artists.insert(artistRecord(fields))
  }

  /** Replaces every field of artist `id`; fields left out become null. No upsert: `undefined` if it is unknown. */
  replaceArtist(id: number, fields: ArtistFields): Promise<Artist | undefined> {
    return this.store.artists.replace({ id, ...artistRecord(fields) })
  }

  /** One page of the albums of artist `artistId` in id order, or `undefined` when the artist is unknown. */
  listAlbums(artistId: number, page: Page) {
    return this.store.albums.listByArtist(artistId, page)
  }

  /** Album `albumId` of artist `artistId`. */
  getAlbum(artistId: number, albumId: number): Album | undefined {
    const album = this.store.albums.get(albumId)
    return album?.artistId === artistId ? album : undefined
  }

  /** Adds an album to artist `artistId`, or `undefined` when the artist is unknown. */
  createAlbum(artistId: number, fields: AlbumFields): Promise<Album | undefined> {
    return this.store.albums.insert({
      artistId,
      name: fields.name.trim(),
      year: fields.year ?? null,
      image: fields.image ?? null,
    })
  }
}
