/**
 * The event streams' engine: each client's stream of the catalogue's changes as Server-Sent Events, the open ones
 * counted per client address with one heartbeat timer, and each change made into bytes once for every stream. What
 * is admitted, and how, is the route's (routes.ts). The work and memory of a stream are bounded by constants: the
 * bytes it may have waiting for a slow reader (past them it is dropped).
 */
import { type PushController, pushStream, withResolvers } from '#runtime'
import { recordJson } from '../http/json.ts'
import { CHANGE_WINDOW, type ChangeEvent, type Subscription } from '../store/changes.ts'

/** The bounds and rhythm of the event streams; see {@link EVENT_STREAM_LIMITS}. */
export interface EventStreamLimits {
  /** Streams open at once from one client address (its `clientKey`: an IPv4 address, an IPv6 /56, loopback). */
  perClient: number
  /** Streams open at once in this process. */
  total: number
  /** A comment line is sent after this long without anything else, so that proxies and idle timers keep the stream. */
  heartbeatMs: number
  /** Bytes a stream may have waiting for a reader that does not read (beyond the kernel's buffers): then dropped. */
  maxPendingBytes: number
  /** The reconnection delay the stream asks browsers for (`retry:`), in ms. */
  retryMs: number
}

/**
 * The server's: 16 streams per address (tabs of a household behind one address; a page opens one), 2,000 in all,
 * a heartbeat every 15 seconds (well under the 30-second idle timeouts common in proxies, and under the server's
 * own), and 128 KiB waiting for a slow reader (several of the largest events).
 */
export const EVENT_STREAM_LIMITS: EventStreamLimits = {
  perClient: 16,
  total: 2000,
  heartbeatMs: 15_000,
  maxPendingBytes: 128 * 1024,
  retryMs: 3000,
}

const encoder = new TextEncoder()
const HEARTBEAT = encoder.encode(': heartbeat\n\n')

/** When and by whom a change was made, as the artist history says it: `,"at":…,"by":…` (`by` when known). */
const madeBy = (event: ChangeEvent) =>
  `,"at":"${new Date(event.at).toISOString()}"${event.by === undefined ? '' : `,"by":${JSON.stringify(event.by)}`}`

/** The URL of a changed resource, its representation's JSON under the name of its kind, when and by whom. */
function payload(event: ChangeEvent): string {
  const { change } = event
  switch (change.kind) {
    case 'artist-created':
    case 'artist-updated':
      return `{"url":"/api/v1/artists/${change.artist.id}","artist":${recordJson(change.artist)}${madeBy(event)}}`
    case 'album-created':
    case 'album-updated':
    case 'album-deleted': {
      const { album } = change
      return `{"url":"/api/v1/artists/${album.artistId}/albums/${album.id}","album":${recordJson(album)}${madeBy(event)}}`
    }
    case 'reset':
      return '{"reason":"reset"}'
  }
}

const frames = new WeakMap<ChangeEvent, Uint8Array>()

/** The bytes of one event, made once however many streams send it. A reset is sent as `reload`. */
function frameOf(event: ChangeEvent): Uint8Array {
  let frame = frames.get(event)
  if (!frame) {
    const name = event.change.kind === 'reset' ? 'reload' : event.change.kind
    frame = encoder.encode(`id: ${event.id}\nevent: ${name}\ndata: ${payload(event)}\n\n`)
    frames.set(event, frame)
  }
  return frame
}

/**
 * The open streams, counted in all and per client address, and their one heartbeat timer: it runs only while a
 * stream is open, every quarter of the interval, so a heartbeat goes out within 1.25 intervals of the last byte.
 */
export class OpenStreams {
  private readonly streams = new Set<EventStream>()
  private readonly perClient = new Map<string, number>()
  private timer: ReturnType<typeof setInterval> | undefined

  constructor(private readonly heartbeatMs: number) {}

  get total(): number {
    return this.streams.size
  }

  of(client: string): number {
    return this.perClient.get(client) ?? 0
  }

  add(client: string, stream: EventStream): void {
    this.streams.add(stream)
    this.perClient.set(client, this.of(client) + 1)
    this.timer ??= setInterval(
      () => {
        const now = Date.now()
        for (const each of this.streams) each.heartbeat(now)
      },
      Math.max(1, Math.floor(this.heartbeatMs / 4)),
    )
  }

  remove(client: string, stream: EventStream): void {
    if (!this.streams.delete(stream)) return
    const left = this.of(client) - 1
    if (left > 0) this.perClient.set(client, left)
    else this.perClient.delete(client)
    if (this.streams.size === 0) {
      clearInterval(this.timer)
      this.timer = undefined
    }
  }
}

/** Streams with something to write: written together in the next turn of the event loop. */
const due = new Set<EventStream>()

/**
 * Has `stream` write what waits in the next turn, with every other stream that has something: a change's events go
 * out after the answer to the write that made it (not before it, 1,000 sends later), in one pass over the streams.
 */
function writeSoon(stream: EventStream): void {
  if (due.size === 0)
    setImmediate(() => {
      const streams = [...due]
      due.clear()
      for (const each of streams) each.pump()
    })
  due.add(stream)
}

