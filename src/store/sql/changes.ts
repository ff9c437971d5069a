/**
 * The changes over SQL: a table every replica writes in the transaction of each change (`rl_events`, migration 7) and
 * reads with a cursor, so that every replica streams every replica's changes, with the same ids, in the same order, and
 * a client may come back with `Last-Event-ID` to any of them, even after a restart.
 *
 * The order. Ids come from a sequence, taken before their transactions commit: a change with id 7 may become visible
 * after one with id 8, and a cursor on ids alone would skip it. So each row also holds its transaction's id (`tx`,
 * `pg_current_xact_id`), and a replica reads only the rows of transactions below the oldest one still running
 * (`pg_snapshot_xmin` of its snapshot): every such transaction has ended, so no row can appear among them later. In
 * (tx, id) order those rows only ever grow at the end: the one order every replica reads, whenever it reads.
 *
 * The wake-up. After its own writes a replica reads at once (when a stream of its own listens), and tells the others
 * with a NOTIFY sent after the commit (never inside a write's transaction, where PostgreSQL would make every notifying
 * commit take turns on one lock), in a transaction of its own that does not wait for a WAL flush; they LISTEN and
 * read. A read every `pollMs` covers a notification lost while a listening connection reconnected. Through a connection
 * pooler in transaction mode a LISTEN is lost (the pooler hands its server connection to the next transaction): the
 * replica LISTENs on the direct URL given beside the pooled one (`--data-direct`), or, given none, does not LISTEN
 * and reads every {@link UNHEARD_POLL_MS} instead: another replica's change reaches its streams within that.
 * Nothing any write locks is shared with another write: ids come from a sequence, rows are new.
 */
import type { SQL } from 'bun'
import type { Album } from '../../model/album.ts'
import type { Artist } from '../../model/artist.ts'
import {
  CHANGE_WINDOW,
  type Change,
  type ChangeEvent,
  ChangeHub,
  type ChangeListener,
  type Changes,
  type ChangeWindow,
  type Subscription,
} from '../changes.ts'
import { recordHistory } from './history.ts'
import { albumOf, artistOf } from './rows.ts'

/** The channel of the wake-ups. */
const CHANNEL = 'rl_events'

/** Rows read in one statement at most; a longer backlog is read in several. */
const BATCH = 500

/** How often a replica that cannot LISTEN reads the changes: the longest another replica's change waits for it. */
export const UNHEARD_POLL_MS = 250

/**
 * How long after another replica's last wake-up this replica counts it as writing (`othersWriting`): a replica under
 * a load of writes sends one after every batch, so a few milliseconds apart.
 */
export const OTHERS_WRITING_MS = 1000

/** The kinds a row may have (the table's CHECK). */
type Kind = Change['kind']

/** A change to write: its kind, who made it and the record it is about (none for a reset). */
export type ChangeRow =
  | { kind: 'artist-created' | 'artist-updated'; by: string; artist: Artist }
  | { kind: 'album-created' | 'album-updated' | 'album-deleted'; by: string; album: Album }
  | { kind: 'reset' }

/** The record's fields as the row keeps them: its JSON without the id (the album's artist as `artist_id`). */
function fieldsOf(change: ChangeRow): { id: number | null; fields: string | null } {
  switch (change.kind) {
    case 'artist-created':
    case 'artist-updated':
      return { id: change.artist.id, fields: artistFieldsJson(change.artist) }
    case 'album-created':
    case 'album-updated':
    case 'album-deleted': {
      const { id, artistId, ...fields } = change.album
      return { id, fields: JSON.stringify({ artist_id: artistId, ...fields }) }
    }
    case 'reset':
      return { id: null, fields: null }
  }
}

/**
 * Writes `changes` in `tx`, the transaction of the changes themselves: committed with them, or not at all; each change
 * of a record goes into its artist's history too (history.ts). A statement for the stream, two for the histories,
 * whatever their number.
 */
