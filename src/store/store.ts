/**
 * The storage interface the catalogue and accounts code use. Nothing outside `store/` knows how (or whether)
 * the data reaches a disk, so a second backend can serve the users who outgrow one machine.
 */

import type { StoreMetrics } from '../metrics/metrics.ts'
import type { Album } from '../model/album.ts'
import type { Artist } from '../model/artist.ts'
import type { CatalogueEntry } from '../model/catalogue.ts'
import type { Credential, NewCredential } from '../model/credential.ts'
import type { New } from '../model/form.ts'
import type { ArtistChange } from '../model/history.ts'
import type { AlbumQuery, ArtistSort, ListQuery } from '../model/search.ts'
import type { StoreDocument } from '../model/store-document.ts'
import type { NewUser, User } from '../model/user.ts'
import type { StoreAvailability } from './availability.ts'
import type { Changes } from './changes.ts'
import type { Precondition } from './entity-tag.ts'
import type { IdempotencyKeys, KeepAnswer } from './idempotency.ts'

/** What `users.update` may change in an account: its password hash and whether (since when) it is disabled. */
export type UserChanges = Partial<Pick<User, 'passwordHash' | 'disabledAt'>>

/** What `users.startEpoch` answers: the account as changed, and how many of its live bearer tokens it revoked. */
export interface NewEpoch {
  user: User
  revokedTokens: number
}

/** One page of a list: `limit` items after skipping `offset`. */
export interface Page {
  limit: number
  offset: number
}

/** The items of one page and the size of the whole list. */
export interface Slice<T> {
  items: readonly T[]
  total: number
}

/** How `load` fills in what a catalogue leaves out. */
export interface LoadOptions {
  /**
   * The image of a record whose entry has no `image` at all (an explicit null stays unset), from its kind and the id
   * just assigned to it: ids exist only once the store assigns them, inside the same write.
   */
  cover?: (kind: 'artist' | 'album', id: number) => string
  /**
   * Load only into a store never written to: a document with no record and no id ever given (one that held records
   * and holds none now was written), or a database with no row (no write removes one there). Checked in the same
   * write: of many processes seeding one shared database at once, exactly one loads. `load` resolves with
   * `undefined` when the store was written before.
   */
  ifNeverWritten?: boolean
}

/** Raised when a write cannot be made durable; the change it carried was rolled back. */
export class StoreUnavailableError extends Error {
  override name = 'StoreUnavailableError'
  /** Which outage: `http/error-handler.ts` answers each kind from its table. */
  readonly kind: 'store-unavailable' | 'database-unavailable' = 'store-unavailable'
}

/**
 * Raised when the database behind a store cannot be reached, or does not answer in time: reads fail with it too, and
 * a write that fails with it was not acknowledged (its transaction committed entirely or not at all).
 */
export class DatabaseUnavailableError extends StoreUnavailableError {
  override name = 'DatabaseUnavailableError'
  override readonly kind = 'database-unavailable'
}

/**
 * Raised by a write that would give an id past 2^53 − 1, which JSON clients cannot tell from its neighbours: the
 * write is refused as one the store cannot make (503), and the log says which collection ran out.
 */
export class IdsExhaustedError extends StoreUnavailableError {
  override name = 'IdsExhaustedError'
  constructor(readonly collection: string) {
    super(`the ${collection} have used every id up to ${Number.MAX_SAFE_INTEGER}: no new one can be given`)
  }
}

/** Raised by `users.insert` when the email (compared in its folded form, see `emailKey`) is already registered. */
export class DuplicateEmailError extends Error {
  override name = 'DuplicateEmailError'
}

/**
 * Raised by `credentials.insert` when the account is no longer at the credentials epoch the credential was issued
 * under (its password was reset meanwhile), is disabled, or does not exist: nothing was stored.
 */
export class AccountChangedError extends Error {
  override name = 'AccountChangedError'
}

/** How many live credentials of one kind a user may hold, and what an insert beyond that does. */
export interface CredentialLimit {
  max: number
  /** `refuse`: reject with {@link CredentialLimitError}; `revoke-oldest`: revoke the oldest live ones in the same write. */
  whenFull: 'refuse' | 'revoke-oldest'
}

/** Raised by `credentials.insert` when the user already holds as many live credentials of that kind as allowed. */
export class CredentialLimitError extends Error {
  override name = 'CredentialLimitError'

  /** `max` is the limit that was reached. */
  constructor(readonly max: number) {
    super(`the user already holds ${max} live credentials of this kind`)
  }
}

