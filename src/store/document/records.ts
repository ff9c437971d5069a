import type { Low } from 'lowdb'
import type { Album } from '../../model/album.ts'
import type { Artist } from '../../model/artist.ts'
import type { Credential } from '../../model/credential.ts'
import { emailKey } from '../../model/email.ts'
import { type ArtistChange, artistOfChange, HISTORY_PER_ARTIST } from '../../model/history.ts'
import { COLLECTIONS, type Collection, type StoreDocument, type StoreRecord } from '../../model/store-document.ts'
import type { User } from '../../model/user.ts'
import { IdsExhaustedError } from '../store.ts'
import { ArtistLists } from './artist-lists.ts'
import { IdempotencyTable } from './idempotency-table.ts'
import { indexById, upsert } from './persistence.ts'

function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key)
  if (list) list.push(value)
  else map.set(key, [value])
}

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

/** The history of a document the store now owns, taken out of it (the store keeps it by artist). */
function takeHistory(document: StoreDocument): readonly ArtistChange[] {
  const history = document.history ?? []
  delete document.history
  return history
}

/** What puts records back as they were before a batch (see `Batch`), should persisting it fail. */
export interface Rewind {
  /** The counters before the batch: every record it added has a greater id. */
  counters: StoreDocument['counters']
  /** Records replaced, with the document that held them, in the order they were replaced. */
  replaced: [StoreDocument, Collection, StoreRecord][]
  /** The whole previous document, when the batch replaced it (a restore), its history included. */
  document?: StoreDocument
  /** The last change id given before the batch. */
  lastChangeId: number
  /** The history of each artist the batch added a change to, as it was before (`undefined`: none). */
  history?: Map<number, readonly ArtistChange[] | undefined>
}

/**
 * The records of one lowdb document held in memory, with the indexes that keep reads independent of the catalogue's
 * size. The lowest layer of the document store: it knows nothing of commits, and changes only when told to.
 * Records are never edited in place: a change puts a new object, so snapshots are cheap and consistent, and caches
 * derived from a record cannot go stale. Every record held is frozen (`Object.freeze`), so an edit in place throws
 * (modules are strict code) instead of going unnoticed.
 */
export class Records {
  readonly artistLists = new ArtistLists(() => this.doc.artists)
  /** The idempotency keys: claims in flight and kept answers, which a data file holds beside the records. */
  readonly idempotency = new IdempotencyTable()
  private albumsByArtistId = new Map<number, Album[]>()
  private usersByEmail = new Map<string, User>()
  private credentialsByHash = new Map<string, Credential>()
  private credentialsByUser = new Map<number, Credential[]>()
  /**
   * The history of each artist, oldest first, at most {@link HISTORY_PER_ARTIST} changes: the one place it is kept
   * (the document's `history` is taken out when indexed, and made again by `snapshot`). Each list is replaced, never
   * changed in place, so a page read from one stays as it was.
   */
  private history = new Map<number, readonly ArtistChange[]>()
  /** The last change id given: ids only grow, whatever the retention drops. */
  lastChangeId = 0

  /** Wraps a lowdb instance whose `data` holds the document. */
  constructor(private readonly db: Low<StoreDocument>) {
    this.takeKept(Date.now())
    // A copy without the history: the caller's document stays as it was (a data file's is compacted from it).
    const { history, ...document } = db.data
    if (history) db.data = document
    this.index()
    this.indexHistory(history ?? [])
  }

  /** Moves the answers a read document holds into {@link idempotency}, leaving the document records only. */
  private takeKept(now: number): void {
    const { idempotency } = this.doc
    if (idempotency === undefined) return
    delete this.doc.idempotency
    this.idempotency.load(idempotency, now)
  }

  get doc(): StoreDocument {
    return this.db.data
  }

  artist(id: number): Artist | undefined {
    return this.doc.artists[indexById(this.doc.artists, id)]
  }

  album(id: number): Album | undefined {
    return this.doc.albums[indexById(this.doc.albums, id)]
  }

  user(id: number): User | undefined {
    return this.doc.users[indexById(this.doc.users, id)]
  }