export async function recordChanges(tx: SQL, changes: readonly ChangeRow[]): Promise<void> {
  if (changes.length === 0) return
  await recordHistory(
    tx,
    changes.flatMap((change) => (change.kind === 'reset' ? [] : [change])),
  )
  const rows = changes.map(fieldsOf)
  const kinds = tx.array(
    changes.map((change) => change.kind),
    'TEXT',
  )
  const ids = tx.array(
    rows.map((row) => row.id),
    'INT8',
  )
  const fields = tx.array(
    rows.map((row) => row.fields),
    'TEXT',
  )
  const authors = tx.array(
    changes.map((change) => (change.kind === 'reset' ? null : change.by)),
    'TEXT',
  )
  await tx`
    INSERT INTO rl_events (id, tx, at_ms, kind, record_id, fields, author)
    SELECT nextval('rl_event_ids'), pg_current_xact_id()::text::bigint, (extract(epoch FROM now()) * 1000)::bigint,
      d.kind, d.record_id, d.fields, d.author
    FROM unnest(${kinds}::text[], ${ids}::bigint[], ${fields}::text[], ${authors}::text[])
      AS d (kind, record_id, fields, author)`
}

/** The JSON an artist's row of `rl_events` keeps: the artist without its id. */
export function artistFieldsJson(artist: Artist): string {
  const { id: _, ...fields } = artist
  return JSON.stringify(fields)
}

/** An event from its row. */
function eventOf(row: Record<string, unknown>): ChangeEvent {
  const kind = row.kind as Kind
  const at = Number(row.at_ms)
  const id = String(row.id)
  if (kind === 'reset') return { id, at, change: { kind } }
  // Null in rows of earlier builds, which did not record it.
  const by = typeof row.author === 'string' ? { by: row.author } : {}
  const record = { id: row.record_id, ...(JSON.parse(String(row.fields)) as Record<string, unknown>) }
  if (kind === 'album-created' || kind === 'album-updated' || kind === 'album-deleted')
    return { id, at, ...by, change: { kind, album: albumOf(record) } }
  return { id, at, ...by, change: { kind, artist: artistOf(record) } }
}

/** How the feed reads. */
export interface SqlChangesOptions {
  /**
   * Whether to read on every wake-up and every `pollMs`, LISTENing on a connection of its own: as a replica serving
   * streams does (the default). `false` for a command that reads or replaces the data and exits (src/ops/database.ts):
   * it never waits for a change, and a connection of the database's is one process on its server.
   */
  follow?: boolean
  /**
   * Where to LISTEN for the other replicas' wake-ups: the feed's own pool by default, another pool (of the direct URL),
   * or `null`: nowhere (through a pooler in transaction mode), reading every `pollMs` instead.
   */
  listen?: SQL | null
  /** The longest a change waits to be read when no wake-up comes; 1 second, {@link UNHEARD_POLL_MS} without LISTEN. */
  pollMs?: number
  /** How often a replica prunes the table to the window; 1 minute. */
  pruneMs?: number
  window?: ChangeWindow
}

/**
 * The feed of one replica: reads the changes of every replica from `rl_events` in their one order, keeps the window
 * of them (a {@link ChangeHub}) and gives them to this replica's streams.
 */
export class SqlChanges implements Changes {
  private hub: ChangeHub
  /** Every row before (tx, id) in the order has been read. */
  private cursor = { tx: '0', id: '0' }
  private reading: Promise<void> | undefined
  private readAgain = false
  private notifying = false
  /** A wake-up is scheduled for the writes of this turn (`written`). */
  private wakeUpDue = false
  /** Subscriptions catching up before they attach (`subscribe`). */
  private subscribing = 0
  private notifyAgain = false
  private ended = false
  private readonly timers: ReturnType<typeof setInterval>[] = []
  private listening: SQL.ListenSubscription | undefined
  private readonly window: ChangeWindow
  /**
   * Who this replica is in its wake-ups' payload, so that it tells its own from the others' (PostgreSQL delivers a
   * NOTIFY to every connection that listens, the sender's replica included). Random, new with every process.
   */
  private readonly replica = crypto.randomUUID()
  /** When a wake-up of another replica last came (`performance.now()`); never yet: -Infinity. */
  private othersWroteAt = Number.NEGATIVE_INFINITY

