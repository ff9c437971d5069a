import type { SQL } from 'bun'
import type { StoreMetrics } from '../../metrics/metrics.ts'
import type { Album } from '../../model/album.ts'
import type { Artist } from '../../model/artist.ts'
import type { New } from '../../model/form.ts'
import { OPERATOR } from '../../model/history.ts'
import type { KeptAnswer } from '../../model/kept-answer.ts'
import { ClaimLostError, entryBytes, type KeepAnswer } from '../idempotency.ts'
import { AlbumLimitError, MAX_ALBUMS_PER_ARTIST } from '../store.ts'
import { artistFieldsJson, recordChanges } from './changes.ts'
import { isUnavailable } from './outages.ts'
import { sqlState } from './retry.ts'
import { albumOf, albumRow, artistOf, artistRow } from './rows.ts'

/** One insert waiting for its batch, with what settles its caller's promise and the answer it keeps, if any. */
type Pending =
  | {
      kind: 'artist'
      fields: New<Artist>
      by: string
      keep?: KeepAnswer<Artist>
      resolve: (artist: Artist) => void
      reject: (error: unknown) => void
    }
  | {
      kind: 'album'
      fields: New<Album>
      by: string
      keep?: KeepAnswer<Album>
      resolve: (album: Album | undefined) => void
      reject: (error: unknown) => void
    }

/**
 * What a batch's transaction settles each pending insert with, in the order of the batch: an {@link AlbumLimitError}
 * rejects its caller alone.
 */
type Outcome = Artist | Album | AlbumLimitError | undefined

/** Runs `work` in one transaction (with the store's retries); see `SqlStore`. */
export type Transact = <T>(work: (tx: SQL) => Promise<T>, options?: string) => Promise<T>

/** Runs `work`, one statement that is atomic on its own, outside a transaction (with the store's retries). */
export type Statement = <T>(work: (sql: SQL) => Promise<T>) => Promise<T>

/** The sequences ids come from (migration 5), one per collection. */
export type IdSequence = 'rl_artist_ids' | 'rl_album_ids' | 'rl_user_ids' | 'rl_credential_ids'

/**
 * `n` new ids from `sequence`, in `tx`, smallest first. A `nextval` locks nothing until the transaction ends: writers
 * on any number of replicas take ids at once. The ids are unique but not always consecutive: another transaction
 * may take some in between, and one that rolls back leaves a gap.
 */
export async function takeIds(tx: SQL, sequence: IdSequence, n: number): Promise<number[]> {
  if (n <= 0) return []
  const rows = await tx`SELECT nextval(${sequence}::regclass) AS id FROM generate_series(1, ${n}) ORDER BY id`
  return rows.map((row: { id: unknown }) => Number(row.id))
}

/** The rows of `rl_tallies` per name (migration 5): a write adds to one of them, reads add them all up. */
export const STRIPES = 16

/** A stripe to wait for when every one is held: rare (it takes as many writers at once as there are stripes). */
export const anyStripe = () => Math.floor(Math.random() * STRIPES)

/**
 * What picks the stripe a write adds to: on a first try (`first` true) the first stripe of the artists' tally that no
 * other transaction holds, locked (`FOR UPDATE SKIP LOCKED`), or when every one is held the stripe `any`, waited for.
 * Under READ COMMITTED an UPDATE whose row is chosen by a `SKIP LOCKED` subquery now and then updates nothing (about
 * once in 1,600 statements with 8 writers at once): such a statement did nothing at all, and is sent again with
 * `first` false, so with a stripe at random, which always finds its row. Parameters only: one text, one prepared
 * statement.
 */
const stripe = (first: boolean) => ({ first, any: anyStripe() })

/**
 * Adds `added` to the artists' tally and moves their version on (page-cache.ts), in `tx`, on the first stripe no
 * other transaction holds (`FOR UPDATE SKIP LOCKED`): concurrent writers, on any replica, each take a stripe of
 * their own and never wait for another's commit. Only when every stripe is held does it wait, for one at random.
 */
export async function tallyArtists(tx: SQL, added: number): Promise<void> {
  for (const firstTry of [true, false]) {
    const { first, any } = stripe(firstTry)
    const [row] = await tx`
      UPDATE rl_tallies SET count = count + ${added}, version = version + 1
      WHERE name = 'artists' AND stripe = COALESCE(CASE WHEN ${first}::boolean THEN (
        SELECT stripe FROM rl_tallies WHERE name = 'artists' ORDER BY stripe LIMIT 1 FOR UPDATE SKIP LOCKED
      ) END, ${any}::int)
      RETURNING stripe`
    if (row) return
  }
  throw new Error('the tallies of the artists are missing')
}

