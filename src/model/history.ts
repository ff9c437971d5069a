/**
 * The history of an artist: who changed it or its albums, when, and what the record became. One model for the
 * store's records (a data file's `history`, the SQL table `rl_history`), the API's `ArtistChange` and the docs.
 */
import { type Static, Type } from '@sinclair/typebox'
import { Album, StoredAlbum } from './album.ts'
import { Artist, StoredArtist } from './artist.ts'
import { STORED_ID } from './rules.ts'

/**
 * The changes kept per artist, its own and its albums' together: the newest ones, the oldest going first. It bounds
 * what an artist's history holds in the store and the work of every request that reads it, whoever writes.
 */
export const HISTORY_PER_ARTIST = 100

/** The kinds of change a history records. */
export const CHANGE_KINDS = [
  'artist-created',
  'artist-updated',
  'album-created',
  'album-updated',
  'album-deleted',
] as const

/** One kind of change. */
export type ChangeKind = (typeof CHANGE_KINDS)[number]

/**
 * Who made a write, as the request log names the caller and never with a secret: `service` for an operator's
 * service key, `user:<id>/token:<credential id>` or `user:<id>/key:<credential id>` for a user's bearer token or
 * personal API key, and `operator` for a write made outside the API (a command, a program over the store).
 */
export const OPERATOR = 'operator'

const kind = Type.Union(
  CHANGE_KINDS.map((each) => Type.Literal(each)),
  { description: 'What changed: the artist created or replaced (PUT, PATCH); an album added, replaced or removed.' },
)

const by = Type.String({
  description:
    "The credential that made the change, as the server's request log names it, never a secret: `service` (an operator's service key), `user:<id>/token:<id>` or `user:<id>/key:<id>` (a user's bearer token or personal API key, by the ids of the account and of the credential), or `operator` (a change made outside the API).",
  examples: ['user:3/token:12'],
})

/** A change as the API serves it (`ArtistChange`). */
export const ArtistChange = Type.Object(
  {
    id: Type.Integer({
      format: 'int64',
      description: 'Orders the changes: a later change has a greater id. Assigned by the service; never reused.',
      examples: [42],
    }),
    at: Type.String({
      format: 'date-time',
      description: 'When the change was made.',
      examples: ['2026-11-29T13:45:00.000Z'],
    }),
    by,
    kind,
    artist: Type.Optional(Artist),
    album: Type.Optional(Album),
  },
  {
    title: 'ArtistChange',
    description:
      'One change of an artist or of one of its albums: who made it, when, and the record as it became (`artist` for the changes of the artist, `album` for those of an album; for `album-deleted`, the album as it was when removed).',
  },
)

/** A change as served and stored. */
export type ArtistChange = Static<typeof ArtistChange>

/** A change as a data file, a journal or a backup holds it. */
export const StoredChange = Type.Object({
  id: STORED_ID,
  at: Type.String(),
  by: Type.String(),
  kind,
  artist: Type.Optional(StoredArtist),
  album: Type.Optional(StoredAlbum),
})

/** The artist a change belongs to. */
export const artistOfChange = (change: ArtistChange): number =>
  change.album ? change.album.artistId : (change.artist as Artist).id

/**
 * The changes of `history` (in id order) that its artists keep: each artist's newest {@link HISTORY_PER_ARTIST}, in
 * id order. What a store holds after taking in a history written elsewhere (a backup, a data file read offline).
 */
export function keptHistory(history: readonly ArtistChange[]): ArtistChange[] {
  const left = new Map<number, number>()
  const kept: ArtistChange[] = []
  for (let i = history.length - 1; i >= 0; i--) {
    const change = history[i] as ArtistChange
    const artistId = artistOfChange(change)
    const room = left.get(artistId) ?? HISTORY_PER_ARTIST
    if (room === 0) continue
    left.set(artistId, room - 1)
    kept.push(change)
  }
  return kept.reverse()
}
