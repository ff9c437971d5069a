import { randomUUID } from 'node:crypto'
import { Low, Memory } from 'lowdb'
import type { StoreMetrics } from '../../metrics/metrics.ts'
import { type Album, DEFAULT_KIND } from '../../model/album.ts'
import type { Artist } from '../../model/artist.ts'
import type { CatalogueEntry } from '../../model/catalogue.ts'
import { type Credential, isDead, type NewCredential } from '../../model/credential.ts'
import { emailKey } from '../../model/email.ts'
import type { New } from '../../model/form.ts'
import { type ArtistChange, OPERATOR } from '../../model/history.ts'
import type { AlbumQuery, ArtistSort, ListQuery } from '../../model/search.ts'
import type { StoreDocument } from '../../model/store-document.ts'
import type { NewUser, User } from '../../model/user.ts'
import { StoreAvailability } from '../availability.ts'
import { type Change, ChangeHub } from '../changes.ts'
import { albumTag, artistTag, holds, type Precondition, StaleVersionError } from '../entity-tag.ts'
import { ClaimLostError, type IdempotencyKeys, type KeepAnswer } from '../idempotency.ts'
import { imageOf, liveOf, makeRoom, takesCredentialAt } from '../rules.ts'
import {
  AccountChangedError,
  AlbumLimitError,
  type CredentialLimit,
  CredentialLimitError,
  DuplicateEmailError,
  type Limiter,
  type LoadOptions,
  MAX_ALBUMS_PER_ARTIST,
  type NewEpoch,
  type Page,
  type RateLimit,
  type Recents,
  type RecentsRule,
  type Slice,
  type Store,
  StoreUnavailableError,
  type UserChanges,
} from '../store.ts'
import { listAlbums } from './album-lists.ts'
import type { Batch } from './batch.ts'
import { copyLists, emptyDocument } from './document.ts'
import { GroupCommit, type Mutation } from './group-commit.ts'
import { MemoryLimiter, MemoryRecents } from './memory-limiter.ts'
import type { Persistence } from './persistence.ts'
import { Records } from './records.ts'

// Records are rebuilt field by field so that the file and the responses always list fields in the same order. An
// unset field holds undefined, which JSON leaves out: every record has the same shape in memory. A null from a
// caller is unset too (request bodies may say null for an unset field).
const artistRecord = (id: number, { name, description, image, band }: New<Artist>): Artist => ({
  id,
  name,
  description: description ?? undefined,
  image: image ?? undefined,
  band: band ?? undefined,
})
const albumRecord = (id: number, { artistId, name, year, image, kind }: New<Album>): Album => ({
  id,
  artistId,
  name,
  year: year ?? undefined,
  image: image ?? undefined,
  kind: kind ?? DEFAULT_KIND,
})

/**
 * The {@link Store} over one lowdb document held in memory ({@link Records}), for `:memory:` and for a JSON data
 * file. Reads answer from memory. Changes go through a group commit: applied to the records in a batch, then
 * persisted together (a journal append for a data file) and acknowledged once durable, or taken back and refused.
 * The layers only call downwards: store → group commit → batch → records, and group commit → persistence.
 */
export class DocumentStore implements Store {
  private readonly records: Records
  private readonly commits: GroupCommit
  private closed = false
  private point: Promise<StoreDocument> | undefined
  /** The changes of this store, announced once durable; ids are this store's run and a count (changes.ts). */
  readonly changes: ChangeHub
  private readonly run = randomUUID().slice(0, 8)
  private announced = 0
  /**
   * Whether commits go through: away at a commit the disk refused, back at the next that it takes. While away, a
   * commit of nothing (the counters alone, see `Batch.probe`) is tried every few seconds.
   */
  readonly availability: StoreAvailability

  /**
   * Holds `document` (none for a new store) in a lowdb instance, persisted by `persistence`. Its changes are
   * announced on `changes`, a feed of its own by default; a fixture namespace passes the feed that outlives its
   * stores (src/fixtures/namespaces.ts).
   */
  constructor(
    document: StoreDocument | null,
    private readonly persistence: Persistence,
    changes?: ChangeHub,
    probeEveryMs?: number,
  ) {
    this.records = new Records(new Low(new Memory<StoreDocument>(), document ?? emptyDocument()))
    this.availability = new StoreAvailability(() => this.commits.probe(), probeEveryMs)
    this.commits = new GroupCommit(this.records, persistence, this.availability)
    // Ids of another run (a restart, another store) are unknown here: such a client is told to reload.
    this.changes = changes ?? new ChangeHub(`${this.run}-0`)
  }

  /** Counts commits (and, over a data file, the journal's work) into `metrics`. */
  instrument(metrics: StoreMetrics): void {
    this.commits.metrics = metrics
    metrics.availability = this.availability
    this.persistence.instrument?.(metrics)
  }

