import type { Low } from 'lowdb'
import { emailKey } from '../model/email.ts'
import type { AlbumSort, ArtistSort, ListQuery } from '../model/search.ts'
import { listAlbums } from './album-lists.ts'
import { ArtistLists } from './artist-lists.ts'
import { type Document, emptyDocument, type StoredDocument, withoutNulls } from './document.ts'
import { GroupCommit } from './group-commit.ts'
import type { JournalEntry } from './journal.ts'
import { type Collection, indexById, type Persistence, type StoredRecord, upsert } from './persistence.ts'
import {
  type Album,
  type Artist,
  type CatalogueEntry,
  type Credential,
  type CredentialLimit,
  CredentialLimitError,
  DuplicateEmailError,
  isDead,
  type LoadOptions,
  type New,
  type Page,
  type Slice,
  type Snapshot,
  type Store,
  StoreUnavailableError,
  type User,
} from './store.ts'

function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key)
  if (list) list.push(value)
  else map.set(key, [value])
}

const noAlbums: Album[] = []

// Records are rebuilt field by field so that the file and the responses always list fields in the same order. An
// unset field holds undefined, which JSON leaves out: every record has the same shape in memory. A null from a
// caller that still speaks the form of version 0.1 is unset too.
const artistRecord = (id: number, { name, description, image, band }: New<Artist>): Artist => ({
  id,
  name,
  description: description ?? undefined,
  image: image ?? undefined,
  band: band ?? undefined,
})
const albumRecord = (id: number, { artistId, name, year, image }: New<Album>): Album => ({
  id,
  artistId,
  name,
  year: year ?? undefined,
  image: image ?? undefined,
})

/** What undoes the changes of the batch being persisted, should persisting fail. */
interface UndoLog {
  /** The counters before the batch: every record it added has a greater id. */
  counters: Document['counters']
  /** Records replaced, with the document that held them, in the order they were replaced. */
  replaced: [Document, Collection, StoredRecord][]
  /** The whole previous document, when the batch replaced it (a restore). */
  document?: Document
}

const COLLECTIONS: readonly Collection[] = ['artists', 'albums', 'users', 'credentials']

/** How many records of `records` (sorted by id) have an id of at most `id`. */
function countUpTo(records: readonly { id: number }[], id: number): number {
  let low = 0
  let high = records.length
  while (low < high) {
    const middle = (low + high) >>> 1
    if ((records[middle] as { id: number }).id <= id) low = middle + 1
    else high = middle
  }
  return low
}

/**
 * The {@link Store} over one lowdb document held in memory, with the indexes that keep reads independent of the
 * catalogue's size. Changes go through a group commit: applied in memory, then persisted together (a journal
 * append for a data file) and acknowledged once durable, or undone and refused. Records are never edited in place:
 * a change puts a new object, so snapshots are cheap and consistent, and derived caches cannot go stale.
 */
export class DocumentStore implements Store {
  private albumsByArtist = new Map<number, Album[]>()
  private usersByEmail = new Map<string, User>()
  private credentialsByHash = new Map<string, Credential>()
  private credentialsByUser = new Map<number, Credential[]>()
  private readonly artistLists = new ArtistLists(() => this.doc.artists)
  private readonly commits: GroupCommit
  /** The records put since the last persist, by id: the next journal entry. */
  private changed = new Map<Collection, Map<number, StoredRecord>>()
  private undo: UndoLog | undefined
  private replacedAll = false
  private closed = false

  /** Wraps a lowdb instance whose `data` has been read (null for a new store), persisted by `persistence`. */
  constructor(
    private readonly db: Low<Document>,
    private readonly persistence: Persistence,
  ) {
    // Files written by version 0.1 said null for unset fields; the store holds and serves them left out.
    db.data = db.data ? withoutNulls(db.data as unknown as StoredDocument) : emptyDocument()
    this.index()
    this.commits = new GroupCommit(
      () => this.persist(),
      () => this.rollback(),
    )
  }

  private get doc(): Document {
    return this.db.data
  }

