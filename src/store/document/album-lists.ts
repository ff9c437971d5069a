import type { Album } from '../../model/album.ts'
import {
  type AlbumQuery,
  type AlbumSort,
  compareKeys,
  inYears,
  nameKey,
  ofKind,
  searchable,
} from '../../model/search.ts'
import type { Page, Slice } from '../store.ts'

const folded = new WeakMap<Album, string>()

/** The album's name as a search compares it (`searchable`), made once per record (records are replaced, never edited). */
function foldedName(album: Album): string {
  let name = folded.get(album)
  if (name === undefined) {
    name = searchable(album.name)
    folded.set(album, name)
  }
  return name
}

const keys = new WeakMap<Album, string>()

/** The album's name key (see `nameKey`), made once per record (records are replaced, never edited). */
function keyOf(album: Album): string {
  let key = keys.get(album)
  if (key === undefined) {
    key = nameKey(album.name)
    keys.set(album, key)
  }
  return key
}

// An album without a year comes after those with one, in either direction: it is the least known, not the oldest.
const byYear = (direction: 1 | -1) => (a: Album, b: Album) =>
  a.year === b.year ? a.id - b.id : a.year === undefined ? 1 : b.year === undefined ? -1 : direction * (a.year - b.year)

type Order = Exclude<AlbumSort, 'id'>

const orders: Record<Order, (a: Album, b: Album) => number> = {
  '-id': (a, b) => b.id - a.id,
  year: byYear(1),
  '-year': byYear(-1),
  name: (a, b) => compareKeys(keyOf(a), keyOf(b)) || a.id - b.id,
  // The name order reversed, ties included, as the artists' `-name` is.
  '-name': (a, b) => compareKeys(keyOf(b), keyOf(a)) || b.id - a.id,
}

/** The orders of one artist's albums sorted so far, for the list as long as `length`. */
interface Sorted {
  length: number
  orders: Partial<Record<Order, readonly Album[]>>
}

const sorted = new WeakMap<readonly Album[], Sorted>()

/**
 * `albums` in `order`, sorted once and kept while the list is unchanged. An artist's list only grows in place (a
 * replaced or removed album gives the artist a new list, as a restore or a rollback does: records.ts), so its length
 * tells whether a kept order is current; a change costs one sort at the next list that needs it.
 */
function inOrder(albums: readonly Album[], order: Order): readonly Album[] {
  let kept = sorted.get(albums)
  if (kept?.length !== albums.length) {
    kept = { length: albums.length, orders: {} }
    sorted.set(albums, kept)
  }
  let ordered = kept.orders[order]
  if (ordered === undefined) {
    ordered = [...albums].sort(orders[order])
    kept.orders[order] = ordered
  }
  return ordered
}

/**
 * One page of `albums` (one artist's, in id order) matching `q` in their names, ignoring case and accents, and in
 * the query's range of years and of its kind, in the order `sort` names. Folded names and name keys are made once per record, and
 * each order once per state of the list, so a request filters at most (one scan of the artist's albums) and never
 * sorts the same list again.
 */
export function listAlbums(albums: readonly Album[], { limit, offset }: Page, query: AlbumQuery): Slice<Album> {
  const { q = '', sort = 'id' } = query
  const needle = searchable(q)
  const ordered = sort === 'id' ? albums : inOrder(albums, sort)
  const ranged = query.yearFrom !== undefined || query.yearTo !== undefined
  // Filtering an ordered list keeps its order: the matches need no sort of their own.
  const selected =
    needle === '' && !ranged && query.kind === undefined
      ? ordered
      : ordered.filter(
          (album) =>
            (needle === '' || foldedName(album).includes(needle)) && inYears(album.year, query) && ofKind(album, query),
        )
  return { items: selected.slice(offset, offset + limit), total: selected.length }
}
