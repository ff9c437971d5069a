/**
 * How lists are searched and ordered, in the catalogue's own terms: a search ignores case and accents, and names
 * sort as a Spanish reader expects. Every store applies these rules, however it keeps its data.
 */

/** The orders of the artist list: by id (the default), by name, by name descending. */
export const ARTIST_SORTS = ['id', 'name', '-name'] as const
/** The orders of an artist's album list: by id (the default), by year either way, by name. */
export const ALBUM_SORTS = ['id', 'year', '-year', 'name'] as const

/** An order of the artist list. */
export type ArtistSort = (typeof ARTIST_SORTS)[number]
/** An order of an album list. */
export type AlbumSort = (typeof ALBUM_SORTS)[number]

/** What a list is narrowed and ordered by: `q` is the text to find (empty finds everything). */
export interface ListQuery<S extends string> {
  q?: string
  sort?: S
}

const MARKS = /\p{M}/gu

/**
 * `text` as a search compares it: compatibility forms unified (full-width letters, ligatures), accents and other
 * marks removed, lower case. `García`, `GARCIA` and `garcía` all fold to `garcia`; `Serú` and `Seru` to `seru`.
 */
export function fold(text: string): string {
  return text.normalize('NFKD').replace(MARKS, '').toLowerCase()
}

/**
 * Compares names as a Spanish reader orders them: case and accents do not count (`Ávila` comes before `Zeta`), `ñ`
 * comes after `n`, and numbers in names compare by value.
 */
export const compareNames: (a: string, b: string) => number = new Intl.Collator('es', {
  sensitivity: 'base',
  numeric: true,
}).compare
