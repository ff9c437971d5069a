import { notFound } from '../http/problem.ts'

// Ids past 2^53 are valid int64 but lose digits as numbers: name them only when exact.
const which = (kind: string, id: number) => (Number.isSafeInteger(id) ? `${kind} ${id}` : `${kind} with that id`)

/** 404 for an artist id that is well-formed but unknown. */
export const unknownArtist = (id: number) => notFound(`There is no ${which('artist', id)}.`)

/** 404 for an album that does not exist under the artist in the path. */
export const unknownAlbum = (artistId: number, albumId: number) =>
  notFound(`There is no ${which('album', albumId)} of ${which('artist', artistId)}.`)