  private index(): void {
    this.artistLists.reset()
    this.albumsByArtist = new Map()
    for (const album of this.doc.albums) push(this.albumsByArtist, album.artistId, album)
    this.usersByEmail = new Map()
    for (const user of this.doc.users) this.indexUser(user)
    this.credentialsByHash = new Map()
    this.credentialsByUser = new Map()
    for (const credential of this.doc.credentials) this.indexCredential(credential)
  }

  private indexCredential(credential: Credential, previous?: Credential): void {
    this.credentialsByHash.set(credential.hash, credential)
    const list = this.credentialsByUser.get(credential.userId)
    const at = previous && list ? list.indexOf(previous) : -1
    if (list && at >= 0) list[at] = credential
    else push(this.credentialsByUser, credential.userId, credential)
  }

  /**
   * Indexes a user by the folded form of the email. Files written before emails were folded may hold look-alike
   * addresses of two users: the first registered keeps the address, as it would have had the check existed.
   */
  private indexUser(user: User): void {
    const key = emailKey(user.email)
    const current = this.usersByEmail.get(key)
    if (!current || current.id === user.id) this.usersByEmail.set(key, user)
  }

  /**
   * Removes credentials that can never be used again from the records and the indexes. Not journaled, and needing
   * no undo: whatever state a dead credential was last written in is dead too, so the data file may keep it until
   * its next compaction, and a rollback may leave it gone.
   */
  private drop(dead: readonly Credential[]): void {
    if (dead.length === 0) return
    const gone = new Set(dead)
    const records = this.doc.credentials
    let kept = 0
    for (const record of records) if (!gone.has(record)) records[kept++] = record
    records.length = kept
    const users = new Set<number>()
    for (const credential of dead) {
      if (this.credentialsByHash.get(credential.hash) === credential) this.credentialsByHash.delete(credential.hash)
      users.add(credential.userId)
    }
    for (const userId of users) {
      const remaining = (this.credentialsByUser.get(userId) ?? []).filter((credential) => !gone.has(credential))
      if (remaining.length > 0) this.credentialsByUser.set(userId, remaining)
      else this.credentialsByUser.delete(userId)
    }
  }

  /**
   * Enforces `limit` before the user gets a new credential of `kind`: purges the user's dead credentials, then
   * refuses, or revokes the oldest live ones, so that the new one is at most the `max`th.
   */
  private makeRoom({ userId, kind, createdAt }: New<Credential>, { max, whenFull }: CredentialLimit): void {
    const at = Date.parse(createdAt)
    this.drop((this.credentialsByUser.get(userId) ?? []).filter((credential) => isDead(credential, at)))
    const live = (this.credentialsByUser.get(userId) ?? []).filter((credential) => credential.kind === kind)
    const excess = live.length - max + 1
    if (excess <= 0) return
    if (whenFull === 'refuse') throw new CredentialLimitError(max)
    // Oldest first: the user's list is in id order, which is the order of creation.
    for (const oldest of live.slice(0, excess)) this.put('credentials', { ...oldest, revokedAt: createdAt })
  }

  private nextId(counter: Collection): number {
    this.undoLog()
    this.doc.counters[counter] += 1
    return this.doc.counters[counter]
  }

  private undoLog(): UndoLog {
    this.undo ??= { counters: { ...this.doc.counters }, replaced: [] }
    return this.undo
  }

  /** Stores a new or changed record, keeping the indexes and the next journal entry up to date. */
  private put<C extends Collection>(name: C, record: Document[C][number], logged = true): void {
    const records = this.doc[name] as StoredRecord[]
    const previous = upsert(records, record)
    if (previous && logged) this.undoLog().replaced.push([this.doc, name, previous])
    if (name === 'artists')
      if (previous) this.artistLists.replaced(previous as Artist, record as Artist)
      else this.artistLists.appended(record as Artist)
    if (name === 'albums' && !previous) push(this.albumsByArtist, (record as Album).artistId, record as Album)
    if (name === 'users') this.indexUser(record as User)
    if (name === 'credentials') this.indexCredential(record as Credential, previous as Credential | undefined)
    const changed = this.changed.get(name) ?? new Map<number, StoredRecord>()
    this.changed.set(name, changed.set(record.id, record))
  }

