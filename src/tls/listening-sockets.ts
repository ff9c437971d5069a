import { readdirSync, readFileSync, readlinkSync } from 'node:fs'

/**
 * Closing the listening socket of a Bun server without closing its connections, on Linux.
 *
 * Bun 1.4.5 has one way to make a server stop accepting, `server.stop()`, and it closes the idle keep-alive
 * connections with the listening socket (as its types say, and as tried: a client between two requests sees its
 * connection end at once, TLS or not). Closing the listening socket alone keeps them: the kernel then gives every
 * new connection to the other listeners of the port (SO_REUSEPORT), and the server goes on answering on the
 * connections it has. Bun does not expose the socket, so it is found by its port in /proc; and it is not closed with
 * `shutdown(2)`, which leaves it in Bun's epoll set, readable for ever (Bun then spins a core on `accept`), but
 * replaced: `dup3` puts a new, unbound socket at its descriptor, which closes the listening socket and drops it from
 * the epoll set. Bun closes the new socket when the server stops, as it would have closed the old one.
 */

/** `socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)`, `dup3(…, O_CLOEXEC)` and `close`, from the C library. */
interface Libc {
  socket(domain: number, type: number, protocol: number): number
  dup3(from: number, to: number, flags: number): number
  close(fd: number): number
}

const AF_INET = 2
const SOCK_STREAM = 1
const SOCK_CLOEXEC = 0o2000000
const O_CLOEXEC = 0o2000000
/** The state column of /proc/net/tcp for a listening socket. */
const TCP_LISTEN = '0A'

let libc: Libc | null | undefined

/** The C library's functions, or null where there is none to load (not Linux, or not glibc). */
function loadLibc(): Libc | null {
  if (libc !== undefined) return libc
  libc = null
  if (process.platform !== 'linux') return libc
  try {
    const { dlopen, FFIType } = require('bun:ffi') as typeof import('bun:ffi')
    const { i32 } = FFIType
    const { symbols } = dlopen('libc.so.6', {
      socket: { args: [i32, i32, i32], returns: i32 },
      dup3: { args: [i32, i32, i32], returns: i32 },
      close: { args: [i32], returns: i32 },
    })
    libc = symbols
  } catch {
    // No glibc to load (musl, say): the caller falls back to stopping the server.
  }
  return libc
}

/** The sockets listening on TCP `port`, on any address, IPv4 or IPv6: inode and connections queued to accept. */
function listening(port: number): Map<string, number> {
  const queued = new Map<string, number>()
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string
    try {
      text = readFileSync(table, 'utf8')
    } catch {
      continue
    }
    for (const line of text.split('\n').slice(1)) {
      // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode; a listening
      // socket's rx_queue is its accept queue.
      const [, local, , state, queues, , , , , inode] = line.trim().split(/\s+/)
      if (state === TCP_LISTEN && inode && Number.parseInt(local?.split(':')[1] ?? '', 16) === port)
        queued.set(inode, Number.parseInt(queues?.split(':')[1] ?? '0', 16))
    }
  }
  return queued
}

/** Listening sockets of this process: their descriptors, and the port to find them by in /proc. */
export interface ListeningSockets {
  port: number
  fds: number[]
  inodes: string[]
}

/**
 * This process's sockets listening on TCP `port`: none where /proc cannot say (not Linux). Another process listening
 * on the same port (a takeover's) has sockets of its own, never among these.
 */
export function listeningSockets(port: number): ListeningSockets {
  const found: ListeningSockets = { port, fds: [], inodes: [] }
  if (process.platform !== 'linux' || loadLibc() === null) return found
  const inodes = listening(port)
  if (inodes.size === 0) return found
  let entries: string[]
  try {
    entries = readdirSync('/proc/self/fd')
  } catch {
    return found
  }
  for (const entry of entries) {
    try {
      const target = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/self/fd/${entry}`))?.[1]
      if (target && inodes.has(target)) {
        found.fds.push(Number(entry))
        found.inodes.push(target)
      }
    } catch {
      // Closed while listed: not a listener of ours.
    }
  }
  return found
}

/**
 * The connections the kernel has established on `sockets` that no one has accepted yet. Closing a listening socket
 * resets them, unless `net.ipv4.tcp_migrate_req` is 1 (Linux 5.14), which hands them to another listener of the port.
 */
export function queuedConnections(sockets: ListeningSockets): number {
  const queued = listening(sockets.port)
  return sockets.inodes.reduce((sum, inode) => sum + (queued.get(inode) ?? 0), 0)
}

/**
 * Closes the listening sockets `fds` (from {@link listeningSockets}) and leaves their connections open; true once
 * every one is closed. False, with nothing done, where the C library cannot be loaded.
 */
export function closeListening({ fds }: ListeningSockets): boolean {
  const c = loadLibc()
  if (c === null || fds.length === 0) return false
  for (const fd of fds) {
    const stand = c.socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)
    if (stand < 0) return false
    const placed = c.dup3(stand, fd, O_CLOEXEC)
    c.close(stand)
    if (placed !== fd) return false
  }
  return true
}
