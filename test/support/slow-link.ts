import type { Socket } from 'bun'

/** Writes to a socket in order, keeping what it could not take yet until it drains. */
class Outbox {
  private queue: Uint8Array[] = []
  private socket: Socket<unknown> | undefined
  private ending = false

  /** From now on writes go to `socket`, what waited first. */
  attach(socket: Socket<unknown>): void {
    this.socket = socket
    this.flush()
  }

  write(chunk: Uint8Array): void {
    this.queue.push(chunk)
    this.flush()
  }

  /** Ends the socket once everything queued is written. */
  end(): void {
    this.ending = true
    this.flush()
  }

  flush(): void {
    const socket = this.socket
    if (!socket) return
    while (this.queue.length > 0) {
      const chunk = this.queue[0] as Uint8Array
      const written = socket.write(chunk)
      if (written < chunk.length) {
        this.queue[0] = chunk.subarray(Math.max(0, written))
        return
      }
      this.queue.shift()
    }
    if (this.ending) socket.end()
  }
}

interface Link {
  /** To the client, from the upstream. */
  back: Outbox
  /** To the upstream, from the client. */
  forth: Outbox
}

/**
 * A TCP relay on 127.0.0.1 to `upstreamPort` whose answers can be held up: with {@link delayMs} above 0, every chunk
 * the upstream sends is passed on that long after it came, in order, while what the client sends goes through at
 * once. Between a replica and its database, it holds apart the moment the database commits a transaction and the
 * moment the replica hears of it, as long as a test needs: time to kill the replica in between.
 *
 * @example
 * const link = await slowLink(pg.port)
 * link.delayMs = 500 // from now on the replica hears of everything half a second late
 */
export async function slowLink(upstreamPort: number) {
  const control = { delayMs: 0 }
  const server = Bun.listen<Link>({
    hostname: '127.0.0.1',
    port: 0,
    socket: {
      open(client) {
        const link: Link = { back: new Outbox(), forth: new Outbox() }
        client.data = link
        link.back.attach(client as Socket<unknown>)
        Bun.connect<Link>({
          hostname: '127.0.0.1',
          port: upstreamPort,
          data: link,
          socket: {
            open: (upstream) => link.forth.attach(upstream as Socket<unknown>),
            data(_, chunk) {
              const copy = new Uint8Array(chunk)
              if (control.delayMs > 0) setTimeout(() => link.back.write(copy), control.delayMs)
              else link.back.write(copy)
            },
            drain: () => link.forth.flush(),
            close: () => {
              setTimeout(() => link.back.end(), control.delayMs)
            },
            error: () => link.back.end(),
          },
        }).catch(() => client.end())
      },
      data: (client, chunk) => client.data.forth.write(new Uint8Array(chunk)),
      drain: (client) => client.data.back.flush(),
      close: (client) => client.data.forth.end(),
      error: (client) => client.data.forth.end(),
    },
  })
  return {
    port: server.port,
    /** How long answers from the upstream are held up, in ms (0: not at all). */
    get delayMs() {
      return control.delayMs
    },
    set delayMs(ms: number) {
      control.delayMs = ms
    },
    stop: () => server.stop(true),
  }
}
