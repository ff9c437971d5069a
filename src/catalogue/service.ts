import { type AlbumInput, albumFields } from '../model/album.ts'
import { type ArtistInput, artistFields } from '../model/artist.ts'
import { InvalidFieldError, NotFoundError } from '../model/errors.ts'
import type { AlbumSort, ArtistSort, ListQuery } from '../model/search.ts'
import type { Album, Artist, Page, Slice, Store } from '../store/store.ts'

// Ids past 2^53 are valid int64 but lose digits as numbers: name them only when exact.
const which = (kind: string, id: number) => (Number.isSafeInteger(id) ? `${kind} ${id}` : `${kind} with that id`)

const unknownArtist = (id: number) => new NotFoundError(`There is no ${which('artist', id)}.`)

/**
 * The catalogue's rules over a store. It speaks in records and domain refusals ({@link NotFoundError} for an unknown
 * artist or album, {@link InvalidFieldError} for a body that contradicts its path); the routes turn neither into HTTP.
 */
export class Catalogue {
  /** A catalogue over `store`. */
  constructor(private readonly store: Store) {}

  /** One page of the artists matching `query.q` by name or band, in `query.sort` order (id by default). */
  listArtists(page: Page, query: ListQuery<ArtistSort> = {}): Promise<Slice<Artist>> {
    return this.store.artists.list(page, query)
  }

  /** The artist with `id`. */
  getArtist(id: number): Promise<Artist> {
    // A `then`, not an async function: the busiest route pays for one promise less.
    return this.store.artists.get(id).then((artist) => {
      if (!artist) throw unknownArtist(id)
      return artist
    })
  }

  /** Adds an artist; the id is assigned here, whatever the client sent. */
  createArtist(input: ArtistInput): Promise<Artist> {
    return this.store.artists.insert(artistFields(input))
  }

  /**
   * Replaces every field of artist `id`: fields left out become unset. An `id` in the body must be absent or equal
   * to `id`. No upsert: an unknown artist is not found.
   */
  async replaceArtist(id: number, input: ArtistInput): Promise<Artist> {
    if (input.id !== undefined && input.id !== null && input.id !== id)
      throw new InvalidFieldError('/id', `must be absent or equal to the artist id in the path (${id})`)
    const artist = await this.store.artists.replace({ id, ...artistFields(input) })
    if (!artist) throw unknownArtist(id)
    return artist
  }

  /** One page of the albums of artist `artistId` matching `query.q` by name, in `query.sort` order (id by default). */
  async listAlbums(artistId: number, page: Page, query: ListQuery<AlbumSort> = {}): Promise<Slice<Album>> {
    const slice = await this.store.albums.listByArtist(artistId, page, query)
    if (!slice) throw unknownArtist(artistId)
    return slice
  }

  /** Album `albumId` of artist `artistId`. */
  async getAlbum(artistId: number, albumId: number): Promise<Album> {
    const album = await this.store.albums.get(albumId)
    if (album?.artistId !== artistId)
      throw new NotFoundError(`There is no ${which('album', albumId)} of ${which('artist', artistId)}.`)
    return album
  }

  /** Adds an album to artist `artistId`. */
  async createAlbum(artistId: number, input: AlbumInput): Promise<Album> {
    const album = await this.store.albums.insert({ artistId, ...albumFields(input) })
    if (!album) throw unknownArtist(artistId)
    return album
  }
}
