/**
 * The whole-store document: everything a store holds at one moment, its records and the counters that assign the next
 * ids. A data file holds one, a journal line part of one, a backup's content and a fixture's state are one, the SQL
 * store dumps and restores one, and `verify` holds each of them to this one schema, so a backup or data file is held
 * to the same record rules wherever it comes from.
 */
import { type Static, Type } from '@sinclair/typebox'
import { type Album, StoredAlbum } from './album.ts'
import { type Artist, StoredArtist } from './artist.ts'
import { type Credential, StoredCredential } from './credential.ts'
import { type ArtistChange, StoredChange } from './history.ts'
import { type KeptEntry, KeptEntry as KeptEntrySchema } from './kept-answer.ts'
import { STORED_COUNTER } from './rules.ts'
import { StoredUser, type User } from './user.ts'

/** The collections of a document, in the order a document, a backup and a report list them. */
export const COLLECTIONS = ['artists', 'albums', 'users', 'credentials'] as const

/** One collection of the document. */
export type Collection = (typeof COLLECTIONS)[number]

/**
 * The document's schema: its records in id order and, for each collection, the last id given. It accepts what earlier
 * builds wrote (see upgrade.ts), so a document read against it is a {@link StoredDocument} until it is upgraded.
 */
export const StoreDocument = Type.Object({
  version: Type.Literal(1),
  counters: Type.Object({
    artists: STORED_COUNTER,
    albums: STORED_COUNTER,
    users: STORED_COUNTER,
    credentials: STORED_COUNTER,
  }),
  artists: Type.Array(StoredArtist),
  albums: Type.Array(StoredAlbum),
  users: Type.Array(StoredUser),
  credentials: Type.Array(StoredCredential),
  /**
   * The answers kept for `Idempotency-Key`s, in a data file only (the document store writes them there): a backup,
   * a copy or a fixture state has none.
   */
  idempotency: Type.Optional(Type.Array(KeptEntrySchema)),
  /**
   * The artists' histories (history.ts), in id order: the last changes of each artist. Absent from what builds before
   * histories wrote, which then start empty.
   */
  history: Type.Optional(Type.Array(StoredChange)),
})

/** A document as a data file, a journal or a backup holds it, perhaps in the form of an earlier build. */
export type StoredDocument = Static<typeof StoreDocument>

/**
 * A document in this build's form (`upgradeDocument` brings a {@link StoredDocument} to it): what `snapshot()`
 * answers and `restore()` takes, what a backup's content and a fixture's state are. Records are kept whole as read, so a
 * field a later build adds to one travels through a backup untouched.
 */
export interface StoreDocument {
  version: 1
  counters: StoredDocument['counters']
  artists: Artist[]
  albums: Album[]
  users: User[]
  credentials: Credential[]
  /** In a data file only, see the schema. */
  idempotency?: KeptEntry[]
  /** The artists' histories, in id order; absent for none. */
  history?: ArtistChange[]
}

/** A record of any collection: all of them carry an id. */
export type StoreRecord = StoreDocument[Collection][number]
