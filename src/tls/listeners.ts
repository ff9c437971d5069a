import type { Server, TLSOptions } from 'bun'
import { CLOSING_MS, type Handler } from '../ops/takeover.ts'

/** How often a stopping listener is asked whether requests are still under way. */
const DRAIN_POLL_MS = 50

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
 * gets a listener of its own on the same port (both with SO_REUSEPORT), and the old listener then closes as a
 * takeover's old process does: for {@link CLOSING_MS} it answers with `Connection: close`, so that a client on a
 * keep-alive connection opens its next one on the new listener, then it stops accepting and finishes the requests it
 * has, event streams included, on the old certificate. Connections idle all along are closed as on any stop.
 */
export class Listeners {
  private readonly draining = new Set<Server<undefined>>()
  private swapping: Promise<void> = Promise.resolve()

  constructor(
    private newest: Server<undefined>,
    private readonly listen: Listen,
    private readonly closing: Handler,
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
      this.newest = this.listen(tls, old.port as number)
      this.draining.add(old)
      // Elysia's routes for Bun are left aside with the rest: every answer now goes through the closing handler.
      old.reload({ routes: {}, fetch: this.closing })
      await Bun.sleep(CLOSING_MS)
      // Not awaited: an event stream on the old listener may last until the server stops.
      drain(old).then(() => this.draining.delete(old))
    })
    // A swap that failed leaves the listener there was: the next swap or stop goes on from it.
    this.swapping = swapped.catch(() => undefined)
    return swapped
  }

  /** Answers every request on every listener with `handler` from now on (a takeover's closing). */
  reload(handler: Handler): void {
    for (const server of [this.newest, ...this.draining]) server.reload({ routes: {}, fetch: handler })
  }

  /** Stops every listener: none accepts, and each finishes the requests it has. */
  async stop(): Promise<void> {
    await this.swapping
    await Promise.all([this.newest, ...this.draining].map(drain))
  }

  /** Stops every listener at once, closing their connections (a start that failed). */
  async kill(): Promise<void> {
    await Promise.all([this.newest, ...this.draining].map((server) => server.stop(true)))
  }
}
