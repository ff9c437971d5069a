import type { Low } from 'lowdb'
import { type Document, emptyDocument } from './document.ts'
import { GroupCommit } from './group-commit.ts'
import {
  type Album,
  type Artist,
  type CatalogueEntry,
  type Credential,
  DuplicateEmailError,
  type LoadOptions,
  type New,
  type Page,
  type Store,
  StoreUnavailableError,
  type User,
} from './store.ts'

/** Index of the record with `id` in an array sorted by id, or -1. */
function indexById(records: readonly { id: number }[], id: number): number {
  let low = 0
  let high = records.length - 1
  while (low <= high) {
    const middle = (low + high) >>> 1
    const current = (records[middle] as { id: number }).id
    if (current === id) return middle
    if (current < id) low = middle + 1
    else high = middle - 1
  }
  return -1
}

function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key)
  if (list) list.push(value)
  else map.set(key, [value])
}

const noAlbums: Album[] = []

// Records are rebuilt field by field so that the file and the responses always list fields in the same order.
const artistRecord = (id: number, { name, description, image, band }: New<Artist>): Artist => ({
  id,
  name,
  description,
  image,
  band,
})
const albumRecord = (id: number, { artistId, name, year, image }: New<Album>): Album => ({
  id,
  artistId,
  name,
  year,
  image,
})

/**
 * The {@link Store} over one lowdb document held in memory, with the indexes that keep reads independent of the
 * catalogue's size. Every write changes the document in place and then waits for a group commit through the lowdb
 * adapter; if that commit fails, the document is reloaded from the adapter and the write is refused.
 */
export class DocumentStore implements Store {
  private albumsByArtist = new Map<number, Album[]>()
  private usersByEmail = new Map<string, User>()
  private credentialsByHash = new Map<string, Credential>()
  private credentialsByUser = new Map<number, Credential[]>()
  private readonly commits: GroupCommit
  private touched = false
  private closed = false

  /** Wraps a lowdb instance whose `data` has been read (or is null for a new store). */
  constructor(
    private readonly db: Low<Document>,
    private readonly release: () => Promise<void> = async () => {},
  ) {
    db.data ??= emptyDocument()
    this.index()
    this.commits = new GroupCommit(
      () => db.write(),
      async () => {
        // The adapter still holds the last durable state: the failed write never replaced it.
        const durable = await db.adapter.read()
        return () => {
          db.data = durable ?? emptyDocument()
          this.index()
        }
      },
    )
  }

  private get doc(): Document {
    return this.db.data
  }

  private index(): void {
    this.albumsByArtist = new Map()
    for (const album of this.doc.albums) push(this.albumsByArtist, album.artistId, album)
    this.usersByEmail = new Map(this.doc.users.map((user) => [user.email, user]))
    this.credentialsByHash = new Map()
    this.credentialsByUser = new Map()
    for (const credential of this.doc.credentials) this.indexCredential(credential)
  }

  private indexCredential(credential: Credential): void {
    this.credentialsByHash.set(credential.hash, credential)
    push(this.credentialsByUser, credential.userId, credential)
  }

  private nextId(counter: keyof Document['counters']): number {
    this.doc.counters[counter] += 1
    return this.doc.counters[counter]
  }

  /** Waits until the change just made in memory is durable. */
  private async commit(): Promise<void> {
    if (this.closed) throw new StoreUnavailableError('the store is closed')
    try {
      await this.commits.request()
      this.touched = false
    } catch (error) {
      throw new StoreUnavailableError(`the change could not be saved: ${(error as Error).message}`, { cause: error })
    }
  }

  readonly artists = {
    get: (id: number): Artist | undefined => this.doc.artists[indexById(this.doc.artists, id)],
    list: ({ limit, offset }: Page) => ({
      items: this.doc.artists.slice(offset, offset + limit),
      total: this.doc.artists.length,
    }),
    insert: async (fields: New<Artist>): Promise<Artist> => {
      const artist = artistRecord(this.nextId('artists'), fields)
      this.doc.artists.push(artist)
      await this.commit()
      return artist
    },
    replace: async (artist: Artist): Promise<Artist | undefined> => {
      const at = indexById(this.doc.artists, artist.id)
      if (at < 0) return undefined
      const record = artistRecord(artist.id, artist)
      this.doc.artists[at] = record
      await this.commit()
      return record
    },
  }

