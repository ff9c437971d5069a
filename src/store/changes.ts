/**
 * The changes a store announces (live updates): every artist created or replaced and every album created, replaced
 * or removed, in the order
 * every replica agrees on, each with an id a client can come back with. The document store publishes its own (one
 * process); the SQL store reads them from a table every replica writes (sql/changes.ts).
 */
import type { Album } from '../model/album.ts'
import type { Artist } from '../model/artist.ts'

/** One change of the catalogue, as stored. */
export type Change =
  | { kind: 'artist-created' | 'artist-updated'; artist: Artist }
  /** `album-deleted` carries the album as it was when removed. */
  | { kind: 'album-created' | 'album-updated' | 'album-deleted'; album: Album }
  /** Everything was replaced (a reset to the start-up state): what a client holds is no longer worth patching. */
  | { kind: 'reset' }

/**
 * A change with its id (opaque, unique in the store), when it was made (ms since the epoch) and who made it, as the
 * artist history says it (`by`, src/model/history.ts; absent for a reset, and for changes written by earlier builds).
 */
export interface ChangeEvent {
  readonly id: string
  readonly at: number
  readonly by?: string
  readonly change: Change
}

/**
 * How much of the past a reconnecting client can be given: the last `events` changes of the last `ms`, and, where
 * `bytes` is set, no more changes than weigh that much together (as {@link changeBytes} counts them).
 */
export interface ChangeWindow {
  events: number
  ms: number
  bytes?: number
}

/**
 * About what a change holds, in bytes: two per character of each of its record's strings (the most a character takes)
 * and a fixed overhead for the event, the record and each field.
 */
export function changeBytes(event: ChangeEvent): number {
  const change = event.change
  const record: object | undefined =
    change.kind === 'reset' ? undefined : 'album' in change ? change.album : change.artist
  let bytes = 128 + event.id.length * 2 + (event.by?.length ?? 0) * 2
  if (record)
    for (const value of Object.values(record)) bytes += 32 + (typeof value === 'string' ? value.length * 2 : 8)
  return bytes
}

/** The window of the server: the last 1,000 changes, none older than 10 minutes. */
export const CHANGE_WINDOW: ChangeWindow = { events: 1000, ms: 10 * 60_000 }

/** What a subscription is told: each change, in order; or that the stream must end (the store is closing). */
export interface ChangeListener {
  change(event: ChangeEvent): void
  /** The feed ends (the server stops): no more changes will come. */
  end(): void
}

/** What `subscribe` answers. */
export interface Subscription {
  /**
   * The changes after the one the client named, oldest first; or `reload` when that id is outside the window or
   * unknown (another run of the store, a reset since): the client must read everything again.
   */
  missed: readonly ChangeEvent[] | 'reload'
  /** The id of the latest change (or of the start of the window): where a stream that saw nothing yet stands. */
  head: string
  /** Stops the calls to the listener. */
  cancel(): void
}

/** The changes of a store, for the event stream. */
export interface Changes {
  /**
   * Calls `listener` with every change from now on; with `lastId`, also answers the changes since that one (see
   * {@link Subscription.missed}). No change is both in `missed` and given to the listener, and none falls between.
   */
  subscribe(listener: ChangeListener, lastId?: string): Promise<Subscription>
  /** Ends every subscription (their streams close) and refuses new ones: the server is stopping. */
  end(): void
}

/**
 * The in-process part of a feed: a ring of the changes in the window (bounded by {@link ChangeWindow}, whatever
 * writes arrive) and the listeners of this process. `publish` takes changes in their final order.
 */
export class ChangeHub implements Changes {
  private ring: ChangeEvent[] = []
  /** With a window bounded in bytes: each kept change's {@link changeBytes}, beside it in `ring`. */
  private sizes: number[] = []
  /** Their sum over the kept changes. */
  private bytes = 0
  /** Index of the oldest kept change in `ring` (the ring is compacted now and then, not on every eviction). */
  private start = 0
  /** Each listener, with the count of changes published when it attached: it is told only of those after. */
  private readonly listeners = new Map<ChangeListener, number>()
  /** Changes published so far. */
  private published = 0
  /** Changes published in this turn of the event loop, with their count: told to the listeners in the next. */
  private undelivered: [ChangeEvent, number][] = []
  private ended = false

