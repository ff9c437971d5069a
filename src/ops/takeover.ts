import { readFileSync } from 'node:fs'
import type { Server, TLSOptions } from 'bun'
import { Problem } from '../http/problem.ts'
import { DataFileLockedError } from '../store/json-file/errors.ts'
import { lockOwner } from '../store/json-file/lock.ts'

// Replacing the executable on one machine without a failed request (`--takeover`): the new process listens on the
// port beside the old one (both with SO_REUSEPORT, so the kernel spreads new connections over the two) and holds
// what reaches it; it asks the old one to hand over ({@link HANDOVER_SIGNAL}), which answers with `Connection: close`
// for a moment (so that clients on keep-alive connections move over), then stops as on SIGTERM: it stops accepting,
// finishes what it has, flushes its store and lets go of the data file. The new process then opens the file and
// answers what it held. Connections the old one had queued but not yet accepted when it closed its socket move to
// the new one where the kernel is told to (`net.ipv4.tcp_migrate_req`); elsewhere they are reset, which
// {@link migratesQueuedConnections} lets the server say.

/** How long the old process has to let go of the data file: longer than any request it can be finishing. */
export const LET_GO_MS = 60_000
/** How often the lock is looked at while the old process finishes: a small share of a typical hand-over. */
const POLL_MS = 5

/** How the server listens: `Bun.serve`'s options but its handler. */
export interface ListenOptions {
  port: number
  hostname: string
  maxRequestBodySize: number
  reusePort: boolean
  development: boolean
  idleTimeout: number
  /** The certificate and settings of an HTTPS listener; plain HTTP without. */
  tls?: TLSOptions
}

/** A handler of requests, as `Bun.serve` calls it. */
export type Handler = (request: Request, server: Server<undefined>) => Response | Promise<Response>

/** A socket that listens before the store is open, holding the requests that reach it until {@link open}. */
export interface HeldListener {
  readonly server: Server<undefined>
  /** Answers the held requests, and every later one, with `handler`. */
  open(handler: Handler): void
  /** Answers the held requests, and every later one, with 503: the store could not be opened. */
  fail(): void
}

/**
 * The error a bind on `host:port` gets when something listens there already, or undefined when nothing does. A
 * server listens with SO_REUSEPORT (for a later `--takeover`), which would let a second one share its port without a
 * word: asked first by a bind without it, which fails with EADDRINUSE against any listener.
 */
export function portTaken(host: string, port: number): Error | undefined {
  try {
    Bun.listen({ hostname: host, port, socket: { data() {} } }).stop(true)
    return undefined
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE') return error as Error
    throw error
  }
}

/** Listens with `serve` beside the process that holds the port, holding every request until it is opened or failed. */
export function holdRequests(serve: ListenOptions): HeldListener {
  let handler: Handler | undefined
  const { promise: settled, resolve: settle } = Promise.withResolvers<void>()
  const unavailable = () =>
    new Problem(
      'store-unavailable',
      'the server could not open its data file after the previous process let go of it; try again shortly',
      {},
      { 'retry-after': '1' },
    ).toResponse()
  const hold: Handler = async (request, server) => {
    await settled
    return handler ? handler(request, server) : unavailable()
  }
  let server: Server<undefined>
  try {
    server = Bun.serve({ ...serve, reusePort: true, fetch: hold })
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error
    throw new DataFileLockedError(
      `cannot take over port ${serve.port}: the server there does not share it (it was started by a version without --takeover); stop it first`,
    )
  }
  return {
    server,
    open(next) {
      handler = next
      server.reload({ fetch: next })
      settle()
    },
    fail() {
      server.reload({ fetch: unavailable })
      settle()
    },
  }
}

/** The signal that asks a server to hand over: recorded in its lock, sent by `--takeover`, caught by src/main.ts. */
export const HANDOVER_SIGNAL = 'SIGUSR2'

/**
 * How long a server asked to hand over goes on answering before it stops accepting, each answer with
 * `Connection: close`: long enough for a client sending request after request on a keep-alive connection to get
 * one, and open its next connection where it is accepted and held, rather than find its connection closed under a
 * request it has just sent. Connections idle all along are closed as on any stop.
 */
export const CLOSING_MS = 200

/** The live server holding a data file, as a takeover asks it to let go. */
export interface Holder {
  pid: number
  signal: NodeJS.Signals
}

/**
 * The live server holding `file`, which a takeover asks to let go; undefined when no process holds it. A holder
 * that is still starting, that this process cannot signal (another pid namespace), or that records no handover
 * signal (a version without `--takeover`) cannot be asked.
 */
export function holderToAsk(file: string): Holder | undefined {
  const owner = lockOwner(file)
  if (owner === undefined) return undefined
  const refused = (why: string) => new DataFileLockedError(`cannot take over ${file}: the process holding it ${why}`)
  if (owner.pid === undefined || owner.url === undefined) throw refused('is still starting; try again once it serves')
  if (!owner.running)
    throw refused(`(pid ${owner.pid}) runs where this process cannot signal it, such as another container`)
  if (owner.handover !== HANDOVER_SIGNAL)
    throw refused(`(pid ${owner.pid}) is a version without --takeover; stop it first`)
  return { pid: owner.pid, signal: HANDOVER_SIGNAL }
}

/**
 * Asks `holder` to hand over and waits until it has let go of `file`; rejects after {@link LET_GO_MS}, leaving it to
 * finish.
 */
export async function askToLetGo(file: string, holder: Holder): Promise<void> {
  process.kill(holder.pid, holder.signal)
  const deadline = performance.now() + LET_GO_MS
  while (lockOwner(file) !== undefined) {
    if (performance.now() > deadline)
      throw new DataFileLockedError(
        `cannot take over ${file}: the process holding it (pid ${holder.pid}) did not let go within ${LET_GO_MS / 1000} s`,
      )
    await Bun.sleep(POLL_MS)
  }
}

/** `handler`, each of whose answers asks the client to close its connection (RFC 9112, section 9.6). */
export function closingConnections(handler: Handler): Handler {
  return async (request, server) => {
    const response = await handler(request, server)
    try {
      response.headers.set('connection', 'close')
      return response
    } catch {
      // A response whose headers are immutable (made by Response.redirect, say): the same, anew.
      const headers = new Headers(response.headers)
      headers.set('connection', 'close')
      return new Response(response.body, { status: response.status, statusText: response.statusText, headers })
    }
  }
}

/**
 * Whether the kernel moves connections queued on a closing listener to another listener of its port
 * (`net.ipv4.tcp_migrate_req`, Linux 5.14); false where it does not, or cannot say.
 */
export function migratesQueuedConnections(): boolean {
  try {
    return readFileSync('/proc/sys/net/ipv4/tcp_migrate_req', 'utf8').trim() === '1'
  } catch {
    return false
  }
}