/**
 * The most albums one artist may have. `albums.insert` refuses one more with {@link AlbumLimitError}, checked in the
 * same step as the insert, so concurrent inserts (on any replica) cannot pass it together. It bounds the work of
 * every request that reads an artist's albums, whoever wrote them; a catalogue loaded by the operator (`load`, the
 * seed) is not held to it.
 */
export const MAX_ALBUMS_PER_ARTIST = 500

/** Raised by `albums.insert` when the artist already has {@link MAX_ALBUMS_PER_ARTIST} albums (or more). */
export class AlbumLimitError extends Error {
  override name = 'AlbumLimitError'

  /** `max` is the limit that was reached. */
  constructor(readonly max: number) {
    super(`the artist already has ${max} albums`)
  }
}

/** How many attempts a key may make in a sliding window. */
export interface RateLimit {
  /** Attempts allowed per window; the next one is refused. */
  limit: number
  windowMs: number
}

/** One attempt counted by a {@link Limiter}: in flight until settled (it keeps counting) or forgiven (it does not). */
export interface Attempt {
  readonly key: string
  /** When it was made, in ms since the epoch by the limiter's clock. */
  readonly at: number
  /** Tells it apart from other attempts of its key, where the backend needs that (the SQL limiter's row). */
  readonly id?: string
}

/**
 * What {@link Limiter.hit} answers: the attempt, counted, with how many more the key may make in the window now
 * (`remaining`, known from the same step); or, when the key is at its limit, the seconds to wait.
 */
export type Hit = { attempt: Attempt; retryAfter: 0; remaining: number } | { attempt: undefined; retryAfter: number }

/**
 * A sliding-window counter of attempts per key (a client address, an email): a brute-force brake. The SQL store's
 * limiters are shared by every replica using the same name, so a limit of 5 holds across all of them together; the
 * document store's live in the process that asked for them.
 *
 * @example
 * const failures = store.limiter('login-failures', { limit: 5, windowMs: 15 * 60_000 }, Date.now)
 * const { attempt, retryAfter } = await failures.hit(email) // checked and counted in one step, before the slow check
 * if (!attempt) throw tooMany(retryAfter)
 * if (await verify(password)) await failures.forgive(attempt)
 * else await failures.settle(attempt)
 */
export interface Limiter {
  /**
   * Counts one attempt of `key` if it is below its limit, checked and counted in one atomic step (two replicas cannot
   * both pass on the last free place); otherwise counts nothing and answers the seconds to wait (at least 1).
   */
  hit(key: string): Promise<Hit>
  /** Counts one attempt of `key` whatever its count, for a caller exempt from the limit; the oldest ones beyond it go. */
  record(key: string): Promise<Attempt>
  /** Marks `attempt` as finished: it keeps counting, and {@link forgetSettled} may forget it. */
  settle(attempt: Attempt): Promise<void>
  /** Takes back `attempt` and only that one: attempts of the same key made before or after it keep counting. */
  forgive(attempt: Attempt): Promise<void>
  /** Forgets the finished attempts of `key` (e.g. after a successful login), keeping those still in flight. */
  forgetSettled(key: string): Promise<void>
  /** How many attempts `key` made in the window (at most `limit`). */
  count(key: string): Promise<number>
  /** Seconds until `key` may make another attempt (at least 1), or 0 when it may now. */
  retryAfter(key: string): Promise<number>
}

/** How many members each owner of a {@link Recents} keeps, and for how long after each was last added. */
export interface RecentsRule {
  perOwner: number
  windowMs: number
}

/**
 * The most recent members of each owner (an account's latest login addresses): at most `perOwner` per owner, each
 * remembered for `windowMs` after it was last added. Only an owner's own adds replace its members, the oldest first:
 * no number of adds for other owners forgets one. Memory is at most `perOwner` entries per owner with a member in the
 * window. The SQL store's are shared by every replica using the same name.
 *
 * @example
 * const known = store.recents('known-addresses', { perOwner: 10, windowMs: 30 * 86_400_000 }, Date.now)
 * await known.add(email, client) // after a successful login
 * if (await known.has(email, client)) exempt()
 */
export interface Recents {
  /** Remembers `member` (not empty) of `owner` as of now, forgetting the owner's oldest beyond `perOwner`. */
  add(owner: string, member: string): Promise<void>
  /** Whether `member` of `owner` was added within the window and not since pushed out by the owner's newer ones. */
  has(owner: string, member: string): Promise<boolean>
}

/**
 * The one interface every backend implements: the document store (in memory, or over a JSON data file) and the SQL
 * store (PostgreSQL or CockroachDB, shared by many replicas). Reads and writes return promises; a read sees every
 * write acknowledged before it was made. Artists and albums returned by the store are never changed in place (a
 * replacement is a new object), so callers may cache what they derive from one. Writes resolve once the change is
 * durable and reject with {@link StoreUnavailableError} when it could not be made so.
 */