  /**
   * `base` is the id of the position before the first change this hub will hold: a client that saw nothing after it
   * can be given everything the hub holds. `clock` dates what is published without a date.
   */
  constructor(
    private base: string,
    private readonly window: ChangeWindow = CHANGE_WINDOW,
    private readonly clock: () => number = Date.now,
    /** Told of each change as it is published, before anyone else (what a fixture namespace holds is weighed so). */
    private readonly observe?: (event: ChangeEvent) => void,
  ) {}

  /** What the kept changes weigh, as {@link changeBytes} counts them; 0 for a window not bounded in bytes. */
  get retainedBytes(): number {
    return this.bytes
  }

  /** How many listeners are attached. */
  get size(): number {
    return this.listeners.size
  }

  /** The id of the latest change kept, or of the position before the first. */
  get head(): string {
    return this.ring.at(-1)?.id ?? this.base
  }

  /**
   * Adds `event` (in its final order) to the window now, and tells every listener in the next turn of the event loop,
   * with whatever else this turn publishes: the write that made the change is answered first. A thousand streams
   * take a few hundred microseconds to be handed a change, which a create would wait for before its 201 were they
   * told at once (`bun bench/events.ts`). A timer, not `setImmediate`: Bun sends an async handler's answer after the
   * immediate queue has run, so work queued there still delays the 201; a timer's comes after it is sent. A reset
   * empties the window: it is not given as a missed change, and an id from before it is unknown from now on.
   */
  publish(event: ChangeEvent): void {
    this.observe?.(event)
    if (event.change.kind === 'reset') {
      this.ring = []
      this.sizes = []
      this.bytes = 0
      this.start = 0
      this.base = event.id
    } else {
      this.ring.push(event)
      if (this.window.bytes !== undefined) {
        const size = changeBytes(event)
        this.sizes.push(size)
        this.bytes += size
      }
      this.evict(this.clock())
    }
    this.published += 1
    if (this.undelivered.push([event, this.published]) === 1) setTimeout(() => this.deliver(), 0)
  }

  /** Tells each listener the changes published since it attached (those before were in its `missed`). */
  private deliver(): void {
    const events = this.undelivered
    this.undelivered = []
    for (const [event, count] of events)
      for (const [listener, attachedAt] of this.listeners) if (count > attachedAt) listener.change(event)
  }

  /** Drops what left the window: beyond its size or its bytes, or older than its age. */
  private evict(now: number): void {
    const oldest = now - this.window.ms
    const maxBytes = this.window.bytes ?? Number.POSITIVE_INFINITY
    while (
      this.ring.length - this.start > this.window.events ||
      (this.ring[this.start]?.at ?? now) < oldest ||
      this.bytes > maxBytes
    ) {
      this.base = (this.ring[this.start] as ChangeEvent).id
      if (this.window.bytes !== undefined) this.bytes -= this.sizes[this.start] as number
      this.start += 1
    }
    // Compacted once the dropped half is large: amortised O(1) per change, memory within twice the window.
    if (this.start > this.window.events || (this.window.bytes !== undefined && this.start > this.ring.length / 2)) {
      this.ring = this.ring.slice(this.start)
      if (this.window.bytes !== undefined) this.sizes = this.sizes.slice(this.start)
      this.start = 0
    }
  }

  /** The changes after `lastId`, or `reload` when it is not in the window; see {@link Subscription.missed}. */
  missedSince(lastId: string): readonly ChangeEvent[] | 'reload' {
    this.evict(this.clock())
    if (lastId === this.base) return this.ring.slice(this.start)
    for (let i = this.ring.length - 1; i >= this.start; i--)
      if ((this.ring[i] as ChangeEvent).id === lastId) return this.ring.slice(i + 1)
    return 'reload'
  }

  /** Whether `lastId` names the start of the window or a change in it. */
  knows(lastId: string): boolean {
    return this.missedSince(lastId) !== 'reload'
  }

  subscribe(listener: ChangeListener, lastId?: string): Promise<Subscription> {
    return Promise.resolve(this.attach(listener, lastId))
  }

  /** `subscribe`, synchronously: the missed changes and the attachment happen in the same turn. */
  attach(listener: ChangeListener, lastId?: string): Subscription {
    if (this.ended) {
      listener.end()
      return { missed: [], head: this.head, cancel: () => {} }
    }
    const missed = lastId === undefined ? [] : this.missedSince(lastId)
    this.listeners.set(listener, this.published)
    return { missed, head: this.head, cancel: () => this.listeners.delete(listener) }
  }

  end(): void {
    this.deliver()
    this.ended = true
    const listeners = [...this.listeners.keys()]
    this.listeners.clear()
    for (const listener of listeners) listener.end()
  }
}