  private constructor(
    private readonly sql: SQL,
    private readonly options: SqlChangesOptions,
    /** Where a failure of a background read or prune is reported. */
    private readonly report: (error: unknown) => void,
  ) {
    this.window = options.window ?? CHANGE_WINDOW
    this.hub = new ChangeHub('0', this.window)
  }

  /**
   * Opens the feed over `sql`: loads the window from the table (so a client may come back to a replica that started
   * since), then reads on every wake-up and every `pollMs` (unless `follow` is false).
   */
  static async open(sql: SQL, options: SqlChangesOptions = {}, report: (error: unknown) => void = () => {}) {
    const changes = new SqlChanges(sql, options, report)
    await changes.load()
    if (options.follow !== false) changes.follow()
    return changes
  }

  /** The last changes of the window, in order, and the cursor just after them. */
  private async load(): Promise<void> {
    const limit = this.window.events + 1
    const rows = await this.sql`
      SELECT s.next::text AS next, e.id::text AS id, e.tx::text AS tx, e.at_ms, e.kind, e.record_id, e.fields, e.author
      FROM (SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint AS next) AS s
      LEFT JOIN LATERAL (
        SELECT * FROM rl_events WHERE tx < s.next ORDER BY tx DESC, id DESC LIMIT ${limit}
      ) AS e ON true`
    const found = rows.filter((row: { id: unknown }) => row.id !== null).reverse()
    // A full window and one more: the one more is where the window starts. Fewer: the table was never pruned (it
    // keeps a full window and one more), so the window starts at the very beginning, '0'.
    const base = found.length === limit ? String(found.shift()?.id) : '0'
    this.hub = new ChangeHub(base, this.window)
    for (const row of found) this.hub.publish(eventOf(row))
    this.cursor = { tx: String(rows[0]?.next ?? '0'), id: '0' }
  }

  private follow(): void {
    const { listen = this.sql, pruneMs = 60_000 } = this.options
    const { pollMs = listen ? 1000 : UNHEARD_POLL_MS } = this.options
    const poll = setInterval(() => this.poke(), pollMs)
    const prune = setInterval(() => this.prune().catch(this.report), pruneMs)
    for (const timer of [poll, prune]) {
      timer.unref?.()
      this.timers.push(timer)
    }
    // Without LISTEN (a database that has none, a pooler in transaction mode) the feed still works, at `pollMs`.
    if (!listen) return
    listen
      .listen(CHANNEL, (payload) => {
        // A build before this one sends an empty payload: another replica all the same.
        if (payload !== this.replica) this.othersWroteAt = performance.now()
        this.readIfListened()
      })
      .then(
        (listening) => {
          if (this.ended) listening.unlisten().catch(() => {})
          else this.listening = listening
        },
        () => {},
      )
  }

  /** Reads the changes now (once more after the read in flight, if one is). */
  poke(): void {
    this.read().catch(this.report)
  }

  /**
   * After a write of this replica: wake the other replicas up, and read at once when a stream of this replica is
   * listening. With none, nothing waits for the change here: the next poll reads it, and a stream that subscribes
   * reads first (`subscribe`). The writes that end in one turn of the event loop (the creates of one batch) share
   * one wake-up and one read. Under a load of writes and no streams that is one NOTIFY a batch and one read a second,
   * instead of two of each a batch.
   */
  written(): void {
    if (this.wakeUpDue) return
    this.wakeUpDue = true
    setImmediate(() => {
      this.wakeUpDue = false
      this.readIfListened()
      this.notify()
    })
  }

  /**
   * Whether another replica over the same database has written within the last {@link OTHERS_WRITING_MS}, as its
   * wake-ups tell (never without LISTEN). The write batcher gathers larger batches only then (writes.ts).
   */
  othersWriting(): boolean {
    return performance.now() - this.othersWroteAt < OTHERS_WRITING_MS
  }