  /** Applies `change` in the next group commit; resolves with its result once durable. */
  private async change<T>(change: () => T): Promise<T> {
    if (this.closed) throw new StoreUnavailableError('the store is closed')
    return this.commits.submit(change)
  }

  private async persist(): Promise<void> {
    const changed = this.changed
    this.changed = new Map()
    if (!this.replacedAll && changed.size === 0) {
      // Nothing to save (a purge, or changes that changed nothing): no journal line, no fsync.
      this.undo = undefined
      return
    }
    try {
      if (this.replacedAll) await this.persistence.replace(this.snapshotDocument())
      else await this.persistence.commit(this.entryOf(changed), () => this.snapshotDocument())
    } catch (error) {
      throw new StoreUnavailableError(`the change could not be saved: ${(error as Error).message}`, { cause: error })
    }
    this.undo = undefined
    this.replacedAll = false
  }

  private entryOf(changed: Map<Collection, Map<number, StoredRecord>>): JournalEntry {
    const entry: JournalEntry = { counters: { ...this.doc.counters } }
    for (const [name, records] of changed) (entry as Record<Collection, StoredRecord[]>)[name] = [...records.values()]
    return entry
  }

  private rollback(): void {
    const undo = this.undo
    this.undo = undefined
    this.replacedAll = false
    this.changed = new Map()
    if (!undo) return
    if (undo.document) this.db.data = undo.document
    // By id, not by position: a purge in the batch may have removed records from the middle of a collection.
    for (const name of COLLECTIONS) this.doc[name].length = countUpTo(this.doc[name], undo.counters[name])
    for (const [document, name, previous] of undo.replaced.reverse())
      if (document === this.doc) upsert(this.doc[name] as StoredRecord[], previous)
    this.doc.counters = undo.counters
    this.index()
  }

  /** The document as it is now, in fresh arrays of the (unchanging) records: safe to write while changes go on. */
  private snapshotDocument(): Document {
    const { version, counters, artists, albums, users, credentials } = this.doc
    return {
      version,
      counters: { ...counters },
      artists: artists.slice(),
      albums: albums.slice(),
      users: users.slice(),
      credentials: credentials.slice(),
    }
  }

  readonly artists = {
    get: async (id: number): Promise<Artist | undefined> => this.doc.artists[indexById(this.doc.artists, id)],
    list: async (page: Page, query?: ListQuery<ArtistSort>): Promise<Slice<Artist>> =>
      query?.q || (query?.sort && query.sort !== 'id')
        ? this.artistLists.list(page, query)
        : { items: this.doc.artists.slice(page.offset, page.offset + page.limit), total: this.doc.artists.length },
    insert: (fields: New<Artist>): Promise<Artist> =>
      this.change(() => {
        const artist = artistRecord(this.nextId('artists'), fields)
        this.put('artists', artist)
        return artist
      }),
    replace: (artist: Artist): Promise<Artist | undefined> =>
      this.change(() => {
        if (indexById(this.doc.artists, artist.id) < 0) return undefined
        const record = artistRecord(artist.id, artist)
        this.put('artists', record)
        return record
      }),
  }

  readonly albums = {
    get: async (id: number): Promise<Album | undefined> => this.doc.albums[indexById(this.doc.albums, id)],
    listByArtist: async (
      artistId: number,
      page: Page,
      query: ListQuery<AlbumSort> = {},
    ): Promise<Slice<Album> | undefined> => {
      if (indexById(this.doc.artists, artistId) < 0) return undefined
      return listAlbums(this.albumsByArtist.get(artistId) ?? noAlbums, page, query)
    },
    insert: (fields: New<Album>): Promise<Album | undefined> =>
      this.change(() => {
        if (indexById(this.doc.artists, fields.artistId) < 0) return undefined
        const album = albumRecord(this.nextId('albums'), fields)
        this.put('albums', album)
        return album
      }),
  }