  /**
   * Tells the listeners of `changes` about `change`, made by `by` at `at` (ms since the epoch: the time its history
   * entry says too), once durable; resolves with `value` for the caller.
   */
  private announce<T>(value: T, change: Change, by?: string, at = Date.now()): T {
    const id = `${this.run}-${++this.announced}`
    this.changes.publish(by === undefined ? { id, at, change } : { id, at, by, change })
    return value
  }

  /** Applies `mutation` in the next group commit; resolves with its result once durable. */
  private async mutate<T>(mutation: Mutation<T>): Promise<T> {
    if (this.closed) throw new StoreUnavailableError('the store is closed')
    return this.commits.submit(mutation)
  }

  readonly artists = {
    get: async (id: number): Promise<Artist | undefined> => this.records.artist(id),
    list: async (page: Page, query?: ListQuery<ArtistSort>): Promise<Slice<Artist>> => {
      if (query?.q || (query?.sort && query.sort !== 'id')) return this.records.artistLists.list(page, query)
      const { artists } = this.records.doc
      return { items: artists.slice(page.offset, page.offset + page.limit), total: artists.length }
    },
    insert: (fields: New<Artist>, by = OPERATOR, keep?: KeepAnswer<Artist>): Promise<Artist> => {
      const at = Date.now()
      return this.mutate((batch) => {
        this.holdsClaim(keep)
        const artist = artistRecord(batch.nextId('artists'), fields)
        batch.put('artists', artist)
        batch.change({ at: new Date(at).toISOString(), by, kind: 'artist-created', artist })
        if (keep) batch.answer(keep.request, keep.claim, keep.answer(artist), keep.expiresAt)
        return artist
      }).then((artist) => this.announce(artist, { kind: 'artist-created', artist }, by, at))
    },
    replace: (artist: Artist, condition?: Precondition, by = OPERATOR): Promise<Artist | undefined> => {
      const at = Date.now()
      return this.mutate((batch) => {
        const current = this.records.artist(artist.id)
        if (!current) return undefined
        // In the commit step, as the write: no other change lands between the check and the write.
        if (!holds(condition, artistTag(current))) throw new StaleVersionError(current)
        const record = artistRecord(artist.id, artist)
        batch.put('artists', record)
        batch.change({ at: new Date(at).toISOString(), by, kind: 'artist-updated', artist: record })
        return record
      }).then((record) => record && this.announce(record, { kind: 'artist-updated', artist: record }, by, at))
    },
    history: async (artistId: number, page: Page): Promise<Slice<ArtistChange> | undefined> => {
      if (!this.records.artist(artistId)) return undefined
      // Oldest first, at most HISTORY_PER_ARTIST: the page is read from the end, in constant work.
      const changes = this.records.changesOf(artistId)
      const end = Math.max(0, changes.length - page.offset)
      const items = changes.slice(Math.max(0, end - page.limit), end).reverse()
      return { items, total: changes.length }
    },
  }

  readonly albums = {
    get: async (id: number): Promise<Album | undefined> => this.records.album(id),
    listByArtist: async (artistId: number, page: Page, query: AlbumQuery = {}): Promise<Slice<Album> | undefined> => {
      const albums = this.records.albumsOf(artistId)
      return albums && listAlbums(albums, page, query)
    },
    insert: (
      fields: New<Album>,
      condition?: Precondition,
      by = OPERATOR,
      keep?: KeepAnswer<Album>,
    ): Promise<Album | undefined> => {
      const at = Date.now()
      return this.mutate((batch) => {
        const albums = this.records.albumsOf(fields.artistId)
        if (!albums) return undefined
        const artist = this.records.artist(fields.artistId) as Artist
        if (!holds(condition, artistTag(artist))) throw new StaleVersionError(artist)
        // Counted in the same step of the commit as the insert, so concurrent inserts cannot pass it together.
        if (albums.length >= MAX_ALBUMS_PER_ARTIST) throw new AlbumLimitError(MAX_ALBUMS_PER_ARTIST)
        this.holdsClaim(keep)
        const album = albumRecord(batch.nextId('albums'), fields)
        batch.put('albums', album)
        batch.change({ at: new Date(at).toISOString(), by, kind: 'album-created', album })
        if (keep) batch.answer(keep.request, keep.claim, keep.answer(album), keep.expiresAt)
        return album
      }).then((album) => album && this.announce(album, { kind: 'album-created', album }, by, at))
    },
    replace: (album: Album, condition?: Precondition, by = OPERATOR): Promise<Album | undefined> => {
      const at = Date.now()
      return this.mutate((batch) => {
        const current = this.records.album(album.id)
        if (current?.artistId !== album.artistId) return undefined
        if (!holds(condition, albumTag(current))) throw new StaleVersionError(current)
        const record = albumRecord(album.id, album)
        batch.put('albums', record)
        batch.change({ at: new Date(at).toISOString(), by, kind: 'album-updated', album: record })
        return record
      }).then((record) => record && this.announce(record, { kind: 'album-updated', album: record }, by, at))
    },
    remove: (artistId: number, id: number, condition?: Precondition, by = OPERATOR): Promise<Album | undefined> => {
      const at = Date.now()
      return this.mutate((batch) => {
        const current = this.records.album(id)
        if (current?.artistId !== artistId) return undefined
        if (!holds(condition, albumTag(current))) throw new StaleVersionError(current)
        // The artist's list loses it in this step: its count, which `insert` checks, drops with it.
        batch.remove('albums', current)
        batch.change({ at: new Date(at).toISOString(), by, kind: 'album-deleted', album: current })
        return current
      }).then((album) => album && this.announce(album, { kind: 'album-deleted', album }, by, at))
    },
  }