/**
 * Adds the artists of a batch in ONE statement, so one round trip: the artists' tally (its size and version, on a
 * stripe no other transaction holds, see {@link tallyArtists}) moves on, ids come from the sequence once the stripe is
 * held, and the rows go in with those ids in the batch's order. A single statement is atomic on its own, so a batch of
 * artists alone needs no BEGIN and COMMIT around it. Nothing it locks is shared with another replica's batch: their
 * commits are flushed side by side, not one after the other. Name keys travel as hex text, decoded by the database.
 *
 * Its plan does not depend on the batch's size: PostgreSQL plans a prepared statement for its parameters five times,
 * then keeps a generic plan when that is estimated no dearer. With the count of ids a parameter of its own
 * (`generate_series(1, n)`) the generic plan looks dear (a thousand rows), and every batch is planned again, which
 * costs as much as executing a batch of eight; so the ids are taken once per name instead.
 */
async function insertArtists(sql: SQL, batch: readonly New<Artist>[], authors: readonly string[]): Promise<Artist[]> {
  const n = batch.length
  const rows = batch.map((fields) => artistRow(0, fields))
  const column = (pick: (row: (typeof rows)[number]) => string | null) => sql.array(rows.map(pick), 'TEXT')
  const names = column((row) => row.name)
  // What the change `artist-created` of each keeps: the artist as served, without the id it does not have yet.
  const fields = rows.map((row) => artistFieldsJson(artistOf({ ...row, id: 0 })))
  // The ids are taken in the join with the tally's row, so only once its stripe is held: a restore, which holds
  // every stripe, moves the sequence back before any insert waiting for it takes an id (snapshot.ts).
  let inserted: { id: unknown }[] = []
  for (const firstTry of [true, false]) {
    const { first, any } = stripe(firstTry)
    inserted = await sql`
      WITH tally AS (
        UPDATE rl_tallies SET count = count + ${n}, version = version + 1
        WHERE name = 'artists' AND stripe = COALESCE(CASE WHEN ${first}::boolean THEN (
          SELECT stripe FROM rl_tallies WHERE name = 'artists' ORDER BY stripe LIMIT 1 FOR UPDATE SKIP LOCKED
        ) END, ${any}::int)
        RETURNING stripe
      ),
      taken AS (SELECT nextval('rl_artist_ids') AS id FROM tally, unnest(${names}::text[])),
      ids AS (SELECT id, row_number() OVER (ORDER BY id) AS position FROM taken),
      incoming AS (
        SELECT ids.id, d.* FROM ids JOIN unnest(
          ${names}::text[], ${column((row) => row.description)}::text[],
          ${column((row) => row.image)}::text[], ${column((row) => row.band)}::text[],
          ${column((row) => row.name_key.toString('hex'))}::text[], ${column((row) => row.folded_name)}::text[],
          ${column((row) => row.folded_band)}::text[], ${sql.array(fields, 'TEXT')}::text[],
          ${sql.array([...authors], 'TEXT')}::text[]
        ) WITH ORDINALITY AS d (
          name, description, image, band, name_key, folded_name, folded_band, fields, author, position
        ) ON d.position = ids.position
      ),
      -- Their changes and the first entry of each one's history (history.ts), in the same statement: committed with
      -- them or not at all (changes.ts). A new artist's history needs no pruning.
      changes AS (
        INSERT INTO rl_events (id, tx, at_ms, kind, record_id, fields, author)
        SELECT nextval('rl_event_ids'), pg_current_xact_id()::text::bigint,
          (extract(epoch FROM now()) * 1000)::bigint, 'artist-created', incoming.id, incoming.fields, incoming.author
        FROM incoming
      ),
      history AS (
        INSERT INTO rl_history (id, artist_id, at_ms, author, kind, record_id, fields)
        SELECT nextval('rl_history_ids'), incoming.id, (extract(epoch FROM now()) * 1000)::bigint, incoming.author,
          'artist-created', incoming.id, incoming.fields
        FROM incoming
      )
      INSERT INTO rl_artists (id, name, description, image, band, name_key, folded_name, folded_band, album_count)
      SELECT i.id, i.name, i.description, i.image, i.band, decode(i.name_key, 'hex'), i.folded_name, i.folded_band, 0
      FROM incoming AS i
      RETURNING id`
    // Nothing at all was done when the tally's UPDATE found no row (see `stripe`): send it again.
    if (inserted.length > 0) break
  }
  if (inserted.length !== n) throw new Error('the tallies of the artists are missing')
  const ids = inserted.map((row: { id: unknown }) => Number(row.id)).sort((a: number, b: number) => a - b)
  return rows.map((row, i) => artistOf({ ...row, id: ids[i] as number }))
}

