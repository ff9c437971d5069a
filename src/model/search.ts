/**
 * How lists are searched and ordered, in the catalogue's own terms: a search ignores case and accents, and names
 * sort as a Spanish reader expects. Every store applies these rules, however it keeps its data.
 */
import { type AlbumKind, kindOf } from './album.ts'

/** The longest search text, in characters: the API refuses a longer one; the pages search for its start. */
export const MAX_SEARCH_LENGTH = 200

/** The orders of the artist list: by id (the default) or name, either way (`-` descending). */
export const ARTIST_SORTS = ['id', '-id', 'name', '-name'] as const
/** The orders of an artist's album list: by id (the default), year or name, either way. */
export const ALBUM_SORTS = ['id', '-id', 'year', '-year', 'name', '-name'] as const

/** An order of the artist list. */
export type ArtistSort = (typeof ARTIST_SORTS)[number]
/** An order of an album list. */
export type AlbumSort = (typeof ALBUM_SORTS)[number]

/** What a list is narrowed and ordered by: `q` is the text to find (empty finds everything). */
export interface ListQuery<S extends string> {
  q?: string
  sort?: S
}

/**
 * What an album list is narrowed by besides `q`: the years from `yearFrom` to `yearTo`, both included, either end
 * open when left out. An album without a year is outside every range: its year is unknown, not any year. `kind`
 * keeps the albums of that kind only (an album stored without one is a studio album).
 */
export interface AlbumQuery extends ListQuery<AlbumSort> {
  yearFrom?: number
  yearTo?: number
  kind?: AlbumKind
}

/** Whether `album` is of the kind `query` names (always, when it names none). */
export const ofKind = (album: { kind?: AlbumKind }, { kind }: AlbumQuery): boolean =>
  kind === undefined || kindOf(album) === kind

/** Whether `year` is in the range of `query` (always, when the query names no range). */
export function inYears(year: number | undefined, { yearFrom, yearTo }: AlbumQuery): boolean {
  if (yearFrom === undefined && yearTo === undefined) return true
  return year !== undefined && (yearFrom === undefined || year >= yearFrom) && (yearTo === undefined || year <= yearTo)
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
 * `text` as a search holds and looks for it, in every store: folded (see {@link fold}), and without U+0000. The API
 * refuses U+0000 in any field (STORABLE, src/model/rules.ts), but a seed file or older data may hold it; the document
 * store ends each field of its search text with it, and PostgreSQL's TEXT cannot hold it. So it counts for nothing on
 * either side of a search: a name `a\u0000b` is found by `ab`, and a query of U+0000 alone finds everything.
 */
export function searchable(text: string): string {
  return fold(text).replaceAll('\u0000', '')
}

// A tilde over an n makes the letter ñ, which Spanish orders after n and before o: in a key it is an n followed by
// the highest UTF-16 unit, so "ñandú" sorts after every "n…" and before "o".
const ENYE = /n\u0303/g
const DIGITS = /[0-9]+/g
const AFTER_EVERY_LETTER = '\uffff'

/**
 * The key names are ordered by: compared as plain strings (code unit by code unit, in JavaScript and in a database
 * alike), keys order names as a Spanish reader does. Case, accents and compatibility forms do not count (`Ávila`
 * comes before `Zeta`), `ñ` comes after `n`, and numbers compare by value (`Disco 2` before `Disco 10`: each run of
 * digits becomes its length in two digits, then the digits without leading zeros). Every store orders by this key,
 * so a list sorted by name is the same over the JSON file and over SQL.
 */
export function nameKey(name: string): string {
  return name
    .normalize('NFKD')
    .toLowerCase()
    .replace(ENYE, `n${AFTER_EVERY_LETTER}`)
    .replace(MARKS, '')
    .replace(DIGITS, (digits) => {
      const value = digits.replace(/^0+(?=.)/, '').slice(0, 99)
      return `${String(value.length).padStart(2, '0')}${value}`
    })
}

/** Compares two name keys (see {@link nameKey}). */
export const compareKeys = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)

/** Compares names as a Spanish reader orders them (see {@link nameKey}). */
export const compareNames = (a: string, b: string): number => compareKeys(nameKey(a), nameKey(b))
