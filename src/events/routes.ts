/**
 * `GET /api/v1/events`: the catalogue's changes as Server-Sent Events, for pages that update live.
 *
 * Each change is one event: `id:` (give it back as `Last-Event-ID` to resume), `event:` its kind, `data:` the
 * resource's URL and its representation, the same JSON its GET answers. A client that comes back with
 * `Last-Event-ID` gets what it missed while it is in the window (`CHANGE_WINDOW`), otherwise a `reload` event. The
 * route admits a stream within the bounds on connections per client address and in total; the streams themselves
 * are streams.ts's.
 */
import type { Server } from 'bun'
import { Elysia } from 'elysia'
import { publicAccess } from '../docs/security.ts'
import { conditionsWithoutTags } from '../http/conditional.ts'
import { Problem } from '../http/problem.ts'
import type { Clients } from '../http/proxies.ts'
import { SECURITY_HEADERS } from '../http/security-headers.ts'
import { CHANGE_WINDOW, type Changes } from '../store/changes.ts'
import { withCommas } from '../text/numbers.ts'
import { EVENT_STREAM_LIMITS, EventStream, type EventStreamLimits, OpenStreams } from './streams.ts'

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

/**
 * The route of the event stream over `changes`, within `limits`, counting streams per client as `clients` tells them
 * apart. Elysia's `server` names the client's socket, and lets a stream outlive the server's idle timeout (heartbeats
 * keep proxies' alive).
 */
export function eventRoutes(changes: Changes, clients: Clients, limits: EventStreamLimits = EVENT_STREAM_LIMITS) {
  const counts = new OpenStreams(limits.heartbeatMs)
  const routes = new Elysia({ name: 'events' })
  return routes.onBeforeHandle(conditionsWithoutTags(() => routes.routes)).get(
    '/api/v1/events',
    async ({ request, server }) => {
      const client = clients.key(server, request)
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
        description: `A stream of the catalogue's changes, for pages that update live (\`EventSource\` in a browser): \`artist-created\`, \`artist-updated\`, \`album-created\`, \`album-updated\` and \`album-deleted\`, each with an \`id\` and, in \`data\`, the resource's \`url\` and its representation (\`artist\` or \`album\`, as its GET answers; for \`album-deleted\`, the album as it was). On connecting, a \`ready\` event carries the id of the latest change. A client that reconnects with \`Last-Event-ID\` (browsers send it by themselves) first gets the changes it missed, if that id is among the last ${withCommas(CHANGE_WINDOW.events)} changes of the last ${CHANGE_WINDOW.ms / 60_000} minutes; otherwise (an id too old, unknown after a restart, or from before a reset of the data) a \`reload\` event: read what you show again. A reset of the data sends \`reload\` too. A comment line (\`: heartbeat\`) is sent after ${EVENT_STREAM_LIMITS.heartbeatMs / 1000} seconds without any event. Over PostgreSQL every replica streams the changes made on any of them, with the same ids. An address may hold ${EVENT_STREAM_LIMITS.perClient} streams at once and the server ${withCommas(EVENT_STREAM_LIMITS.total)}: past either, 429 with \`Retry-After\`. A stream whose reader falls more than ${EVENT_STREAM_LIMITS.maxPendingBytes / 1024} KiB behind is closed; reconnect with \`Last-Event-ID\`.`,
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
                  'retry: 3000\n\nid: 41\nevent: ready\ndata: {"heartbeatSeconds":15,"window":{"events":1000,"minutes":10}}\n\nid: 42\nevent: album-created\ndata: {"url":"/api/v1/artists/1/albums/77","album":{"id":77,"artistId":1,"name":"Clics modernos","year":1983},"at":"2026-11-29T14:05:00.000Z","by":"user:7/token:12"}\n\n',
              },
            },
          },
          429: { description: 'Too many streams.' },
        },
      },
    },
  )
}