  credential(id: number): Credential | undefined {
    return this.doc.credentials[indexById(this.doc.credentials, id)]
  }

  /** The artist's albums in id order, or `undefined` when there is no such artist. */
  albumsOf(artistId: number): readonly Album[] | undefined {
    if (indexById(this.doc.artists, artistId) < 0) return undefined
    return this.albumsByArtistId.get(artistId) ?? []
  }

  /** The user whose email has the folded form `key` (see `emailKey`). */
  userByEmailKey(key: string): User | undefined {
    return this.usersByEmail.get(key)
  }

  credentialByHash(hash: string): Credential | undefined {
    return this.credentialsByHash.get(hash)
  }

  /** The user's credentials, in id order. */
  credentialsOf(userId: number): readonly Credential[] {
    return this.credentialsByUser.get(userId) ?? []
  }

  /** True when there is no artist, album or user. */
  isEmpty(): boolean {
    return this.doc.artists.length === 0 && this.doc.albums.length === 0 && this.doc.users.length === 0
  }

  /** Whether nothing was ever stored: no record, and every counter where a new document has it. */
  neverWritten(): boolean {
    const { counters } = this.doc
    const given = counters.artists + counters.albums + counters.users + counters.credentials
    return given === 0 && this.isEmpty() && this.doc.credentials.length === 0
  }

  /**
   * Moves the counter of `collection` on, and returns the id it now gives; {@link IdsExhaustedError} when the next id
   * would not be a safe integer (two records would then get the same number).
   */
  nextId(collection: Collection): number {
    if (this.doc.counters[collection] >= Number.MAX_SAFE_INTEGER) throw new IdsExhaustedError(collection)
    this.doc.counters[collection] += 1
    return this.doc.counters[collection]
  }

  /** Stores a new or changed record, keeping the indexes up to date; returns the record it replaced. */
  put<C extends Collection>(name: C, record: StoreDocument[C][number]): StoreRecord | undefined {
    // Frozen: "never edited in place" is enforced, not just promised (an assignment to it throws).
    Object.freeze(record)
    const previous = upsert(this.doc[name] as StoreRecord[], record)
    if (name === 'artists')
      if (previous) this.artistLists.replaced(previous as Artist, record as Artist)
      else this.artistLists.appended(record as Artist)
    if (name === 'albums')
      if (!previous) push(this.albumsByArtistId, (record as Album).artistId, record as Album)
      else {
        // A new array, so that orders derived from the old one are not taken for it (album-lists.ts).
        const album = record as Album
        const list = this.albumsByArtistId.get(album.artistId) ?? []
        this.albumsByArtistId.set(
          album.artistId,
          list.map((each) => (each.id === album.id ? album : each)),
        )
      }
    if (name === 'users') this.indexUser(record as User)
    if (name === 'credentials') this.indexCredential(record as Credential, previous as Credential | undefined)
    return previous
  }

  /**
   * Removes an album from the records and its artist's list. The list is a new array, as on a replacement: what was
   * derived from the old one (its sorted orders, album-lists.ts) cannot be taken for the new one.
   */
  remove(_name: 'albums', album: Album): void {
    const at = indexById(this.doc.albums, album.id)
    if (at >= 0) this.doc.albums.splice(at, 1)
    const list = this.albumsByArtistId.get(album.artistId)
    if (list)
      this.albumsByArtistId.set(
        album.artistId,
        list.filter((each) => each.id !== album.id),
      )
  }

