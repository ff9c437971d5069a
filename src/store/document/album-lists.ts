import type { Album } from '../../model/album.ts'
import { type AlbumSort, compareKeys, fold, type ListQuery, nameKey } from '../../model/search.ts'
import type { Page, Slice } from '../store.ts'

const folded = new WeakMap<Album, string>()

/** The album's name as a search compares it, folded once per record (records are replaced, never edited). */
function foldedName(album: Album): string {
  let name = folded.get(album)
  if (name === undefined) {
    name = fold(album.name)
    folded.set(album, name)
  }
  return name
}

// An album without a year comes after those with one, in either direction: it is the least known, not the oldest.
const byYear = (direction: 1 | -1) => (a: Album, b: Album) =>
  a.year === b.year ? a.id - b.id : a.year === undefined ? 1 : b.year === undefined ? -1 : direction * (a.year - b.year)

const orders: Record<Exclude<AlbumSort, 'id'>, (a: Album, b: Album) => number> = {
  year: byYear(1),
  '-year': byYear(-1),
  name: (a, b) => compareKeys(nameKey(a.name), nameKey(b.name)) || a.id - b.id,
}

/**
 * One page of `albums` (one artist's, in id order) matching `q` in their names, ignoring case and accents, in the
 * order `sort` names. An artist's albums are few, so this filters and sorts them on each request.
 */
export function listAlbums(
  albums: readonly Album[],
  { limit, offset }: Page,
  { q = '', sort = 'id' }: ListQuery<AlbumSort>,
): Slice<Album> {
  const needle = fold(q)
  let selected = needle === '' ? albums : albums.filter((album) => foldedName(album).includes(needle))
  if (sort !== 'id') selected = selected.toSorted(orders[sort])
  return { items: selected.slice(offset, offset + limit), total: selected.length }
}
