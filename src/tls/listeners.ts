import type { Server, TLSOptions } from 'bun'
import { CLOSING_MS, type Handler } from '../ops/takeover.ts'
import { closeListening, listeningSockets, queuedConnections } from './listening-sockets.ts'

/** How often a stopping listener is asked whether requests are still under way. */
const DRAIN_POLL_MS = 50

/** The most old listeners kept open for their connections at once: more swaps stop the oldest at once. */
export const MAX_LINGERING = 4

/** How many times at most (a millisecond apart) a swap lets the old listener accept what is queued before closing it. */
const ACCEPT_TRIES = 50

/**
 * Stops `server` gracefully: it accepts nothing more and finishes the requests under way, event streams included;
 * once none is left, the connections that remain are closed. Bun 1.4.5 alone would wait, over TLS, for a connection
 * that has done its handshake and never sent a request (it is neither idle nor busy to it, and no idle timeout
 * closes it), so that any client could hold a stop off for as long as it liked.
 */
export async function drain(server: Server<undefined>): Promise<void> {
  let stopped = false
  const stopping = server.stop().then(() => {
    stopped = true
  })
  while (!stopped && server.pendingRequests > 0) await Promise.race([stopping, Bun.sleep(DRAIN_POLL_MS)])
  if (!stopped) await server.stop(true)
}

/** Opens a listener on `port` serving `tls`, beside the one there (SO_REUSEPORT), and makes it the app's server. */
export type Listen = (tls: TLSOptions, port: number) => Server<undefined>

/**
 * The listeners of one HTTPS port: the newest accepts every new connection, older ones finish what they have.
 *
 * Bun 1.4.5 cannot change the certificate of a listener: `server.reload({ tls })` takes new handlers and leaves the
 * certificate as it was, without a word, and `Bun.serve` has no other way (oven-sh/bun#43815). So a new certificate
 * gets a listener of its own on the same port (both with SO_REUSEPORT), and the old listener answers from then on with
 * `Connection: close`, so that a client on a keep-alive connection opens its next one on the new listener.
 *
 * On Linux the old listener's listening socket is closed at once and its connections are left open
 * (src/tls/listening-sockets.ts): every new connection goes to the new listener, and each old connection ends as it
 * would have without a new certificate, after its next answer or at the idle timeout. Nothing is dropped that the
 * idle timeout would not drop. The old listener is stopped once the idle timeout has passed (its connections are then
 * closed, as a stop closes them, but for a request still under way), or at once when more than
 * {@link MAX_LINGERING} old listeners are waiting so, or when the server stops.
 *
 * Where the socket cannot be closed alone (no /proc, no C library to call), the old listener answers for
 * {@link CLOSING_MS} with `Connection: close`, then stops as a takeover's old process does: it accepts nothing, and
 * finishes the requests it has, event streams included, on the old certificate; a connection idle all along is closed
 * then, as on any stop (Bun's `server.stop()` closes idle keep-alive connections with the listening socket).
 */
export class Listeners {
  private readonly draining = new Set<Server<undefined>>()
  /** The old listeners that accept nothing and wait for their connections to end, each with its deadline. */
  private readonly lingering = new Map<Server<undefined>, ReturnType<typeof setTimeout>>()
  private swapping: Promise<void> = Promise.resolve()

  /**
   * @param lingerMs How long an old listener that accepts nothing keeps its connections: the server's idle timeout
   *   and a little more, by which time each has had its next answer or been closed for its silence.
   */
  constructor(
    private newest: Server<undefined>,
    private readonly listen: Listen,
    private readonly closing: Handler,
    private readonly lingerMs: number,
  ) {}

  /** The listener that accepts new connections. */
  get current(): Server<undefined> {
    return this.newest
  }

  /** The requests being answered on every listener, open event streams included. */
  get pendingRequests(): number {
    let pending = this.newest.pendingRequests
    for (const server of this.draining) pending += server.pendingRequests
    return pending
  }

  /** Serves `tls` on new connections; resolves once the old listener no longer accepts any. */
  swap(tls: TLSOptions): Promise<void> {
    const swapped = this.swapping.then(async () => {
      const old = this.newest
      const port = old.port as number
      // Found before the new listener opens: the sockets of the port that are ours are then the old listener's.
      const sockets = listeningSockets(port)
      this.newest = this.listen(tls, port)
      this.draining.add(old)
      // Closing the old socket resets what the kernel still holds for it (unless net.ipv4.tcp_migrate_req is 1): the
      // event loop first takes what is queued, which makes such resets two to three times rarer
      // (bench/certificate-swap.ts).
      if (sockets.fds.length > 0)
        for (let tries = 0; tries < ACCEPT_TRIES; tries++) {
          await Bun.sleep(1)
          if (queuedConnections(sockets) === 0) break
        }
      const closed = closeListening(sockets)
      // Elysia's routes for Bun are left aside with the rest: every answer now goes through the closing handler.
      old.reload({ routes: {}, fetch: this.closing })
      if (closed) {
        this.linger(old)
        return
      }
      await Bun.sleep(CLOSING_MS)
      this.retire(old)
    })
    // A swap that failed leaves the listener there was: the next swap or stop goes on from it.
    this.swapping = swapped.catch(() => undefined)
    return swapped
  }

  /** Keeps `old`, which accepts nothing, until its connections have ended; no more than {@link MAX_LINGERING}. */
  private linger(old: Server<undefined>): void {
    this.lingering.set(
      old,
      setTimeout(() => this.retire(old), this.lingerMs),
    )
    for (const [server] of this.lingering) {
      if (this.lingering.size <= MAX_LINGERING) break
      this.retire(server)
    }
  }

  /** Stops `old`: it finishes the requests it has, and is forgotten once they are done. */
  private retire(old: Server<undefined>): void {
    clearTimeout(this.lingering.get(old))
    this.lingering.delete(old)
    // Not awaited: an event stream on the old listener may last until the server stops.
    drain(old).then(() => this.draining.delete(old))
  }

  /** Answers every request on every listener with `handler` from now on (a takeover's closing). */
  reload(handler: Handler): void {
    for (const server of [this.newest, ...this.draining]) server.reload({ routes: {}, fetch: handler })
  }

  /** Stops every listener: none accepts, and each finishes the requests it has. */
  async stop(): Promise<void> {
    await this.swapping
    this.forgetLingering()
    await Promise.all([this.newest, ...this.draining].map(drain))
  }

  /** Stops every listener at once, closing their connections (a start that failed). */
  async kill(): Promise<void> {
    this.forgetLingering()
    await Promise.all([this.newest, ...this.draining].map((server) => server.stop(true)))
  }

  private forgetLingering(): void {
    for (const timer of this.lingering.values()) clearTimeout(timer)
    this.lingering.clear()
  }
}
