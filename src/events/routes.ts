/**
 * `GET /api/v1/events`: the catalogue's changes as Server-Sent Events, for pages that update live.
 *
 * Each change is one event: `id:` (give it back as `Last-Event-ID` to resume), `event:` its kind, `data:` the
 * resource's URL and its representation, the same JSON its GET answers. A client that comes back with
 * `Last-Event-ID` gets what it missed while it is in the window (`CHANGE_WINDOW`), otherwise a `reload` event. The
 * work and memory of a stream are bounded by constants: connections per client address and in total, and the bytes
 * a stream may have waiting for a slow reader (past them it is dropped).
 */
import type { Server } from 'bun'
import { Elysia } from 'elysia'
import { requestClient } from '../auth/client-key.ts'
import { publicAccess } from '../docs/security.ts'
import { recordJson } from '../http/json.ts'
import { Problem } from '../http/problem.ts'
import { SECURITY_HEADERS } from '../http/security-headers.ts'
import { CHANGE_WINDOW, type ChangeEvent, type Changes, type Subscription } from '../store/changes.ts'
import { withCommas } from '../text/numbers.ts'

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

/** Seconds a refused client is asked to wait. */
const RETRY_AFTER_SECONDS = 30

/** A `Last-Event-ID` longer than this names no event of ours: it is answered with `reload`, never looked up. */
const MAX_EVENT_ID_LENGTH = 64

/**
 * The answer's headers: no cache may keep or transform it, and nginx-style proxies must pass each event on at once
 * rather than buffer the stream (`X-Accel-Buffering: no`).
 */
const STREAM_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  'x-accel-buffering': 'no',
  ...SECURITY_HEADERS,
}

const encoder = new TextEncoder()
const HEARTBEAT = encoder.encode(': heartbeat\n\n')

/** The URL of a changed resource and its representation's JSON, under the name of its kind. */
function payload(event: ChangeEvent): string {
  const { change } = event
  switch (change.kind) {
    case 'artist-created':
    case 'artist-updated':
      return `{"url":"/api/v1/artists/${change.artist.id}","artist":${recordJson(change.artist)}}`
    case 'album-created': {
      const { album } = change
      return `{"url":"/api/v1/artists/${album.artistId}/albums/${album.id}","album":${recordJson(album)}}`
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
class OpenStreams {
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

type Direct = ReadableStreamDirectController

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
class EventStream {
  readonly body: ReadableStream
  private controller: Direct | undefined
  private readonly queue: { chunk: Uint8Array; live: boolean }[] = []
  private next = 0
  /** Bytes of live changes waiting in `queue` (the missed ones given at the start are not counted). */
  private pending = 0
  private draining = false
  private closed = false
  private subscription: Subscription | undefined
  /** Changes that came while the subscription was being made: sent right after the missed ones, in order. */
  private held: ChangeEvent[] | undefined = []
  private readonly finished = Promise.withResolvers<void>()
  private quietSince = Date.now()

  constructor(
    private readonly limits: EventStreamLimits,
    private readonly release: () => void,
  ) {
    this.body = new ReadableStream({
      type: 'direct',
      pull: (controller: Direct) => {
        this.controller = controller
        if (this.closed) this.finish()
        else this.pump()
        return this.finished.promise
      },
      cancel: () => this.close(),
    } satisfies Bun.DirectUnderlyingSource)
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

/**
 * The route of the event stream over `changes`, within `limits`. `serverOf` is the Bun server (`app.server`): it
 * names the client address, and lets a stream outlive the server's idle timeout (heartbeats keep proxies' alive).
 */
export function eventRoutes(changes: Changes, limits: EventStreamLimits = EVENT_STREAM_LIMITS) {
  const counts = new OpenStreams(limits.heartbeatMs)
  return new Elysia({ name: 'events' }).get(
    '/api/v1/events',
    async ({ request, server }) => {
      const client = requestClient(server, request)
      if (counts.total >= limits.total)
        throw new Problem(
          'too-many-requests',
          `This server has as many event streams open as it serves (${limits.total}). Try again in ${RETRY_AFTER_SECONDS} seconds.`,
          {},
          { 'retry-after': String(RETRY_AFTER_SECONDS) },
        )
      if (counts.of(client) >= limits.perClient)
        throw new Problem(
          'too-many-requests',
          `Your address has ${limits.perClient} event streams open, the most one address may have: close one (a page needs one stream, however many it shows), or try again in ${RETRY_AFTER_SECONDS} seconds.`,
          {},
          { 'retry-after': String(RETRY_AFTER_SECONDS) },
        )
      const stream: EventStream = new EventStream(limits, () => counts.remove(client, stream))
      counts.add(client, stream)
      try {
        const given = request.headers.get('last-event-id')?.trim()
        // An id of ours is short; anything else is unknown, and told to reload without a look-up.
        const lastId = given && given.length > MAX_EVENT_ID_LENGTH ? '' : given || undefined
        stream.start(
          await changes.subscribe({ change: (event) => stream.change(event), end: () => stream.close() }, lastId),
        )
      } catch (error) {
        stream.close()
        throw error
      }
      // The stream stays open however long it is quiet: the heartbeats, not the idle timeout, find dead peers.
      ;(server as Server<unknown> | null)?.timeout(request, 0)
      return new Response(stream.body, { headers: STREAM_HEADERS })
    },
    {
      detail: {
        operationId: 'streamEvents',
        summary: 'Follow the changes (Server-Sent Events)',
        description: `A stream of the catalogue's changes, for pages that update live (\`EventSource\` in a browser): \`artist-created\`, \`artist-updated\` and \`album-created\`, each with an \`id\` and, in \`data\`, the resource's \`url\` and its representation (\`artist\` or \`album\`, as its GET answers). On connecting, a \`ready\` event carries the id of the latest change. A client that reconnects with \`Last-Event-ID\` (browsers send it by themselves) first gets the changes it missed, if that id is among the last ${withCommas(CHANGE_WINDOW.events)} changes of the last ${CHANGE_WINDOW.ms / 60_000} minutes; otherwise (an id too old, unknown after a restart, or from before a reset of the data) a \`reload\` event: read what you show again. A reset of the data sends \`reload\` too. A comment line (\`: heartbeat\`) is sent after ${EVENT_STREAM_LIMITS.heartbeatMs / 1000} seconds without any event. Over PostgreSQL every replica streams the changes made on any of them, with the same ids. An address may hold ${EVENT_STREAM_LIMITS.perClient} streams at once and the server ${withCommas(EVENT_STREAM_LIMITS.total)}: past either, 429 with \`Retry-After\`. A stream whose reader falls more than ${EVENT_STREAM_LIMITS.maxPendingBytes / 1024} KiB behind is closed; reconnect with \`Last-Event-ID\`.`,
        tags: ['Events'],
        security: publicAccess,
        responses: {
          200: {
            description:
              'The event stream, open until the client leaves or the server stops (`text/event-stream`; not cached, not transformed, not buffered by proxies).',
            content: {
              'text/event-stream': {
                schema: { type: 'string' },
                example:
                  'retry: 3000\n\nid: 41\nevent: ready\ndata: {"heartbeatSeconds":15,"window":{"events":1000,"minutes":10}}\n\nid: 42\nevent: album-created\ndata: {"url":"/api/v1/artists/1/albums/77","album":{"id":77,"artistId":1,"name":"Clics modernos","year":1983}}\n\n',
              },
            },
          },
          429: { description: 'Too many streams.' },
        },
      },
    },
  )
}
