/**
 * The version of a stored artist or album, as an HTTP entity tag: a digest of the record's stored content. Both stores
 * compute it with this one function, from what they hold, so every replica over one database gives the same tag for
 * the same record, and a restart changes nothing. A tag names content, not a moment: ids are reused after a reset
 * (which restores the id counters) and a reset brings old records back, so a counter per record would give one tag to
 * two different contents; a digest never does (short of a SHA-256 collision), whatever was reset or restored.
 *
 * A replacement that changes nothing keeps the tag: a client whose `If-Match` names it has read exactly what is
 * stored, so its write loses nobody's change.
 */

import { sha256 } from '#runtime'
import type { Album } from '../model/album.ts'
import type { Artist } from '../model/artist.ts'

const tags = new WeakMap<object, string>()

// The first 132 bits of SHA-256, in base64url: 22 characters, none of which needs quoting in a header.
const digest = (text: string) => sha256(text, 'base64url').slice(0, 22)

/**
 * The tag of `record`, computed from `content` (its fields in a fixed order, unset ones as null, so that neither the
 * order of a record's properties nor undefined against absent changes it) and kept while the record lives: stored
 * records are never edited in place (store.ts), so it cannot go stale.
 */
function tagOf(record: object, content: () => unknown[]): string {
  let tag = tags.get(record)
  if (tag === undefined) {
    tag = `"${digest(JSON.stringify(content()))}"`
    tags.set(record, tag)
  }
  return tag
}

/** The strong entity tag of an artist as stored, quotes included: `"q3ZCr0Yd…"`. */
export const artistTag = (artist: Artist): string =>
  tagOf(artist, () => [
    'artist',
    artist.id,
    artist.name,
    artist.description ?? null,
    artist.image ?? null,
    artist.band ?? null,
  ])

/** The strong entity tag of an album as stored, quotes included. */
export const albumTag = (album: Album): string =>
  tagOf(album, () => ['album', album.id, album.artistId, album.name, album.year ?? null, album.image ?? null])

/**
 * What a conditional write asks of the target record's current tag (RFC 9110, 13.1.1 and 13.1.2), for the store to
 * check in the same step as the write: `ifMatch` holds when the tag is one of its strong tags (or it is `*`: any
 * current record); `ifNoneMatch` holds when the tag is none of its tags, compared weakly (never when it is `*`: a
 * record exists). Tags are given as quoted opaque tags (`"abc"`), without `W/`: the caller drops weak ones from
 * `ifMatch`, where they never match, and strips the prefix in `ifNoneMatch`, where it does not count.
 */
export interface Precondition {
  readonly ifMatch?: '*' | readonly string[]
  readonly ifNoneMatch?: '*' | readonly string[]
}

/** Whether `condition` (none: always) holds for a record whose current strong tag is `tag`. */
export function holds(condition: Precondition | undefined, tag: string): boolean {
  if (!condition) return true
  const { ifMatch, ifNoneMatch } = condition
  if (ifMatch !== undefined && ifMatch !== '*' && !ifMatch.includes(tag)) return false
  if (ifNoneMatch !== undefined && (ifNoneMatch === '*' || ifNoneMatch.includes(tag))) return false
  return true
}

/** The tag of a stored artist or album. */
export const recordTag = (record: Artist | Album): string =>
  'artistId' in record ? albumTag(record) : artistTag(record)

/**
 * Raised by a conditional write (`artists.replace`, `albums.insert`, `albums.replace`, `albums.remove`) when its
 * {@link Precondition} does not hold for the target record's current tag, checked in the same step as the write (the
 * document store's commit step; the SQL store's transaction, on the row locked): nothing was changed. `current` is
 * the target record as stored now (for an album added to an artist, the artist).
 */
export class StaleVersionError extends Error {
  override name = 'StaleVersionError'

  /** `current` is the record as it is stored now, for which the caller's condition does not hold. */
  constructor(readonly current: Artist | Album) {
    super(`${'artistId' in current ? 'album' : 'artist'} ${current.id} does not meet the condition of the write`)
  }
}