  /** Reads now when a stream of this replica listens; else the poll (or a stream's `subscribe`) will. */
  private readIfListened(): void {
    if (this.hub.size > 0 || this.subscribing > 0) this.poke()
  }

  private notify(): void {
    if (this.ended) return
    if (this.notifying) {
      this.notifyAgain = true
      return
    }
    this.notifying = true
    // A wake-up is worth nothing after a crash, so its transaction does not wait for the WAL to reach the disk: a
    // NOTIFY takes a transaction id and a commit record, and with the default synchronous_commit each would wait for a
    // flush of its own, holding PostgreSQL's one lock of notifying commits meanwhile. Set for this statement's
    // transaction alone. A database without NOTIFY refuses it; the poll covers that. The payload names this replica:
    // the others learn that it writes (`othersWriting`).
    this.sql`SELECT set_config('synchronous_commit', 'off', true), pg_notify(${CHANNEL}, ${this.replica})`
      .then(() => {})
      .catch(() => {})
      .finally(() => {
        this.notifying = false
        if (this.notifyAgain) {
          this.notifyAgain = false
          this.notify()
        }
      })
  }

  /** Reads what follows the cursor; concurrent calls share one read, and one more after it. */
  read(): Promise<void> {
    if (this.ended) return Promise.resolve()
    if (this.reading) {
      this.readAgain = true
      return this.reading
    }
    this.reading = (async () => {
      try {
        do {
          this.readAgain = false
          while (await this.readBatch()) {}
        } while (this.readAgain && !this.ended)
      } finally {
        this.reading = undefined
      }
    })()
    return this.reading
  }

  /** One statement's worth of changes; whether there may be more at once. */
  private async readBatch(): Promise<boolean> {
    const { tx, id } = this.cursor
    const rows = await this.sql`
      SELECT s.next::text AS next, e.id::text AS id, e.tx::text AS tx, e.at_ms, e.kind, e.record_id, e.fields, e.author
      FROM (SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint AS next) AS s
      LEFT JOIN LATERAL (
        SELECT * FROM rl_events
        WHERE (tx, id) > (${tx}::bigint, ${id}::bigint) AND tx < s.next
        ORDER BY tx, id LIMIT ${BATCH}
      ) AS e ON true`
    if (this.ended) return false
    const found = rows.filter((row: { id: unknown }) => row.id !== null)
    for (const row of found) this.hub.publish(eventOf(row))
    const last = found.at(-1)
    if (found.length === BATCH && last) {
      this.cursor = { tx: String(last.tx), id: String(last.id) }
      return true
    }
    // Everything below `next` is read: the cursor moves there (never back).
    const next = String(rows[0]?.next ?? '0')
    if (BigInt(next) > BigInt(this.cursor.tx)) this.cursor = { tx: next, id: '0' }
    else if (last) this.cursor = { tx: String(last.tx), id: String(last.id) }
    return false
  }

  /** Deletes what is beyond the window and one more (load() relies on that one), by any replica. */
  async prune(): Promise<void> {
    await this.sql`
      DELETE FROM rl_events
      WHERE id < (SELECT id FROM rl_events ORDER BY id DESC OFFSET ${this.window.events} LIMIT 1)`
  }

  async subscribe(listener: ChangeListener, lastId?: string): Promise<Subscription> {
    // Caught up first: a client's id may be one another replica gave out a moment ago, and what it missed includes
    // every change committed before it asked, on whichever replica.
    // Counted as listening meanwhile: a wake-up that comes during this read reads again (`readIfListened`).
    this.subscribing += 1
    try {
      await this.read().catch(this.report)
    } finally {
      this.subscribing -= 1
    }
    return this.hub.attach(listener, lastId)
  }

  end(): void {
    this.ended = true
    for (const timer of this.timers) clearInterval(timer)
    this.listening?.unlisten().catch(() => {})
    this.hub.end()
  }
}