/** Artist `id`, its row locked until the end of `tx` (`FOR UPDATE`); `undefined` when there is none. */
export async function lockedArtist(tx: SQL, id: number): Promise<Artist | undefined> {
  const [row] = await tx`SELECT id, name, description, image, band FROM rl_artists WHERE id = ${id} FOR UPDATE`
  return row ? artistOf(row) : undefined
}

/**
 * Adds the albums of a batch whose artist exists (artists are never deleted, so the check holds once made) and has
 * room for them, with their artists' album counts: `undefined` for an album of an unknown artist, an
 * {@link AlbumLimitError} for one past {@link MAX_ALBUMS_PER_ARTIST}; neither fails the batch. The artists' rows are
 * locked first (`FOR UPDATE`, in id order): an insert on another replica waits for this transaction to end, then
 * reads the count it committed (READ COMMITTED reads the latest version of a row it locks), so concurrent inserts
 * cannot pass the maximum together.
 */
export async function insertAlbums(
  tx: SQL,
  batch: readonly New<Album>[],
  authors: readonly string[],
): Promise<(Album | AlbumLimitError | undefined)[]> {
  const artistIds = [...new Set(batch.map(({ artistId }) => artistId))]
  const locked = await tx`
    SELECT id, album_count FROM rl_artists WHERE id = ANY(${tx.array(artistIds, 'INT8')}::bigint[])
    ORDER BY id FOR UPDATE`
  const before = new Map<number, number>(
    locked.map((row: { id: string; album_count: unknown }) => [Number(row.id), Number(row.album_count)]),
  )
  // In the batch's order: the first albums of an artist take its free places.
  const counts = new Map(before)
  const fits = batch.map(({ artistId }) => {
    const count = counts.get(artistId)
    if (count === undefined) return 'unknown'
    if (count >= MAX_ALBUMS_PER_ARTIST) return 'full'
    counts.set(artistId, count + 1)
    return 'fits'
  })
  const accepted = batch.filter((_, i) => fits[i] === 'fits')
  const acceptedBy = authors.filter((_, i) => fits[i] === 'fits')
  const outcomes = fits.map((fit) => (fit === 'full' ? new AlbumLimitError(MAX_ALBUMS_PER_ARTIST) : undefined))
  if (accepted.length === 0) return outcomes
  // The new counts, absolute: the rows are locked, so nothing changed them since they were read.
  const grown = [...counts].filter(([artistId, count]) => count !== before.get(artistId))
  const ids = tx.array(
    grown.map(([artistId]) => artistId),
    'INT8',
  )
  const sizes = tx.array(
    grown.map(([, count]) => count),
    'INT4',
  )
  await tx`
    UPDATE rl_artists AS a SET album_count = d.n
    FROM unnest(${ids}::bigint[], ${sizes}::int[]) AS d (id, n)
    WHERE a.id = d.id`
  const albumIds = await takeIds(tx, 'rl_album_ids', accepted.length)
  const rows = accepted.map((fields, i) => albumRow(albumIds[i] as number, fields))
  await tx`INSERT INTO rl_albums ${tx(rows)}`
  const albums = rows.map(albumOf)
  await recordChanges(
    tx,
    albums.map((album, i) => ({ kind: 'album-created', by: acceptedBy[i] as string, album })),
  )
  let next = 0
  return fits.map((fit, i) => (fit === 'fits' ? albums[next++] : outcomes[i]))
}

/** A keyed insert of a batch, with the answer it keeps for its record. */
export interface Kept {
  keep: Pick<KeepAnswer<never>, 'request' | 'claim' | 'expiresAt'>
  answer: KeptAnswer
}