/**
 * One client's stream. Nothing is handed to the connection while it is full: Bun's direct stream answers a `write`
 * with a promise once the connection's buffers are full, and until it settles what comes waits here, in `queue`, as
 * references to the events (shared by every stream; each made into bytes once). The missed changes a reconnecting
 * client is given are bounded by the window; past them, what waits may not exceed `maxPendingBytes`: a reader that
 * falls that far behind is dropped, the bytes waiting for it with it.
 */
export class EventStream {
  readonly body: ReadableStream
  private controller: PushController | undefined
  private readonly queue: { chunk: Uint8Array; live: boolean }[] = []
  private next = 0
  /** Bytes of live changes waiting in `queue` (the missed ones given at the start are not counted). */
  private pending = 0
  private draining = false
  private closed = false
  private subscription: Subscription | undefined
  /** Changes that came while the subscription was being made: sent right after the missed ones, in order. */
  private held: ChangeEvent[] | undefined = []
  private readonly finished = withResolvers<void>()
  private quietSince = Date.now()

  constructor(
    private readonly limits: EventStreamLimits,
    private readonly release: () => void,
  ) {
    this.body = pushStream({
      pull: (controller) => {
        this.controller = controller
        if (this.closed) this.finish()
        else this.pump()
        return this.finished.promise
      },
      cancel: () => this.close(),
    })
  }

  /** Sends a heartbeat if nothing was sent for the interval (and nothing waits). */
  heartbeat(now: number): void {
    if (now - this.quietSince >= this.limits.heartbeatMs && this.idle()) this.send(HEARTBEAT, false)
  }

  /** Starts with what the client missed (or `reload`) and the `ready` event, then the changes as they come. */
  start(subscription: Subscription): void {
    this.subscription = subscription
    if (this.closed) {
      subscription.cancel()
      return
    }
    const { missed, head } = subscription
    let text = `retry: ${this.limits.retryMs}\n\n`
    if (missed === 'reload') text += `id: ${head}\nevent: reload\ndata: {"reason":"outside-window"}\n\n`
    this.send(encoder.encode(text), false)
    if (missed !== 'reload') for (const event of missed) this.send(frameOf(event), false)
    const ready = {
      heartbeatSeconds: this.limits.heartbeatMs / 1000,
      window: { events: CHANGE_WINDOW.events, minutes: CHANGE_WINDOW.ms / 60_000 },
    }
    this.send(encoder.encode(`id: ${head}\nevent: ready\ndata: ${JSON.stringify(ready)}\n\n`), false)
    const held = this.held ?? []
    this.held = undefined
    for (const event of held) this.send(frameOf(event), true)
  }

  /** A change from the feed. */
  change(event: ChangeEvent): void {
    if (this.held) this.held.push(event)
    else this.send(frameOf(event), true)
  }

  private idle(): boolean {
    return this.controller !== undefined && !this.draining && this.next === this.queue.length
  }

  /** Queues `chunk` (counted when `live`) and hands what it can to the connection. */
  private send(chunk: Uint8Array, live: boolean): void {
    if (this.closed) return
    this.queue.push({ chunk, live })
    if (live) {
      this.pending += chunk.byteLength
      if (this.pending > this.limits.maxPendingBytes) {
        this.drop()
        return
      }
    }
    writeSoon(this)
  }

  /** Writes what waits, until the connection is full; continues once it has drained. */
  pump(): void {
    const controller = this.controller
    if (!controller || this.draining || this.closed) return
    while (this.next < this.queue.length) {
      const { chunk, live } = this.queue[this.next++] as { chunk: Uint8Array; live: boolean }
      if (live) this.pending -= chunk.byteLength
      this.quietSince = Date.now()
      const written = controller.write(chunk)
      if (written === 0) {
        this.close()
        return
      }
      if (typeof written !== 'number') {
        this.draining = true
        written.then(
          () => {
            this.draining = false
            this.pump()
          },
          () => this.close(),
        )
        break
      }
    }
    // Forget what was written; a queue drained to the end starts again at 0.
    if (this.next === this.queue.length) {
      this.queue.length = 0
      this.next = 0
    } else if (this.next > 64) {
      this.queue.splice(0, this.next)
      this.next = 0
    }
    // No flush: Bun sends what was written at the end of the turn, all streams' writes together. A flush per write
    // costs a system call each: 1,000 streams take 20–30 ms per event that way, against 0.2 ms without.
  }

  /** Ends the stream without flushing: the bytes waiting for it are freed, and the client sees the connection end. */
  private drop(): void {
    if (this.closed) return
    this.queue.length = 0
    this.next = 0
    try {
      this.controller?.close(new Error('the client does not read the event stream'))
    } catch {
      // Already gone.
    }
    this.close()
  }

  /** Ends the stream (the client left, or the server stops, or it was dropped); idempotent. */
  close(): void {
    if (this.closed) return
    this.closed = true
    this.subscription?.cancel()
    this.release()
    this.finish()
  }

  private finish(): void {
    if (!this.controller) return
    try {
      this.controller.close()
    } catch {
      // Already closed (dropped, or the client went away).
    }
    this.finished.resolve()
  }
}