  readonly users = {
    get: async (id: number): Promise<User | undefined> => this.records.user(id),
    findByEmail: async (email: string): Promise<User | undefined> => this.records.userByEmailKey(emailKey(email)),
    insert: (fields: NewUser): Promise<User> =>
      this.mutate((batch) => {
        // Checked and claimed in one step of the commit, so two concurrent sign-ups cannot both pass.
        if (this.records.userByEmailKey(emailKey(fields.email))) throw new DuplicateEmailError(fields.email)
        const user: User = { id: batch.nextId('users'), ...fields, credentialsEpoch: 0 }
        batch.put('users', user)
        return user
      }),
    list: async (page: Page): Promise<Slice<User>> => {
      const { users } = this.records.doc
      return { items: users.slice(page.offset, page.offset + page.limit), total: users.length }
    },
    update: (id: number, changes: UserChanges): Promise<User | undefined> =>
      this.mutate((batch) => {
        const user = this.records.user(id)
        if (!user) return undefined
        const { passwordHash = user.passwordHash, disabledAt = user.disabledAt } = changes
        const updated: User = { ...user, passwordHash, disabledAt }
        batch.put('users', updated)
        return updated
      }),
    startEpoch: (id: number, changes: UserChanges, at: string): Promise<NewEpoch | undefined> =>
      this.mutate((batch) => {
        const user = this.records.user(id)
        if (!user) return undefined
        const { passwordHash = user.passwordHash, disabledAt = user.disabledAt } = changes
        const updated: User = { ...user, passwordHash, disabledAt, credentialsEpoch: user.credentialsEpoch + 1 }
        batch.put('users', updated)
        // In the same step of the commit: no token can be added between the new epoch and the revocation.
        return { user: updated, revokedTokens: this.revokeLive(batch, id, 'token', at) }
      }),
  }

  readonly credentials = {
    findByHash: async (hash: string): Promise<Credential | undefined> => this.records.credentialByHash(hash),
    listByUser: async (userId: number): Promise<readonly Credential[]> => this.records.credentialsOf(userId),
    insert: (fields: NewCredential, limit?: CredentialLimit): Promise<Credential> =>
      this.mutate((batch) => {
        const epoch = fields.epoch ?? 0
        // Checked in the same step of the commit as the insert: a reset or a disable is wholly before it or after it.
        if (!takesCredentialAt(this.records.user(fields.userId), epoch))
          throw new AccountChangedError(`account ${fields.userId} changed since epoch ${epoch} was read`)
        if (limit) this.makeRoom(batch, fields, limit)
        const credential: Credential = { id: batch.nextId('credentials'), ...fields, epoch }
        batch.put('credentials', credential)
        return credential
      }),
    revoke: (id: number, at: string): Promise<Credential | undefined> =>
      this.mutate((batch) => {
        const credential = this.records.credential(id)
        if (!credential || credential.revokedAt !== null) return credential
        const revoked = { ...credential, revokedAt: at }
        batch.put('credentials', revoked)
        return revoked
      }),
    revokeAll: (userId: number, kind: Credential['kind'], at: string): Promise<number> =>
      this.mutate((batch) => this.revokeLive(batch, userId, kind, at)),
    noteUse: (id: number, at: string): void => {
      const credential = this.records.credential(id)
      // Not a write of its own: the time rides along with the next commit, or is saved on close.
      if (credential) this.commits.pending.note('credentials', { ...credential, lastUsedAt: at })
    },
    purge: (now: string): Promise<number> =>
      this.mutate((batch) => {
        const at = Date.parse(now)
        const dead = this.records.doc.credentials.filter((credential) => isDead(credential, at))
        batch.drop(dead)
        return dead.length
      }),
  }