/**
 * Keeps the answers of the batch's keyed inserts in their keys' rows, in the transaction of the inserts: committed with
 * the records or not at all. A row whose claim is no longer the insert's (its lease ran out, another request took it)
 * fails the transaction with {@link ClaimLostError}; the batcher then commits each insert alone, so only that one is
 * refused. Resolves with the bytes the answers added.
 */
export async function keepAnswers(tx: SQL, kept: readonly Kept[]): Promise<number> {
  if (kept.length === 0) return 0
  const text = (pick: (each: Kept) => string) => tx.array(kept.map(pick), 'TEXT')
  const bytes = kept.map(({ keep, answer }) => entryBytes(keep.request, answer))
  const expiries = tx.array(
    kept.map(({ keep }) => keep.expiresAt),
    'INT8',
  )
  const statuses = tx.array(
    kept.map(({ answer }) => answer.status),
    'INT4',
  )
  const rows = await tx`
    UPDATE rl_idempotency AS i
    SET claim = NULL, until_ms = d.until_ms, bytes = d.bytes, status = d.status, headers = d.headers, body = d.body
    FROM unnest(
      ${text(({ keep }) => keep.request.scope)}::text[], ${text(({ keep }) => keep.request.key)}::text[],
      ${text(({ keep }) => keep.claim)}::text[], ${expiries}::bigint[], ${tx.array(bytes, 'INT8')}::bigint[],
      ${statuses}::int[], ${text(({ answer }) => JSON.stringify(answer.headers))}::text[],
      ${text(({ answer }) => answer.body)}::text[]
    ) AS d (scope, key, claim, until_ms, bytes, status, headers, body)
    WHERE i.scope = d.scope AND i.key = d.key AND i.claim = d.claim
    RETURNING i.key`
  if (rows.length !== kept.length) throw new ClaimLostError('the claim of an Idempotency-Key was taken over')
  return bytes.reduce((sum, each) => sum + each, 0)
}

/** Saves the last-used times of credentials; a credential gone meanwhile (purged, restored away) is skipped. */
async function saveUses(tx: SQL, uses: ReadonlyMap<number, string>): Promise<void> {
  if (uses.size === 0) return
  await tx`
    UPDATE rl_credentials AS c SET last_used_at = d.at
    FROM unnest(${tx.array([...uses.keys()], 'INT8')}::bigint[], ${tx.array([...uses.values()], 'TEXT')}::text[]) AS d (id, at)
    WHERE c.id = d.id`
}

/** How many inserts one transaction takes at most: its INSERT stays well below PostgreSQL's 65,535 parameters. */
const MAX_BATCH = 1000

/** The longest a batch waits for more inserts between two commits, when gathering pays ({@link Gathering}); ms. */
export const GATHER_MS = 2

/**
 * When the batcher waits for more inserts between two of its commits. Most of a create's cost is paid per batch, by
 * this process and by PostgreSQL: the commit, the statement, the wake-up. With one replica, its batches are as large as
 * they get at once: the inserts of one batch arrive while the previous one commits. With two replicas over one
 * database, each gets half the clients, so batches of half the size, and the cost per create about doubles. A replica
 * that waits, between its commits, for the callers it has just answered to send their next inserts makes batches as
 * large again, and loses nothing while another replica's batch keeps the database (and the cores) busy; alone, it would
 * leave them idle while it waits, so it waits only while another replica writes.
 */
export interface Gathering {
  /** Whether waiting pays now: another replica over the same database writes (changes.ts, `othersWriting`). */
  pays: () => boolean
  /** The longest one wait lasts, in ms: {@link GATHER_MS} by default. */
  ms?: number
}

/**
 * The write path of artist and album creation: inserts that arrive while a transaction is in flight wait and go
 * together in the next one (one tally update, one multi-row INSERT per table), so that concurrent creates cost
 * one commit, not one each, as the JSON store's group commit does. Each insert is acknowledged once its
 * transaction commits. Credential uses (`noteUse`) ride along with the next transaction, or one of their own after
 * `flush`. The batch owns its state; nothing here calls back into the store.
 *
 * One batch at a time: ids increase in the order batches commit. While another replica writes ({@link Gathering}),
 * the batcher waits after a commit, at most {@link GATHER_MS}, until as many inserts are queued as the batch just
 * committed and those that came meanwhile (the callers it has just answered send their next ones), then commits them
 * together. An insert that finds no batch in flight or waiting goes at once, as without: a lone create on an idle
 * replica never waits for the window.
 */