  /** Removes credentials from the records and the indexes. */
  drop(dead: readonly Credential[]): void {
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

  /** Replaces the whole document (a restore), history included; returns the one it replaced, with its history. */
  replaceDocument(document: StoreDocument): StoreDocument {
    const previous = this.doc
    previous.history = this.historyList()
    const given = this.lastChangeId
    this.db.data = document
    // The answers kept spoke of the catalogue replaced: a retry after a restore (or a fixture reset) runs again.
    delete this.doc.idempotency
    this.idempotency.clear()
    this.index()
    this.indexHistory(takeHistory(document))
    // Change ids are never given twice, even after a restore of an older backup.
    this.lastChangeId = Math.max(given, this.lastChangeId)
    return previous
  }

  /** Puts the records back as `rewind` says they were. */
  rewind({ counters, replaced, document, lastChangeId, history }: Rewind): void {
    if (document) this.db.data = document
    // By id, not by position: a purge in the batch may have removed records from the middle of a collection.
    for (const name of COLLECTIONS) this.doc[name].length = countUpTo(this.doc[name], counters[name])
    for (const [holder, name, previous] of [...replaced].reverse())
      if (holder === this.doc) upsert(this.doc[name] as StoreRecord[], previous)
    this.doc.counters = counters
    this.index()
    if (document) this.indexHistory(takeHistory(document))
    for (const [artistId, list] of history ?? [])
      if (list) this.history.set(artistId, list)
      else this.history.delete(artistId)
    this.lastChangeId = lastChangeId
  }

  /** The id of a new change. */
  nextChangeId(): number {
    if (this.lastChangeId >= Number.MAX_SAFE_INTEGER) throw new IdsExhaustedError('changes')
    this.lastChangeId += 1
    return this.lastChangeId
  }

  /**
   * Adds `change` to its artist's history, dropping the oldest beyond {@link HISTORY_PER_ARTIST}; returns the history
   * as it was (`undefined` for none). A new list each time: at most that many changes copied.
   */
  addChange(change: ArtistChange): readonly ArtistChange[] | undefined {
    Object.freeze(change)
    const artistId = artistOfChange(change)
    const previous = this.history.get(artistId)
    const kept = previous ? previous.slice(Math.max(0, previous.length - HISTORY_PER_ARTIST + 1)) : []
    kept.push(change)
    this.history.set(artistId, kept)
    return previous
  }

  /** The history of an artist, oldest first (empty for none). */
  changesOf(artistId: number): readonly ArtistChange[] {
    return this.history.get(artistId) ?? []
  }

  /** The `history` of a document of the records now: absent when empty, as in a document of earlier builds. */
  historyPart(): Pick<StoreDocument, 'history'> {
    const history = this.historyList()
    return history.length > 0 ? { history } : {}
  }

  /** Every artist's history in one list, in id order: what a data file and a snapshot hold. */
  historyList(): ArtistChange[] {
    const all: ArtistChange[] = []
    for (const list of this.history.values()) all.push(...list)
    return all.sort((a, b) => a.id - b.id)
  }

  /**
   * Takes the history out of `document` into the index: the last {@link HISTORY_PER_ARTIST} changes of each artist
   * (a journal replayed onto a file may hold more, until its next compaction).
   */
  private indexHistory(list: readonly ArtistChange[]): void {
    const byArtist = new Map<number, ArtistChange[]>()
    let last = 0
    for (const change of [...list].sort((a, b) => a.id - b.id)) {
      // A change listed twice (a hand-edited file) is kept once.
      if (change.id === last) continue
      push(byArtist, artistOfChange(change), Object.freeze(change))
      last = change.id
    }
    this.history = new Map()
    for (const [artistId, changes] of byArtist)
      this.history.set(artistId, changes.slice(Math.max(0, changes.length - HISTORY_PER_ARTIST)))
    this.lastChangeId = last
  }

  /** The document as it is now, in fresh arrays of the (unchanging) records: safe to write while changes go on. */
  snapshot(): StoreDocument {
    const { version, counters, artists, albums, users, credentials } = this.doc
    const document: StoreDocument = {
      version,
      counters: { ...counters },
      artists: artists.slice(),
      albums: albums.slice(),
      users: users.slice(),
      credentials: credentials.slice(),
      ...this.historyPart(),
    }
    const kept = this.idempotency.kept()
    if (kept.length > 0) document.idempotency = kept
    return document
  }

  private index(): void {
    // Every record read from a file or restored is frozen as it is indexed, as `put` freezes every new one.
    for (const name of COLLECTIONS) for (const record of this.doc[name]) Object.freeze(record)
    this.artistLists.reset()
    this.albumsByArtistId = new Map()
    for (const album of this.doc.albums) push(this.albumsByArtistId, album.artistId, album)
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
}
