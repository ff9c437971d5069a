import type { Store } from './store.ts'

/**
 * A {@link Store} that hands each call to another, picked per call: reads to {@link read}'s, writes to
 * {@link write}'s. What is not a read or a write of records (brakes, the change feed, the reset point, closing) is the
 * subclass's: a namespace of `--fixtures` (src/fixtures/namespaced-store.ts) and an in-process service sharing its app
 * with others (src/service.ts) each answer those their own way.
 */
export abstract class DelegatingStore implements Store {
  /** The store that answers a read now. */
  protected abstract read(): Store
  /** The store that makes a write now. */
  protected abstract write(): Store

  abstract readonly limiter: Store['limiter']
  abstract readonly recents: Store['recents']
  abstract readonly changes: Store['changes']
  abstract resetPoint(): ReturnType<Store['resetPoint']>
  abstract check(): Promise<void>
  abstract close(): Promise<void>

  readonly artists: Store['artists'] = {
    get: (id) => this.read().artists.get(id),
    list: (page, query) => this.read().artists.list(page, query),
    insert: (fields, by, keep) => this.write().artists.insert(fields, by, keep),
    replace: (artist, condition, by) => this.write().artists.replace(artist, condition, by),
    history: (artistId, page) => this.read().artists.history(artistId, page),
  }

  readonly albums: Store['albums'] = {
    get: (id) => this.read().albums.get(id),
    listByArtist: (artistId, page, query) => this.read().albums.listByArtist(artistId, page, query),
    insert: (fields, condition, by, keep) => this.write().albums.insert(fields, condition, by, keep),
    replace: (album, condition, by) => this.write().albums.replace(album, condition, by),
    remove: (artistId, id, condition, by) => this.write().albums.remove(artistId, id, condition, by),
  }

  readonly users: Store['users'] = {
    get: (id) => this.read().users.get(id),
    findByEmail: (email) => this.read().users.findByEmail(email),
    insert: (fields) => this.write().users.insert(fields),
    list: (page) => this.read().users.list(page),
    update: (id, changes) => this.write().users.update(id, changes),
    startEpoch: (id, changes, at) => this.write().users.startEpoch(id, changes, at),
  }

  readonly credentials: Store['credentials'] = {
    findByHash: (hash) => this.read().credentials.findByHash(hash),
    listByUser: (userId) => this.read().credentials.listByUser(userId),
    insert: (fields, limit) => this.write().credentials.insert(fields, limit),
    revoke: (id, at) => this.write().credentials.revoke(id, at),
    revokeAll: (userId, kind, at) => this.write().credentials.revokeAll(userId, kind, at),
    // A use of a credential is a change like any other (of a namespace's start-up state, it makes the namespace's own).
    noteUse: (id, at) => this.write().credentials.noteUse(id, at),
    purge: (now) => this.write().credentials.purge(now),
  }

  readonly idempotency: Store['idempotency'] = {
    claim: (request, now, limits) => this.write().idempotency.claim(request, now, limits),
    release: (request, claim) => this.write().idempotency.release(request, claim),
    keep: (request, claim, answer, expiresAt) => this.write().idempotency.keep(request, claim, answer, expiresAt),
  }

  isEmpty(): Promise<boolean> {
    return this.read().isEmpty()
  }

  load: Store['load'] = (catalogue, options) => this.write().load(catalogue, options)

  snapshot(): ReturnType<Store['snapshot']> {
    return this.read().snapshot()
  }

  restore: Store['restore'] = (snapshot) => this.write().restore(snapshot)
}