export class WriteBatcher {
  private queue: Pending[] = []
  private uses = new Map<number, string>()
  private running: Promise<void> | undefined
  /** The wait in progress between two commits: how many queued inserts end it, and what ends it. */
  private gathering: { target: number; end: () => void } | undefined
  /** Flushes in progress: no wait begins meanwhile. */
  private flushing = 0
  /** How many transactions this batcher has committed (tests and bench read it). */
  transactions = 0
  /** How many times it has waited for more inserts between two commits (tests read it). */
  gathers = 0
  /** Where commits and their batch sizes are counted (`--metrics`); none by default. */
  metrics: StoreMetrics | undefined

  /** Whether it is waiting for more inserts now (tests read it). */
  get waiting(): boolean {
    return this.gathering !== undefined
  }

  /**
   * `transact` runs one transaction with retries, `statement` one statement alone; `failure` turns an error into
   * what callers see.
   */
  constructor(
    private readonly transact: Transact,
    private readonly statement: Statement,
    private readonly failure: (error: unknown) => unknown,
    /** When to wait for more inserts between two commits; never without. */
    private readonly gather?: Gathering,
    /** Hears of the bytes of answers kept for `Idempotency-Key`s by each commit (sql/idempotency.ts counts them). */
    private readonly kept?: (bytes: number) => void,
  ) {}

  /** Adds an artist in the next batch, made by `by`, with the answer `keep` says in the same transaction; resolves once committed. */
  insertArtist(fields: New<Artist>, by = OPERATOR, keep?: KeepAnswer<Artist>): Promise<Artist> {
    return new Promise((resolve, reject) => this.enqueue({ kind: 'artist', fields, by, keep, resolve, reject }))
  }

  /** Adds an album in the next batch, as {@link insertArtist}; `undefined` when its artist does not exist. */
  insertAlbum(fields: New<Album>, by = OPERATOR, keep?: KeepAnswer<Album>): Promise<Album | undefined> {
    return new Promise((resolve, reject) => this.enqueue({ kind: 'album', fields, by, keep, resolve, reject }))
  }

  /** Notes a credential's use, saved with the next transaction (or `flush`). */
  noteUse(id: number, at: string): void {
    this.uses.set(id, at)
  }

  /** The last use noted for a credential and not yet saved. */
  pendingUse(id: number): string | undefined {
    return this.uses.get(id)
  }

  /** Forgets the uses not yet saved: the credentials they name were replaced wholesale (a restore). */
  forgetUses(): void {
    this.uses.clear()
  }

  /** Saves what is pending (noted uses included), resolving once it is committed or has failed. */
  async flush(): Promise<void> {
    if (this.uses.size > 0) this.start()
    // What is queued goes now, without waiting for more: the wait in progress ends, and none begins until done.
    this.flushing += 1
    try {
      this.gathering?.end()
      await this.idle()
    } finally {
      this.flushing -= 1
    }
  }

  /** Resolves when no transaction of this batcher is in flight or waiting. */
  async idle(): Promise<void> {
    while (this.running) await this.running
  }

  private enqueue(pending: Pending): void {
    this.queue.push(pending)
    if (this.gathering && this.queue.length >= this.gathering.target) this.gathering.end()
    this.start()
  }

  private start(): void {
    this.running ??= this.drain().finally(() => {
      this.running = undefined
      // An insert enqueued after the drain last looked at the queue, but before this ran, found it still running
      // and started nothing: it goes now, not whenever the next insert comes (a caller that awaits each insert
      // and sends the next at once would wait forever).
      if (this.queue.length > 0) this.start()
    })
  }

  private async drain(): Promise<void> {
    // One turn of the event loop's microtasks first: callers that issue many inserts at once share the first batch.
    await null
    while (this.queue.length > 0 || this.uses.size > 0) {
      const batch = this.queue.splice(0, MAX_BATCH)
      const committed = await this.commit(batch)
      // Touches that failed wait for the next insert or flush, rather than being retried at once, forever.
      if (!committed && this.queue.length === 0) break
      // Checked without a turn of the event loop: when gathering does not pay, the next batch goes as before.
      if (committed && batch.length > 0) {
        const wait = this.gatherMore(batch.length + this.queue.length)
        if (wait) await wait
      }
    }
  }