  readonly users = {
    get: async (id: number): Promise<User | undefined> => this.doc.users[indexById(this.doc.users, id)],
    findByEmail: async (email: string): Promise<User | undefined> => this.usersByEmail.get(emailKey(email)),
    insert: (fields: New<User>): Promise<User> =>
      this.change(() => {
        // Checked and claimed in one step of the commit, so two concurrent sign-ups cannot both pass.
        if (this.usersByEmail.has(emailKey(fields.email))) throw new DuplicateEmailError(fields.email)
        const user = { id: this.nextId('users'), ...fields }
        this.put('users', user)
        return user
      }),
  }

  readonly credentials = {
    findByHash: async (hash: string): Promise<Credential | undefined> => this.credentialsByHash.get(hash),
    listByUser: async (userId: number): Promise<readonly Credential[]> => this.credentialsByUser.get(userId) ?? [],
    insert: (fields: New<Credential>, limit?: CredentialLimit): Promise<Credential> =>
      this.change(() => {
        if (limit) this.makeRoom(fields, limit)
        const credential = { id: this.nextId('credentials'), ...fields }
        this.put('credentials', credential)
        return credential
      }),
    revoke: (id: number, at: string): Promise<Credential | undefined> =>
      this.change(() => {
        const credential = this.doc.credentials[indexById(this.doc.credentials, id)]
        if (!credential || credential.revokedAt !== null) return credential
        const revoked = { ...credential, revokedAt: at }
        this.put('credentials', revoked)
        return revoked
      }),
    touch: (id: number, at: string): void => {
      const credential = this.doc.credentials[indexById(this.doc.credentials, id)]
      // Not a write of its own: the time rides along with the next commit, or is saved on close.
      if (credential) this.put('credentials', { ...credential, lastUsedAt: at }, false)
    },
    purge: (now: string): Promise<number> =>
      this.change(() => {
        const at = Date.parse(now)
        const dead = this.doc.credentials.filter((credential) => isDead(credential, at))
        this.drop(dead)
        return dead.length
      }),
  }

  async isEmpty(): Promise<boolean> {
    return this.empty()
  }

  /** The store can always serve: it answers from memory. */
  async check(): Promise<void> {}

  private empty(): boolean {
    return this.doc.artists.length === 0 && this.doc.albums.length === 0 && this.doc.users.length === 0
  }

  load(
    catalogue: readonly CatalogueEntry[],
    { cover, ifEmpty = false }: LoadOptions = {},
  ): Promise<{ artists: number; albums: number } | undefined> {
    const imageOf = (image: string | null | undefined, kind: 'artist' | 'album', id: number) =>
      image !== undefined ? (image ?? undefined) : cover?.(kind, id)
    return this.change(() => {
      if (ifEmpty && !this.empty()) return undefined
      let albums = 0
      for (const entry of catalogue) {
        const artistId = this.nextId('artists')
        this.put('artists', artistRecord(artistId, { ...entry, image: imageOf(entry.image, 'artist', artistId) }))
        for (const fields of entry.albums) {
          const id = this.nextId('albums')
          this.put('albums', albumRecord(id, { ...fields, artistId, image: imageOf(fields.image, 'album', id) }))
          albums += 1
        }
      }
      return { artists: catalogue.length, albums }
    })
  }

  async snapshot(): Promise<Snapshot> {
    return structuredClone(this.doc) as unknown as Snapshot
  }

  restore(snapshot: Snapshot): Promise<void> {
    return this.change(() => {
      this.undoLog().document ??= this.doc
      // A fresh copy each time, so the snapshot can be restored again.
      this.db.data = structuredClone(snapshot as unknown as Document)
      this.replacedAll = true
      this.index()
    })
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    await this.commits.idle()
    // Folds the journal into the data file, last-used times included.
    await this.persistence.close(this.snapshotDocument())
  }
}