  readonly albums = {
    get: (id: number): Album | undefined => this.doc.albums[indexById(this.doc.albums, id)],
    listByArtist: (artistId: number, { limit, offset }: Page) => {
      if (indexById(this.doc.artists, artistId) < 0) return undefined
      const albums = this.albumsByArtist.get(artistId) ?? noAlbums
      return { items: albums.slice(offset, offset + limit), total: albums.length }
    },
    insert: async (fields: New<Album>): Promise<Album | undefined> => {
      if (indexById(this.doc.artists, fields.artistId) < 0) return undefined
      const album = albumRecord(this.nextId('albums'), fields)
      this.doc.albums.push(album)
      push(this.albumsByArtist, album.artistId, album)
      await this.commit()
      return album
    },
  }

  readonly users = {
    get: (id: number): User | undefined => this.doc.users[indexById(this.doc.users, id)],
    findByEmail: (email: string): User | undefined => this.usersByEmail.get(email),
    insert: async (fields: New<User>): Promise<User> => {
      // Checked and claimed in one synchronous step, so two concurrent sign-ups cannot both pass.
      if (this.usersByEmail.has(fields.email)) throw new DuplicateEmailError(fields.email)
      const user = { id: this.nextId('users'), ...fields }
      this.doc.users.push(user)
      this.usersByEmail.set(user.email, user)
      await this.commit()
      return user
    },
  }

  readonly credentials = {
    findByHash: (hash: string): Credential | undefined => this.credentialsByHash.get(hash),
    listByUser: (userId: number): readonly Credential[] => this.credentialsByUser.get(userId) ?? [],
    insert: async (fields: New<Credential>): Promise<Credential> => {
      const credential = { id: this.nextId('credentials'), ...fields }
      this.doc.credentials.push(credential)
      this.indexCredential(credential)
      await this.commit()
      return credential
    },
    revoke: async (id: number, at: string): Promise<Credential | undefined> => {
      const credential = this.doc.credentials[indexById(this.doc.credentials, id)]
      if (!credential) return undefined
      credential.revokedAt ??= at
      await this.commit()
      return credential
    },
    touch: (id: number, at: string): void => {
      const credential = this.doc.credentials[indexById(this.doc.credentials, id)]
      if (!credential) return
      credential.lastUsedAt = at
      this.touched = true
    },
  }

  isEmpty(): boolean {
    return this.doc.artists.length === 0 && this.doc.albums.length === 0 && this.doc.users.length === 0
  }

  async load(
    catalogue: readonly CatalogueEntry[],
    { cover }: LoadOptions = {},
  ): Promise<{ artists: number; albums: number }> {
    const imageOf = (image: string | null | undefined, kind: 'artist' | 'album', id: number) =>
      image !== undefined ? image : cover ? cover(kind, id) : null
    let albums = 0
    for (const entry of catalogue) {
      const artistId = this.nextId('artists')
      const artist = artistRecord(artistId, { ...entry, image: imageOf(entry.image, 'artist', artistId) })
      this.doc.artists.push(artist)
      for (const fields of entry.albums) {
        const id = this.nextId('albums')
        const album = albumRecord(id, { ...fields, artistId, image: imageOf(fields.image, 'album', id) })
        this.doc.albums.push(album)
        push(this.albumsByArtist, artist.id, album)
        albums += 1
      }
    }
    await this.commit()
    return { artists: catalogue.length, albums }
  }

  async close(): Promise<void> {
    if (this.closed) return
    // Last-used times are kept in memory between writes; save them on the way out.
    if (this.touched) await this.commit().catch(() => {})
    this.closed = true
    await this.commits.idle()
    await this.release()
  }
}
