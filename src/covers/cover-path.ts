/** What a cover pictures. */
export type CoverKind = 'artist' | 'album'

/** Where this server serves the generated cover of a record: `/covers/artists/1.svg`, `/covers/albums/7.svg`. */
export const coverPath = (kind: CoverKind, id: number): string => `/covers/${kind}s/${id}.svg`