  /**
   * After a commit, while gathering pays: a wait until `inFlight` inserts are queued (those of the batch just
   * committed, whose callers send again once answered, and those queued meanwhile), or {@link GATHER_MS}, or a
   * `flush`. Otherwise none.
   */
  private gatherMore(inFlight: number): Promise<void> | undefined {
    const target = Math.min(inFlight, MAX_BATCH)
    const gather = this.gather
    if (this.queue.length >= target || this.flushing > 0 || !gather?.pays()) return undefined
    this.gathers += 1
    const { promise, resolve } = Promise.withResolvers<void>()
    const timer = setTimeout(resolve, gather.ms ?? GATHER_MS)
    this.gathering = { target, end: resolve }
    return promise.finally(() => {
      clearTimeout(timer)
      this.gathering = undefined
    })
  }

  /** Commits a batch and settles its callers; whether the transaction committed. */
  private async commit(batch: Pending[]): Promise<boolean> {
    const uses = this.uses
    this.uses = new Map()
    let outcomes: Outcome[]
    // The bytes of answers the batch keeps, told once committed: a transaction the database retries runs again.
    let keptBytes = 0
    try {
      // A batch of artists alone, none keeping an answer, is one statement; anything else, a transaction.
      outcomes =
        uses.size === 0 &&
        batch.length > 0 &&
        batch.every((pending) => pending.kind === 'artist' && pending.keep === undefined)
          ? await this.statement((sql) =>
              insertArtists(
                sql,
                batch.map((pending) => pending.fields as New<Artist>),
                batch.map((pending) => pending.by),
              ),
            )
          : await this.transact(async (tx) => {
              const written = await this.write(tx, batch, uses)
              keptBytes = written.keptBytes
              return written.outcomes
            })
      if (keptBytes > 0) this.kept?.(keptBytes)
      this.transactions += 1
      this.metrics?.committed(batch.length)
    } catch (error) {
      // A record the database refused is an answer; a commit it could not take is a failure.
      if (isUnavailable(error)) this.metrics?.commitFailures.inc()
      // Uses recorded since keep their later times; the others wait for the next transaction.
      for (const [id, at] of uses) if (!this.uses.has(id)) this.uses.set(id, at)
      // One bad record (a value the database refuses, a claim taken over) must not fail the others: each goes again
      // on its own.
      if (batch.length > 1 && ((sqlState(error) && !isUnavailable(error)) || error instanceof ClaimLostError)) {
        for (const pending of batch) await this.commit([pending])
        return true
      }
      for (const pending of batch) pending.reject(this.failure(error))
      return false
    }
    for (const [i, pending] of batch.entries()) {
      const outcome = outcomes[i]
      if (outcome instanceof AlbumLimitError) pending.reject(outcome)
      else (pending.resolve as (outcome: Outcome) => void)(outcome)
    }
    return true
  }

  /**
   * The batch's statements, in one transaction: repeated whole when the database asks for a retry. Its outcomes, and
   * the bytes of the answers it keeps.
   */
  private async write(
    tx: SQL,
    batch: readonly Pending[],
    uses: ReadonlyMap<number, string>,
  ): Promise<{ outcomes: Outcome[]; keptBytes: number }> {
    const artists = batch.flatMap((pending) => (pending.kind === 'artist' ? [pending] : []))
    const albums = batch.flatMap((pending) => (pending.kind === 'album' ? [pending] : []))
    const fieldsOf = <T>(list: readonly { fields: T }[]) => list.map((pending) => pending.fields)
    const authorsOf = (list: readonly { by: string }[]) => list.map((pending) => pending.by)
    // Artists first: an album submitted after its artist's insert, in the same batch, finds it.
    const artistOutcomes = artists.length > 0 ? await insertArtists(tx, fieldsOf(artists), authorsOf(artists)) : []
    const albumOutcomes = albums.length > 0 ? await insertAlbums(tx, fieldsOf(albums), authorsOf(albums)) : []
    await saveUses(tx, uses)
    let a = 0
    let b = 0
    const outcomes = batch.map((pending) => (pending.kind === 'artist' ? artistOutcomes[a++] : albumOutcomes[b++]))
    // The answers of the records made, from the records as stored, before the commit that makes them durable.
    const kept: Kept[] = []
    for (const [i, pending] of batch.entries()) {
      const record = outcomes[i]
      if (pending.keep && record && !(record instanceof AlbumLimitError))
        kept.push({ keep: pending.keep as KeepAnswer<never>, answer: pending.keep.answer(record as never) })
    }
    return { outcomes, keptBytes: await keepAnswers(tx, kept) }
  }
}