  /** Refuses an insert whose key's claim was taken over (its lease ran out) before it writes anything. */
  private holdsClaim(keep: Pick<KeepAnswer<never>, 'request' | 'claim'> | undefined): void {
    if (keep && !this.records.idempotency.holds(keep.request, keep.claim))
      throw new ClaimLostError(`the claim of Idempotency-Key ${JSON.stringify(keep.request.key)} was taken over`)
  }

  /** Revokes, at `at`, every credential of `kind` of the user that is still live then; how many. */
  private revokeLive(batch: Batch, userId: number, kind: Credential['kind'], at: string): number {
    const live = liveOf(this.records.credentialsOf(userId), kind, Date.parse(at))
    for (const credential of live) batch.put('credentials', { ...credential, revokedAt: at })
    return live.length
  }

  /**
   * Enforces `limit` before the user gets a new credential of `kind`: purges the user's dead credentials, then
   * refuses, or revokes the oldest live ones, so that the new one is at most the `max`th.
   */
  private makeRoom(batch: Batch, fields: NewCredential, limit: CredentialLimit) {
    // The user's list is in id order, which is the order of creation, as `makeRoom` expects.
    const room = makeRoom(this.records.credentialsOf(fields.userId), fields, limit)
    batch.drop(room.purge)
    if (room.refuse) throw new CredentialLimitError(limit.max)
    for (const oldest of room.revoke) batch.put('credentials', { ...oldest, revokedAt: fields.createdAt })
  }

  /**
   * A new limiter in this process, whatever its name: one process owns a document store, so there is no one to share
   * it with. A property rather than a method, so that a copy of the store made by spreading it keeps it.
   */
  readonly limiter = (_name: string, rule: RateLimit, clock: () => number): Limiter => new MemoryLimiter(rule, clock)

  /**
   * The idempotency keys, in the records' table: a claim is a step of this process alone (it owns the store); an
   * answer is journaled by the insert it answers, in the same commit as the record.
   */
  readonly idempotency: IdempotencyKeys = {
    claim: async (request, now, limits) => this.records.idempotency.claim(request, now, limits),
    release: async (request, claim) => this.records.idempotency.release(request, claim),
    keep: (request, claim, answer, expiresAt) =>
      this.mutate((batch) => {
        if (!batch.answer(request, claim, answer, expiresAt))
          throw new ClaimLostError(`the claim of Idempotency-Key ${JSON.stringify(request.key)} was taken over`)
      }),
  }

  /** New {@link Recents} in this process, whatever the name, as for `limiter`; a property for the same reason. */
  readonly recents = (_name: string, rule: RecentsRule, clock: () => number): Recents => new MemoryRecents(rule, clock)

  async isEmpty(): Promise<boolean> {
    return this.records.isEmpty()
  }

  /** The store can always serve: it answers from memory. */
  async check(): Promise<void> {}

  load(
    catalogue: readonly CatalogueEntry[],
    { cover, ifNeverWritten = false }: LoadOptions = {},
  ): Promise<{ artists: number; albums: number } | undefined> {
    return this.mutate((batch) => {
      if (ifNeverWritten && !this.records.neverWritten()) return undefined
      let albums = 0
      for (const entry of catalogue) {
        const artistId = batch.nextId('artists')
        batch.put(
          'artists',
          artistRecord(artistId, { ...entry, image: imageOf(entry.image, cover, 'artist', artistId) }),
        )
        for (const fields of entry.albums) {
          const id = batch.nextId('albums')
          batch.put(
            'albums',
            albumRecord(id, { ...fields, artistId, image: imageOf(fields.image, cover, 'album', id) }),
          )
          albums += 1
        }
      }
      return { artists: catalogue.length, albums }
    })
  }

  /**
   * The records now, in new lists: the records themselves are shared, as no one edits one in place (records.ts
   * freezes them), so a snapshot of any size takes a moment proportional to the number of records, never a deep copy
   * (an online backup of 100,000 artists pauses nothing for long).
   */
  async snapshot(): Promise<StoreDocument> {
    return { ...copyLists(this.records.doc), ...this.records.historyPart() }
  }

  /** This process owns the store: the reset point is the snapshot of the first call. */
  resetPoint(): Promise<StoreDocument> {
    this.point ??= this.snapshot()
    return this.point
  }

  restore(document: StoreDocument): Promise<void> {
    return this.mutate((batch) => {
      // A fresh copy each time, so the document can be restored again.
      batch.replaceDocument(structuredClone(document))
    }).then(() => this.announce(undefined, { kind: 'reset' }))
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    this.availability.close()
    this.changes.end()
    await this.commits.idle()
    // Folds the journal into the data file, last-used times included.
    await this.persistence.close(this.records.snapshot())
  }
}
