import { hostname } from 'node:os'
import type { SQL } from 'bun'
import type { PoolUse, StoreMetrics } from '../../metrics/metrics.ts'
import type { Album } from '../../model/album.ts'
import type { Artist } from '../../model/artist.ts'
import type { CatalogueEntry } from '../../model/catalogue.ts'
import type { Credential, NewCredential } from '../../model/credential.ts'
import { emailKey } from '../../model/email.ts'
import type { New } from '../../model/form.ts'
import { type ArtistChange, OPERATOR } from '../../model/history.ts'
import type { AlbumQuery, ArtistSort, ListQuery } from '../../model/search.ts'
import type { StoreDocument, StoredDocument } from '../../model/store-document.ts'
import { upgradeDocument } from '../../model/upgrade.ts'
import type { NewUser, User } from '../../model/user.ts'
import { StoreAvailability } from '../availability.ts'
import { albumTag, artistTag, holds, type Precondition, StaleVersionError } from '../entity-tag.ts'
import type { KeepAnswer } from '../idempotency.ts'
import {
  type CredentialLimit,
  DatabaseUnavailableError,
  DuplicateEmailError,
  type Limiter,
  type LoadOptions,
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
import { recordChanges, SqlChanges, type SqlChangesOptions } from './changes.ts'
import { causeOf, connectSql, describeTarget, preparesStatements } from './connect.ts'
import {
  insertCredential,
  purgeCredentials,
  revokeAllCredentials,
  revokeCredential,
  startUserEpoch,
} from './credentials.ts'
import { listHistory, replaceHistory } from './history.ts'
import { sqlIdempotency } from './idempotency.ts'
import { SqlLimiter, SqlRecents } from './limiter.ts'
import { bounded } from './limits.ts'
import { listAlbums, listArtists } from './lists.ts'
import { isEmpty, loadCatalogue } from './load.ts'
import { migrate } from './migrate.ts'
import { isStaleConnection, isUnavailable, storeError, within } from './outages.ts'
import { PageCache } from './page-cache.ts'
import { fetchAlbums, fetchArtists, fetchCredentials, fetchUsers, fetchVersions, ReadBatcher } from './reads.ts'
import { inTransaction, retried, sqlState } from './retry.ts'
import { albumOf, albumRow, artistOf, artistRow, credentialOf, userOf, userRow } from './rows.ts'
import { commitWithCounters, dumpConsistent, REPEATABLE_READ, RESET_POINT, replaceAll } from './snapshot.ts'
import {
  insertAlbums,
  keepAnswers,
  lockedArtist,
  STRIPES,
  type Transact,
  takeIds,
  tallyArtists,
  WriteBatcher,
} from './writes.ts'

/** The stripes of the artists' tally, put by each replica as it opens (idempotent, safe against each other). */
const TALLY_ROWS = Array.from({ length: STRIPES }, (_, stripe) => ({ name: 'artists', stripe, count: 0, version: 0 }))

/** A reset point as `rl_snapshots` keeps it, in this build's form: an earlier build may have saved it. */
const savedDocument = (text: string): StoreDocument => upgradeDocument(JSON.parse(text) as StoredDocument)

/** An id the tables can hold; any other cannot name a record. */
const validId = (id: number) => Number.isSafeInteger(id) && id > 0

/** How an SQL store behaves; see {@link openSqlStore}. */
export interface SqlStoreOptions {
  /** Connections in the pool (`--db-pool`). */
  pool?: number
  /** How long to wait for an unreachable database at start (`--db-wait`), in ms. */
  waitMs?: number
  /**
   * A direct URL of the same database (`--data-direct`), when `url` is a connection pooler's: the change feed LISTENs
   * there, which a pooler in transaction mode cannot carry. Giving one also turns named prepared statements off over
   * `url`, unless its `prepare` parameter says otherwise ({@link preparesStatements}).
   */
  direct?: string
  /** How long one statement may run before it is cancelled (limits.ts), in ms. */
  statementTimeoutMs?: number
  /** How long one connection attempt may take, in ms (rounded up to whole seconds). */
  connectTimeoutMs?: number
  /** Close a pooled connection idle for this long, in ms (rounded up to whole seconds); never by default. */
  idleTimeoutMs?: number
  /** How long `check()` waits for `SELECT 1`, in ms. */
  checkTimeoutMs?: number
  /** How often to check the database again while it is away, in ms (availability.ts). */
  probeEveryMs?: number
  /** How often noted credential uses (`credentials.noteUse`) are saved when no write carries them, in ms. */
  saveUsesEveryMs?: number
  /** Who this replica is, in the migration records: host and process id by default. */
  owner?: string
  /** How the changes of every replica are read (changes.ts). */
  changes?: SqlChangesOptions
  /** The longest the write batcher waits for more inserts while another replica writes, in ms (writes.ts). */
  gatherMs?: number
  /**
   * A pool made by {@link connectStorePool}, to open the store over instead of connecting: its caller's, which
   * closing the store leaves open for the next store it opens there (the contract suite over PostgreSQL, a store per
   * test). Pass it with the options it was connected with: the store still reads `pool` (the size its metrics show)
   * and `statementTimeoutMs` (its deadline for a stuck connection) from them.
   */
  over?: SQL
}

/**
 * Opens the store over the database at `url`: connects ({@link connectStorePool}, waiting up to `waitMs` for it, or
 * takes the pool `over`), brings the schema to this build's version (one replica migrates, the others wait), and
 * makes sure the tallies' stripes exist.
 */
export async function openSqlStore(url: string, options: SqlStoreOptions = {}): Promise<SqlStore> {
  const { waitMs = 10_000, statementTimeoutMs = 5000, direct } = options
  const sql = options.over ?? (await connectStorePool(url, options))
  let changes: SqlChanges
  let listening: SQL | undefined
  try {
    // Through the pooled URL: the migration's lock is a lease row (migrate.ts), which needs no session of its own.
    await migrate(sql, { owner: options.owner ?? `${hostname()}:${process.pid}`, waitMs: Math.max(waitMs, 60_000) })
    await sql`INSERT INTO rl_tallies ${sql(TALLY_ROWS)} ON CONFLICT (name, stripe) DO NOTHING`
    // Bun.SQL LISTENs on a connection of its own: this pool's one connection only says at start that the direct URL
    // works, and closes once idle.
    if (direct !== undefined && options.changes?.follow !== false)
      listening = await connectSql(direct, { pool: 1, waitMs, idleTimeoutMs: 1000 }).catch((error: unknown) => {
        throw storeError(error, describeTarget(direct))
      })
    // No direct URL, and statements not prepared: a pooler in transaction mode, through which a LISTEN is lost.
    const listen = listening ?? (preparesStatements(url, direct) ? sql : null)
    changes = await SqlChanges.open(sql, { listen, ...options.changes })
  } catch (error) {
    await listening?.close().catch(() => {})
    if (!options.over) await sql.close().catch(() => {})
    throw storeError(error, describeTarget(url))
  }
  return new SqlStore(sql, url, { ...options, statementTimeoutMs }, changes, listening)
}

/**
 * The pool {@link openSqlStore} connects with: `pool` connections to `url`, tried for up to `waitMs`, its statements
 * held to `statementTimeoutMs` and its transactions to that and to `idle_in_transaction_session_timeout`, set in each
 * transaction or cancelled by the client, never as parameters of a connection, which a pooler refuses (limits.ts).
 * Named prepared statements only when {@link preparesStatements} says so. Bun.SQL opens all of them at the first query.
 */
export async function connectStorePool(url: string, options: SqlStoreOptions = {}): Promise<SQL> {
  const { pool = 10, waitMs = 10_000, statementTimeoutMs = 5000, connectTimeoutMs = 3000 } = options
  const sql = await connectSql(url, {
    pool,
    waitMs,
    connectTimeoutMs: Math.min(connectTimeoutMs, waitMs),
    idleTimeoutMs: options.idleTimeoutMs,
    prepare: preparesStatements(url, options.direct),
  })
  // A transaction left open by a client that vanished frees its locks too.
  return bounded(sql, {
    statementMs: statementTimeoutMs,
    idleInTransactionMs: Math.max(2 * statementTimeoutMs, 10_000),
  })
}

/**
 * The {@link Store} over a database that speaks the PostgreSQL protocol (PostgreSQL 13+, CockroachDB), shared by
 * any number of replicas: everything lives in the database, nothing in the process but credential uses not yet
 * saved (see `credentials.noteUse`).
 *
 * - Ids come from sequences, and `meta.total` from the artists' tally (`rl_tallies`, a few stripes that reads add up)
 *   and each artist's `album_count`, updated in the transaction of the write: concurrent creates on two replicas never
 *   share an id, no list counts its table, and no row is locked by every write of a kind: writes on several replicas
 *   commit side by side.
 * - Artist and album inserts are batched (writes.ts): those that arrive while a transaction is in flight share the
 *   next one; while another replica writes, also those that come up to 2 ms after it (larger batches). Every other
 *   write is a transaction of its own, retried on serialization failures (retry.ts).
 * - Reads by id (artists, albums, users, credentials by hash) asked in one turn of the event loop share one
 *   statement (reads.ts); pages of the artist list are kept, and served again while the artists' version (the sum
 *   of the tally's stripes' versions), moved on by every write to them, is unchanged (page-cache.ts).
 * - Searches and name orders use columns computed by the app with the document store's own rules (rows.ts), so both
 *   stores answer alike.
 * - The reset point (`snapshot`) is a row of `rl_snapshots`, taken by the first replica that asks and shared by all:
 *   `restore` on any replica brings every replica back to that same state, in one transaction.
 * - Faults: a lost or unreachable database, or a statement past its timeout, fail with `DatabaseUnavailableError`
 *   naming host, port and cause (never the password), within a few seconds; the pool reconnects by itself when the
 *   database is back.
 */
export class SqlStore implements Store {
  private readonly writes: WriteBatcher
  private readonly target: string
  private readonly deadlineMs: number
  private readonly checkTimeoutMs: number
  private readonly timer: ReturnType<typeof setInterval>
  /** Pages of the artist list read lately, with the version of the artists they were read at. */
  private readonly artistPages = new PageCache<Artist>()
  /** Reads by id, and of versions, asked in one turn of the event loop: one statement each (reads.ts). */
  private readonly artistReads = new ReadBatcher((ids: number[]) => this.read(() => fetchArtists(this.sql, ids)))
  private readonly albumReads = new ReadBatcher((ids: number[]) => this.read(() => fetchAlbums(this.sql, ids)))
  private readonly versionReads = new ReadBatcher((names: string[]) => this.read(() => fetchVersions(this.sql, names)))
  // The two reads of every request with a user's token or key: the credential, then its account.
  private readonly userReads = new ReadBatcher((ids: number[]) => this.read(() => fetchUsers(this.sql, ids)))
  private readonly credentialReads = new ReadBatcher((hashes: string[]) =>
    this.read(() => fetchCredentials(this.sql, hashes)),
  )
  private closed = false
  /** Whether `close()` closes the pool: not one the store was opened `over`. */
  private readonly ownsPool: boolean
  private readonly poolSize: number
  /** Counted only once instrumented (`--metrics`). */
  private metrics: StoreMetrics | undefined
  private pool: PoolUse | undefined
  /** After a write that may have recorded changes: this replica reads them now, the others are woken up. */
  private readonly changed = () => this.changes.written()
  /** Whether the database answers, as every operation finds it; checked every few seconds while it does not. */
  readonly availability: StoreAvailability

  /** A store over the pool `sql`, opened on `url` (migrated and with its tallies); see {@link openSqlStore}. */
  constructor(
    private readonly sql: SQL,
    url: string,
    options: SqlStoreOptions = {},
    /** The changes of every replica, read from `rl_events` (changes.ts). */
    readonly changes: SqlChanges,
    /** The pool of the direct URL the changes LISTEN through, when one was given: closed with the store. */
    private readonly direct?: SQL,
  ) {
    this.target = describeTarget(url)
    this.ownsPool = options.over === undefined
    this.poolSize = options.pool ?? 10
    // A statement the server did not cancel in time: the connection itself is stuck (a network that went silent).
    this.deadlineMs = (options.statementTimeoutMs ?? 5000) + 1000
    this.checkTimeoutMs = options.checkTimeoutMs ?? 2000
    this.availability = new StoreAvailability(() => this.check(), options.probeEveryMs)
    this.writes = new WriteBatcher(
      this.transact,
      // One statement alone: retried on serialization failures only. Unlike a transaction, a statement lost with its
      // connection may have committed, so it is never sent again on the word of a dead connection.
      (work) => retried(() => work(this.sql)),
      (error) => storeError(error, this.target),
      // Larger batches only while another replica writes: alone, the batcher never waits.
      { pays: () => this.changes.othersWriting(), ms: options.gatherMs },
      (bytes) => this.idempotency.kept(bytes),
    )
    this.timer = setInterval(() => this.writes.flush().catch(() => {}), options.saveUsesEveryMs ?? 2000)
    this.timer.unref?.()
  }

  /** How many batch transactions this store has committed: for tests and the bench, to see batching work. */
  get batchTransactions(): number {
    return this.writes.transactions
  }

  /** How many times the write batcher has waited for more inserts between two commits (writes.ts): for tests. */
  get batchGathers(): number {
    return this.writes.gathers
  }

  /**
   * Runs `work` in a transaction, retried on serialization failures, and once more when the connection it got had
   * died while idle (the database restarted) before the work was done: nothing was committed then.
   */
  private readonly transact: Transact = async (work, options) => {
    for (let attempt = 1; ; attempt++) {
      let done = false
      try {
        return await inTransaction(
          this.sql,
          async (tx) => {
            const result = await work(tx)
            done = true
            return result
          },
          options,
        )
      } catch (error) {
        if (done || attempt > 1 || !isStaleConnection(error)) throw error
      }
    }
  }

  /**
   * Counts commits and the pool's use into `metrics`. Bun.SQL tells nothing of its pool: every operation of the store
   * goes through {@link operate}, which counts those in flight, each holding one connection while it runs.
   */
  instrument(metrics: StoreMetrics): void {
    this.metrics = metrics
    this.writes.metrics = metrics
    this.pool = metrics.poolOf(this.poolSize)
    metrics.availability = this.availability
    // Asked at each scrape: an idle replica learns then whether its database still answers.
    metrics.check = () => this.check()
  }

  /**
   * Runs `operation` within the deadline, its errors as the store reports them; whether the database answered is
   * noted in {@link availability}.
   */
  private async operate<T>(operation: () => Promise<T>): Promise<T> {
    if (this.closed) throw new StoreUnavailableError('the store is closed')
    const pool = this.pool
    const availability = this.availability
    const turn = availability.turn
    if (pool) pool.inFlight++
    try {
      const result = await within(operation(), this.deadlineMs, this.target)
      availability.succeeded(turn)
      return result
    } catch (error) {
      const reported = storeError(error, this.target)
      if (reported instanceof DatabaseUnavailableError) availability.failed(reported, turn)
      throw reported
    } finally {
      if (pool) pool.inFlight--
    }
  }

  /** A read, tried again once on a connection that died while idle. */
  private read<T>(query: () => Promise<T>): Promise<T> {
    return this.operate(async () => {
      try {
        return await query()
      } catch (error) {
        if (!isStaleConnection(error)) throw error
        return await query()
      }
    })
  }

  /** The record of `key`, read through `batcher` with the others asked in this turn (reads.ts). */
  private batched<K, T>(batcher: ReadBatcher<K, T>, key: K): Promise<T | undefined> {
    if (this.closed) return Promise.reject(new StoreUnavailableError('the store is closed'))
    return batcher.get(key)
  }

  /** A write of its own: one transaction. */
  private write<T>(work: (tx: SQL) => Promise<T>): Promise<T> {
    return this.counted(this.operate(() => this.transact(work)))
  }

  /**
   * `written`, a transaction that changes data, counted as a commit (`--metrics`), or as a failed one when the
   * database could not take it: one it refused (a duplicate email, a stale tag) was answered, as the data file's
   * refusals are.
   */
  private counted<T>(written: Promise<T>): Promise<T> {
    const metrics = this.metrics
    if (!metrics) return written
    return written.then(
      (result) => {
        metrics.committed(1)
        return result
      },
      (error: unknown) => {
        if (isUnavailable(error)) metrics.commitFailures.inc()
        throw error
      },
    )
  }

  /** The credential with the use noted here and not yet saved, as the document store would show it. */
  private withNotedUse(credential: Credential): Credential {
    const at = this.writes.pendingUse(credential.id)
    // A new record, never an edit of the one read (records are frozen).
    return at !== undefined ? Object.freeze({ ...credential, lastUsedAt: at }) : credential
  }

  readonly artists = {
    get: (id: number): Promise<Artist | undefined> =>
      validId(id) ? this.batched(this.artistReads, id) : Promise.resolve(undefined),
    list: (page: Page, query: ListQuery<ArtistSort> = {}): Promise<Slice<Artist>> =>
      this.read(async () => {
        // A page read before is asked after by its version alone: one row instead of the page (page-cache.ts).
        const key = `${page.limit} ${page.offset} ${query.sort ?? 'id'} ${query.q ?? ''}`
        if (this.artistPages.has(key)) {
          const version = await this.versionReads.get('artists')
          const cached = version !== undefined && this.artistPages.get(key, version)
          if (cached) return cached
        }
        const { slice, version } = await listArtists(this.sql, page, query)
        if (version !== undefined) this.artistPages.set(key, version, slice)
        return slice
      }),
    insert: (fields: New<Artist>, by = OPERATOR, keep?: KeepAnswer<Artist>): Promise<Artist> =>
      this.operate(() => this.writes.insertArtist(fields, by, keep)).finally(this.changed),
    history: (artistId: number, page: Page): Promise<Slice<ArtistChange> | undefined> =>
      validId(artistId) ? this.read(() => listHistory(this.sql, artistId, page)) : Promise.resolve(undefined),
    replace: (artist: Artist, condition?: Precondition, by = OPERATOR): Promise<Artist | undefined> => {
      if (!validId(artist.id)) return Promise.resolve(undefined)
      return this.write(async (tx) => {
        const row = artistRow(artist.id, artist)
        if (condition) {
          // The row is locked until the commit: a replace on another replica that read the same tag waits here, then
          // reads what this one wrote (READ COMMITTED reads the latest version of a row it locks), and is refused.
          const current = await lockedArtist(tx, row.id)
          if (!current) return undefined
          if (!holds(condition, artistTag(current))) throw new StaleVersionError(current)
        }
        const [found] = await tx`
          UPDATE rl_artists SET name = ${row.name}, description = ${row.description}, image = ${row.image},
            band = ${row.band}, name_key = ${row.name_key}, folded_name = ${row.folded_name},
            folded_band = ${row.folded_band}
          WHERE id = ${row.id} RETURNING id`
        if (!found) return undefined
        // Cached pages of the list are stale from now on, on every replica (page-cache.ts).
        await tallyArtists(tx, 0)
        const replaced = artistOf(row)
        await recordChanges(tx, [{ kind: 'artist-updated', by, artist: replaced }])
        return replaced
      }).finally(this.changed)
    },
  }

  readonly albums = {
    get: (id: number): Promise<Album | undefined> =>
      validId(id) ? this.batched(this.albumReads, id) : Promise.resolve(undefined),
    listByArtist: (artistId: number, page: Page, query: AlbumQuery = {}): Promise<Slice<Album> | undefined> =>
      validId(artistId) ? this.read(() => listAlbums(this.sql, artistId, page, query)) : Promise.resolve(undefined),
    insert: (
      fields: New<Album>,
      condition?: Precondition,
      by = OPERATOR,
      keep?: KeepAnswer<Album>,
    ): Promise<Album | undefined> => {
      if (!validId(fields.artistId)) return Promise.resolve(undefined)
      if (!condition) return this.operate(() => this.writes.insertAlbum(fields, by, keep)).finally(this.changed)
      // A conditional insert is a transaction of its own: the artist's row is locked, its tag checked, then the album
      // added as a batch of one, so no replace of the artist lands between the check and the insert.
      // The bytes of the answer kept, told once committed: a transaction the database retries runs again.
      let keptBytes = 0
      return this.write(async (tx) => {
        const artist = await lockedArtist(tx, fields.artistId)
        if (!artist) return undefined
        if (!holds(condition, artistTag(artist))) throw new StaleVersionError(artist)
        const [outcome] = await insertAlbums(tx, [fields], [by])
        if (outcome instanceof Error) throw outcome
        if (outcome && keep) keptBytes = await keepAnswers(tx, [{ keep, answer: keep.answer(outcome) }])
        return outcome
      })
        .then((album) => {
          if (keptBytes > 0) this.idempotency.kept(keptBytes)
          return album
        })
        .finally(this.changed)
    },
    replace: (album: Album, condition?: Precondition, by = OPERATOR): Promise<Album | undefined> => {
      if (!validId(album.id) || !validId(album.artistId)) return Promise.resolve(undefined)
      return this.write(async (tx) => {
        const row = albumRow(album.id, album)
        // Locked until the commit, as an artist's replace locks its row: of two writers that read one tag, one wins.
        const [locked] = await tx`
          SELECT id, artist_id, name, year, image, kind FROM rl_albums
          WHERE id = ${row.id} AND artist_id = ${row.artist_id} FOR UPDATE`
        if (!locked) return undefined
        const current = albumOf(locked)
        if (!holds(condition, albumTag(current))) throw new StaleVersionError(current)
        await tx`
          UPDATE rl_albums SET name = ${row.name}, year = ${row.year}, image = ${row.image}, kind = ${row.kind},
            name_key = ${row.name_key}, folded_name = ${row.folded_name}
          WHERE id = ${row.id}`
        const replaced = albumOf(row)
        await recordChanges(tx, [{ kind: 'album-updated', by, album: replaced }])
        return replaced
      }).finally(this.changed)
    },
    remove: (artistId: number, id: number, condition?: Precondition, by = OPERATOR): Promise<Album | undefined> => {
      if (!validId(id) || !validId(artistId)) return Promise.resolve(undefined)
      return this.write(async (tx) => {
        // The artist's row first, as inserts lock it (writes.ts): the same order, so no deadlock, and its count of
        // albums, which inserts check against the maximum, drops in the same transaction as the album goes.
        if (!(await lockedArtist(tx, artistId))) return undefined
        const [locked] = await tx`
          SELECT id, artist_id, name, year, image, kind FROM rl_albums
          WHERE id = ${id} AND artist_id = ${artistId} FOR UPDATE`
        if (!locked) return undefined
        const current = albumOf(locked)
        if (!holds(condition, albumTag(current))) throw new StaleVersionError(current)
        await tx`DELETE FROM rl_albums WHERE id = ${id}`
        await tx`UPDATE rl_artists SET album_count = album_count - 1 WHERE id = ${artistId}`
        await recordChanges(tx, [{ kind: 'album-deleted', by, album: current }])
        return current
      }).finally(this.changed)
    },
  }

  readonly users = {
    get: (id: number): Promise<User | undefined> =>
      validId(id) ? this.batched(this.userReads, id) : Promise.resolve(undefined),
    findByEmail: (email: string): Promise<User | undefined> =>
      this.read(async () => {
        const [row] = await this.sql`SELECT * FROM rl_users WHERE email_key = ${emailKey(email)}`
        return row ? userOf(row) : undefined
      }),
    insert: (fields: NewUser): Promise<User> =>
      this.write(async (tx) => {
        const [id] = await takeIds(tx, 'rl_user_ids', 1)
        const row = userRow(id as number, { ...fields, credentialsEpoch: 0 }, emailKey(fields.email))
        await tx`INSERT INTO rl_users ${tx(row)}`
        return userOf(row)
      }).catch((error: unknown) => {
        // The unique index on the folded email: a concurrent sign-up on any replica loses here.
        if (sqlState(error) === '23505') throw new DuplicateEmailError(fields.email)
        throw error
      }),
    list: (page: Page): Promise<Slice<User>> =>
      this.read(async () => {
        // count(*): the operator's list is rare, and users are never deleted, so no counter of them is kept.
        const [counted] = await this.sql`SELECT count(*) AS total FROM rl_users`
        const rows = await this.sql`SELECT * FROM rl_users ORDER BY id LIMIT ${page.limit} OFFSET ${page.offset}`
        return { items: rows.map(userOf), total: Number(counted?.total ?? 0) }
      }),
    update: (id: number, changes: UserChanges): Promise<User | undefined> => {
      const columns: Record<string, string | null> = {}
      if (changes.passwordHash !== undefined) columns.password_hash = changes.passwordHash
      if (changes.disabledAt !== undefined) columns.disabled_at = changes.disabledAt
      if (!validId(id)) return Promise.resolve(undefined)
      if (Object.keys(columns).length === 0) return this.users.get(id)
      return this.write(async (tx) => {
        const [row] = await tx`UPDATE rl_users SET ${tx(columns)} WHERE id = ${id} RETURNING *`
        return row ? userOf(row) : undefined
      })
    },
    startEpoch: (id: number, changes: UserChanges, at: string): Promise<NewEpoch | undefined> =>
      validId(id) ? this.write((tx) => startUserEpoch(tx, id, changes, at)) : Promise.resolve(undefined),
  }

  readonly credentials = {
    findByHash: (hash: string): Promise<Credential | undefined> =>
      this.batched(this.credentialReads, hash).then((found) => found && this.withNotedUse(found)),
    listByUser: (userId: number): Promise<readonly Credential[]> =>
      this.read(async () => {
        if (!validId(userId)) return []
        const rows = await this.sql`SELECT * FROM rl_credentials WHERE user_id = ${userId} ORDER BY id`
        return rows.map((row: Record<string, unknown>) => this.withNotedUse(credentialOf(row)))
      }),
    insert: (fields: NewCredential, limit?: CredentialLimit): Promise<Credential> =>
      this.write((tx) => insertCredential(tx, fields, limit)),
    revoke: (id: number, at: string): Promise<Credential | undefined> =>
      validId(id)
        ? this.write((tx) => revokeCredential(tx, id, at)).then((found) => found && this.withNotedUse(found))
        : Promise.resolve(undefined),
    revokeAll: (userId: number, kind: Credential['kind'], at: string): Promise<number> =>
      validId(userId) ? this.write((tx) => revokeAllCredentials(tx, userId, kind, at)) : Promise.resolve(0),
    noteUse: (id: number, at: string): void => {
      // Not a write of its own: saved with the next batch, or by the timer, or on close.
      if (!this.closed && validId(id)) this.writes.noteUse(id, at)
    },
    purge: (now: string): Promise<number> => this.write((tx) => purgeCredentials(tx, now)),
  }

  /** The limiter `name`: its attempts are rows every replica over this database shares (limiter.ts). */
  limiter(name: string, rule: RateLimit, clock: () => number): Limiter {
    return new SqlLimiter(this.sql, name, rule, clock, (operation) => this.operate(operation))
  }

  /** The idempotency keys: rows every replica over this database shares (idempotency.ts). */
  readonly idempotency = sqlIdempotency(
    () => this.sql,
    (operation) => this.operate(operation),
  )

  /** The recents `name`: rows every replica over this database shares (limiter.ts). */
  recents(name: string, rule: RecentsRule, clock: () => number): Recents {
    return new SqlRecents(this.sql, name, rule, clock, (operation) => this.operate(operation))
  }

  isEmpty(): Promise<boolean> {
    return this.read(() => isEmpty(this.sql))
  }

  load(
    catalogue: readonly CatalogueEntry[],
    options: LoadOptions = {},
  ): Promise<{ artists: number; albums: number } | undefined> {
    if (this.closed) return Promise.reject(new StoreUnavailableError('the store is closed'))
    // No deadline: a large catalogue may take longer than one statement; each statement has its timeout.
    return this.counted(this.transact((tx) => loadCatalogue(tx, catalogue, options))).catch((error: unknown) => {
      throw storeError(error, this.target)
    })
  }

  /** Every table read in one REPEATABLE READ transaction: one consistent view, however many writes run meanwhile. */
  async snapshot(): Promise<StoreDocument> {
    if (this.closed) throw new StoreUnavailableError('the store is closed')
    try {
      return await this.transact(dumpConsistent, REPEATABLE_READ)
    } catch (error) {
      throw storeError(error, this.target)
    }
  }

  /** The shared reset point: the state of the database when the first replica asked, kept in `rl_snapshots`. */
  async resetPoint(): Promise<StoreDocument> {
    if (this.closed) throw new StoreUnavailableError('the store is closed')
    try {
      const [kept] = await this.sql`SELECT document FROM rl_snapshots WHERE name = ${RESET_POINT}`
      if (kept) return savedDocument(kept.document)
      await this.transact(async (tx) => {
        const document = JSON.stringify(await dumpConsistent(tx))
        await tx`INSERT INTO rl_snapshots (name, document) VALUES (${RESET_POINT}, ${document}) ON CONFLICT (name) DO NOTHING`
      }, REPEATABLE_READ)
      // Another replica's, when it got there first.
      const [taken] = await this.sql`SELECT document FROM rl_snapshots WHERE name = ${RESET_POINT}`
      if (!taken) throw new Error('the reset point just saved is gone')
      return savedDocument(taken.document)
    } catch (error) {
      throw storeError(error, this.target)
    }
  }

  /** Replaces every table's rows with `document`'s, for every replica, in one transaction. */
  async restore(document: StoreDocument): Promise<void> {
    if (this.closed) throw new StoreUnavailableError('the store is closed')
    try {
      await this.counted(
        this.transact(async (tx) => {
          await replaceAll(tx, document, emailKey)
          await replaceHistory(tx, document.history ?? [])
          // Every replica's streams are told to reload.
          await recordChanges(tx, [{ kind: 'reset' }])
          await commitWithCounters(tx, document.counters)
        }),
      )
    } catch (error) {
      throw storeError(error, this.target)
    } finally {
      this.changed()
    }
    // Their ids may name other credentials now.
    this.writes.forgetUses()
  }

  check(): Promise<void> {
    const turn = this.availability.turn
    return within(this.sql`SELECT 1`, this.checkTimeoutMs, this.target).then(
      () => this.availability.succeeded(turn),
      (error: unknown) => {
        const reported = storeError(error, this.target)
        const unavailable =
          reported instanceof DatabaseUnavailableError
            ? reported
            : new DatabaseUnavailableError(`the database at ${this.target} cannot serve: ${causeOf(error)}`, {
                cause: error,
              })
        this.availability.failed(unavailable, turn)
        throw unavailable
      },
    )
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    this.availability.close()
    clearInterval(this.timer)
    this.changes.end()
    await this.direct?.close().catch(() => {})
    await this.writes.flush().catch(() => {})
    if (!this.ownsPool) return
    await this.sql.close()
  }
}