export interface Store {
  readonly artists: {
    get(id: number): Promise<Artist | undefined>
    /** A page of the artists matching `query.q` (by name or band), in `query.sort` order (id by default). */
    list(page: Page, query?: ListQuery<ArtistSort>): Promise<Slice<Artist>>
    /**
     * Every write of the catalogue takes `by`, who makes it (`callerName`, or `OPERATOR` by default: history.ts), and
     * adds a change to the artist's history in the same durable step as the write itself. With `keep`, the answer for
     * an `Idempotency-Key` is kept in that write too (see {@link KeepAnswer}).
     */
    insert(fields: New<Artist>, by?: string, keep?: KeepAnswer<Artist>): Promise<Artist>
    /**
     * Replaces every field but the id; `undefined` when there is no such artist. With `condition` (see `Precondition`
     * in entity-tag.ts), only while it holds for the artist's current tag, checked in the same step as the write (so
     * of two writers that read the same tag, on any replica, one wins); otherwise rejects with `StaleVersionError`
     * and changes nothing.
     */
    replace(artist: Artist, condition?: Precondition, by?: string): Promise<Artist | undefined>
    /**
     * A page of the changes of artist `artistId` and of its albums, newest first: its last `HISTORY_PER_ARTIST`
     * (history.ts); `undefined` when there is no such artist.
     */
    history(artistId: number, page: Page): Promise<Slice<ArtistChange> | undefined>
  }
  readonly albums: {
    get(id: number): Promise<Album | undefined>
    /**
     * A page of the artist's albums matching `query` (by name, and in its range of years), as for artists;
     * `undefined` when there is no such artist.
     */
    listByArtist(artistId: number, page: Page, query?: AlbumQuery): Promise<Slice<Album> | undefined>
    /**
     * `undefined` when there is no such artist; rejects with {@link AlbumLimitError} when the artist already has
     * {@link MAX_ALBUMS_PER_ARTIST} albums, counted in the same step as the insert. With `condition`, only while it
     * holds for the artist's current tag, checked in that step too; otherwise rejects with `StaleVersionError`. With `keep`, as for artists.
     */
    insert(
      fields: New<Album>,
      condition?: Precondition,
      by?: string,
      keep?: KeepAnswer<Album>,
    ): Promise<Album | undefined>
    /**
     * Replaces every field of album `album.id` but its id and artist; `undefined` when there is no such album of
     * `album.artistId`. With `condition`, only while it holds for the album's current tag (`albumTag`), checked in the
     * same step as the write; otherwise rejects with `StaleVersionError` and changes nothing.
     */
    replace(album: Album, condition?: Precondition, by?: string): Promise<Album | undefined>
    /**
     * Removes album `id` of artist `artistId` and resolves with it as it was; `undefined` when there is no such album
     * of that artist. The artist's count of albums ({@link MAX_ALBUMS_PER_ARTIST}) drops with it, in the same step.
     * With `condition`, as for `replace`. Ids are never reused.
     */
    remove(artistId: number, id: number, condition?: Precondition, by?: string): Promise<Album | undefined>
  }
  readonly users: {
    get(id: number): Promise<User | undefined>
    /** The user whose email has the same folded form (`emailKey`) as `email`: look-alike forms find one account. */
    findByEmail(email: string): Promise<User | undefined>
    /** Rejects with {@link DuplicateEmailError} when the email, or a look-alike form of it, is taken. */
    insert(fields: NewUser): Promise<User>
    /** A page of every account, in id order (the operator's list, `rock-legends users list`). */
    list(page: Page): Promise<Slice<User>>
    /** Changes the fields of `changes` in account `id`, in one durable write; `undefined` when there is no such user. */
    update(id: number, changes: UserChanges): Promise<User | undefined>
    /**
     * Changes the fields of `changes` in account `id`, moves its credentials epoch on by one and revokes its live
     * bearer tokens at `at`, all in one durable write: a token stored before it is revoked by it, and one whose
     * issuer read the epoch before it is refused after it (see `credentials.insert`). `undefined` when there is no
     * such user.
     */
    startEpoch(id: number, changes: UserChanges, at: string): Promise<NewEpoch | undefined>
  }
  readonly credentials: {
    findByHash(hash: string): Promise<Credential | undefined>
    /** The user's credentials in id order; dead ones (see `isDead`) may linger until purged. */
    listByUser(userId: number): Promise<readonly Credential[]>
    /**
     * Adds a credential, only while its account exists, is enabled and is still at the credentials epoch
     * `fields.epoch`, checked in the same step as the insert (a `startEpoch` or a disable lands before it or after
     * it, never between); otherwise rejects with {@link AccountChangedError}. With `limit`, the user's live
     * credentials of the same kind (at `fields.createdAt`) are counted in that step too, so concurrent inserts cannot
     * pass the limit together; the user's dead credentials are purged on the way.
     */
    insert(fields: NewCredential, limit?: CredentialLimit): Promise<Credential>
    /** Marks a credential revoked; `undefined` when there is no such credential. */
    revoke(id: number, at: string): Promise<Credential | undefined>
    /** Revokes every live credential of `kind` of the user, in one durable write; resolves with how many. */
    revokeAll(userId: number, kind: Credential['kind'], at: string): Promise<number>
    /**
     * Notes a use of a credential at `at`, its `lastUsedAt`: never a durable write of its own, since a use is no
     * change anyone waits for. This process's reads of the credential show it at once. The document store saves it
     * with its next commit, or on close; the SQL store with its next write transaction, or within
     * `saveUsesEveryMs` (2 s) when none comes, or on close. A crash loses the uses noted since, never anything else.
     */
    noteUse(id: number, at: string): void
    /**
     * Removes every credential that is dead at `now` (revoked, or expired), so that logins do not grow the data
     * forever; resolves with how many went. Their hashes become unknown, which is refused like a revoked one, and
     * ids are never reused. It need not be durable at once: until it is, a restart may bring dead credentials back,
     * as dead as they were, for the next purge.
     */
    purge(now: string): Promise<number>
  }
  /**
   * The limiter called `name` (a stable name: over SQL it keys the attempts every replica shares), counting by `rule`
   * with the time from `clock` (ms since the epoch).
   */
  limiter(name: string, rule: RateLimit, clock: () => number): Limiter
  /** The {@link Recents} called `name` (stable, as for `limiter`), by `rule`, with the time from `clock`. */
  recents(name: string, rule: RecentsRule, clock: () => number): Recents
  /**
   * The `Idempotency-Key`s of create requests and their answers (idempotency.ts): kept across restarts, and over SQL
   * shared by every replica. An answer is kept by the insert it answers (`keep`), in the same durable write. Not part of {@link snapshot}: backups, copies and fixture states leave them out.
   */
  readonly idempotency: IdempotencyKeys
  /** True when the store holds no artist, album or user. */
  isEmpty(): Promise<boolean>
  /**
   * Adds a whole catalogue in one durable write; returns how many artists and albums were added, or `undefined` when
   * `options.ifNeverWritten` found the store written before.
   */
  load(
    catalogue: readonly CatalogueEntry[],
    options?: LoadOptions,
  ): Promise<{ artists: number; albums: number } | undefined>
  /**
   * Everything stored now, records and id counters, in one consistent view (over SQL, one REPEATABLE READ
   * transaction): a copy that later writes leave as it is. Its records may be the store's own (the document store
   * shares them, frozen): read them, and make new ones to change anything.
   */
  snapshot(): Promise<StoreDocument>
  /** Replaces everything stored, counters included, with `document`, in one durable write; it may be restored again. */
  restore(document: StoreDocument): Promise<void>
  /**
   * The state a reset returns to (`--allow-reset`, src/fixtures/reset.ts): the {@link snapshot} taken at the first call
   * among all the processes serving this store, and the same for each of them. The document store, which one process
   * owns, takes it at its first call; a database shared by replicas keeps the first replica's in the database, across
   * restarts (`DELETE FROM rl_snapshots` forgets it), so a reset on any replica restores the same state.
   */
  resetPoint(): Promise<StoreDocument>
  /** Resolves when the store can serve; rejects with {@link DatabaseUnavailableError} naming the cause otherwise. */
  check(): Promise<void>
  /**
   * The changes of the catalogue (artists created or replaced, albums created, replaced or removed, resets), each
   * with who made it and when, for the event stream: over
   * SQL, every replica's, in one order they all agree on (changes.ts).
   */
  readonly changes: Changes
  /** Waits for writes in flight, then releases what the store holds (the data file, the connections). */
  close(): Promise<void>
  /**
   * From now on counts into `metrics` (`--metrics`, src/metrics/metrics.ts): commits and their batch sizes, the
   * journal's fsyncs, size and compactions, the pool's use. A store never instrumented counts nothing.
   */
  instrument?(metrics: StoreMetrics): void
  /**
   * Whether the store can serve right now, as its operations find it (availability.ts): over a database, whether it
   * answers; over a data file, whether the journal takes commits. Watched by the server's log and `--metrics`.
   */
  readonly availability?: StoreAvailability
}
