import type { Artist } from '../../model/artist.ts'
import { type ArtistSort, compareKeys, type ListQuery, nameKey, searchable } from '../../model/search.ts'
import type { Page, Slice } from '../store.ts'

// Ends each name and band in the search text, so that no match runs from one into the next. Searchable text never
// holds it (`searchable` removes it from names and queries alike).
const END = '\u0000'

/** What a search finds an artist by: name and band as `searchable` makes them, each ended by {@link END}. */
const searchText = (artist: Artist) => `${searchable(artist.name)}${END}${searchable(artist.band ?? '')}${END}`

const keys = new WeakMap<Artist, string>()

/** The artist's name key (see `nameKey`), made once per record (records are replaced, never edited). */
function keyOf(artist: Artist): string {
  let key = keys.get(artist)
  if (key === undefined) {
    key = nameKey(artist.name)
    keys.set(artist, key)
  }
  return key
}

const byNameThenId = (a: Artist, b: Artist) => compareKeys(keyOf(a), keyOf(b)) || a.id - b.id

// Past this many matches, a search ordered by name walks the name order once instead of sorting the matches.
const SORT_MATCHES_UP_TO = 2048

/**
 * The artist list beyond plain id order: search by name or band, and order by name. Both are built on the first
 * list that needs them and then kept up to date by every write the store reports (see `appended`, `replaced`), so a
 * search over 100,000 artists is one native substring scan of one string, not 100,000 comparisons
 * (bench/search.ts).
 */
export class ArtistLists {
  /** Every artist's search text, in id order, and where each starts in it. */
  private search: { text: string; starts: number[] } | undefined
  /** Every artist, in name order. */
  private byName: Artist[] | undefined
  private readonly texts = new WeakMap<Artist, string>()

  /** Lists over `records`, the store's artists in id order (read anew each time: a restore replaces the array). */
  constructor(private readonly records: () => readonly Artist[]) {}

  /** Forgets what was built: the records changed wholesale (a rollback or a restore). */
  reset(): void {
    this.search = undefined
    this.byName = undefined
  }

  /** Records a new artist, which has the highest id. */
  appended(artist: Artist): void {
    if (this.search) {
      this.search.starts.push(this.search.text.length)
      this.search.text += this.textOf(artist)
    }
    if (this.byName) this.byName.splice(this.namePosition(artist), 0, artist)
  }

  /** Records that `previous` was replaced by `artist` (same id). */
  replaced(previous: Artist, artist: Artist): void {
    // Rebuilding the text costs one join; editing the middle of a string would cost the same.
    if (this.textOf(previous) !== this.textOf(artist)) this.search = undefined
    if (this.byName) {
      this.byName.splice(this.namePosition(previous), 1)
      this.byName.splice(this.namePosition(artist), 0, artist)
    }
  }

  /**
   * One page of the artists matching `q` (all of them when empty), in the order `sort` names (id by default). A
   * descending order is its ascending one read from the end: no list is sorted for it.
   */
  list({ limit, offset }: Page, { q = '', sort = 'id' }: ListQuery<ArtistSort>): Slice<Artist> {
    const needle = searchable(q)
    const reversed = sort.startsWith('-')
    const byName = sort === 'name' || sort === '-name'
    let ordered: readonly Artist[]
    if (needle === '') ordered = byName ? this.nameOrder() : this.records()
    else {
      const found = this.find(needle)
      if (!byName) ordered = found
      else if (found.length <= SORT_MATCHES_UP_TO) ordered = found.sort(byNameThenId)
      else {
        // Flags by id: a walk of the name order with one array read per artist. Ids are counters, so the array is
        // about as long as the list; a data file whose ids jump far ahead gets a set instead.
        const lastId = this.records().at(-1)?.id ?? 0
        if (lastId <= 4 * found.length + 65_536) {
          const matching = new Uint8Array(lastId + 1)
          for (const artist of found) matching[artist.id] = 1
          ordered = this.nameOrder().filter((artist) => matching[artist.id] === 1)
        } else {
          const matching = new Set(found)
          ordered = this.nameOrder().filter((artist) => matching.has(artist))
        }
      }
    }
    const total = ordered.length
    if (!reversed) return { items: ordered.slice(offset, offset + limit), total }
    const end = Math.max(total - offset, 0)
    return { items: ordered.slice(Math.max(end - limit, 0), end).reverse(), total }
  }

  private textOf(artist: Artist): string {
    let text = this.texts.get(artist)
    if (text === undefined) {
      text = searchText(artist)
      this.texts.set(artist, text)
    }
    return text
  }

  private nameOrder(): Artist[] {
    this.byName ??= this.records().slice().sort(byNameThenId)
    return this.byName
  }

  /** Where `artist` is, or would go, in name order: a binary search. */
  private namePosition(artist: Artist): number {
    const order = this.nameOrder()
    let low = 0
    let high = order.length
    while (low < high) {
      const middle = (low + high) >>> 1
      if (byNameThenId(order[middle] as Artist, artist) < 0) low = middle + 1
      else high = middle
    }
    return low
  }

  /** The artists whose search text holds `needle`, in id order. */
  private find(needle: string): Artist[] {
    const records = this.records()
    if (!this.search) {
      const texts = records.map((artist) => this.textOf(artist))
      const starts: number[] = new Array(texts.length)
      let at = 0
      for (let i = 0; i < texts.length; i++) {
        starts[i] = at
        at += (texts[i] as string).length
      }
      this.search = { text: texts.join(''), starts }
    }
    const { text, starts } = this.search
    const found: Artist[] = []
    let record = 0
    let from = 0
    for (;;) {
      const at = text.indexOf(needle, from)
      if (at < 0) break
      // Matches come in increasing order, so the record that holds each is found by walking forward.
      while (record + 1 < starts.length && (starts[record + 1] as number) <= at) record++
      found.push(records[record] as Artist)
      from = record + 1 < starts.length ? (starts[record + 1] as number) : text.length
    }
    return found
  }
}
