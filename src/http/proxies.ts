import type { Server } from 'bun'
import { addressGroups, clientKey } from './client-key.ts'
import { isPlainHost } from './request-target.ts'

/** A range of addresses: the first `bits` of `groups` (IPv4 as IPv4-mapped IPv6, so /24 is /120). */
interface Range {
  groups: number[]
  bits: number
}

/** The ranges each word of `--trust-proxy` names. */
const WORDS: Record<string, readonly string[]> = {
  loopback: ['127.0.0.0/8', '::1/128'],
  // RFC 1918's and IPv6's unique local addresses: where a proxy on the same network usually is.
  private: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7'],
}

/** The range `text` names (`203.0.113.7`, `10.0.0.0/8`, `2001:db8::/32`), or undefined when it is none. */
function rangeOf(text: string): Range | undefined {
  const [address = '', prefix, extra] = text.trim().split('/')
  const groups = addressGroups(address)
  if (!groups || extra !== undefined) return undefined
  const v4 = !address.includes(':')
  const width = v4 ? 32 : 128
  if (prefix !== undefined && !/^\d{1,3}$/.test(prefix)) return undefined
  const bits = prefix === undefined ? width : Number(prefix)
  if (bits > width) return undefined
  return { groups, bits: v4 ? bits + 96 : bits }
}

const within = (groups: number[], { groups: base, bits }: Range) => {
  for (let i = 0; i < 8; i++) {
    const take = Math.max(0, Math.min(16, bits - i * 16))
    if (take === 0) return true
    const mask = (0xffff << (16 - take)) & 0xffff
    if (((groups[i] ?? 0) & mask) !== ((base[i] ?? 0) & mask)) return false
  }
  return true
}

/**
 * Reads a `--trust-proxy` entry: an address, a CIDR range, or the words `loopback` and `private`. Throws with what is
 * wrong, for the option's message.
 */
export function trustEntry(text: string): string {
  const entry = text.trim().toLowerCase()
  if (WORDS[entry] || rangeOf(entry)) return entry
  throw new Error(`"${text}" is no address, CIDR range (such as 10.0.0.0/8), loopback or private`)
}

/** Whether an address is one of the peers `entries` (from {@link trustEntry}) trusts. */
export function trustedPeers(entries: readonly string[]): (address: string) => boolean {
  const ranges = entries.flatMap((entry) => WORDS[entry] ?? [entry]).flatMap((text) => rangeOf(text) ?? [])
  return (address) => {
    const groups = addressGroups(address)
    return groups !== undefined && ranges.some((range) => within(groups, range))
  }
}

/** Who sent a request: its client, and the scheme and host it asked for. */
export interface Forwarded {
  /** The client's address, as the proxy nearest it saw it (the socket's peer when no trusted proxy named one). */
  address: string
  /** `http` or `https`, as the client asked the proxy; undefined when no trusted proxy said. */
  proto?: 'http' | 'https'
  /** The `Host` the client sent the proxy; undefined when no trusted proxy said. */
  host?: string
}

/** A forwarded address longer than this names nothing a proxy writes: the hop is not believed. */
const MAX_NODE = 64

/** The values of a comma-separated header, trimmed; empty for none. */
const values = (header: string | null) => (header ? header.split(',').map((value) => value.trim()) : [])

/** The address of a hop, its port and brackets dropped: `[2001:db8::1]:4711` is `2001:db8::1`. */
function nodeAddress(node: string): string {
  const bracketed = /^\[([^\]]*)\](?::\d+)?$/.exec(node)
  if (bracketed) return bracketed[1] as string
  const v4 = /^(\d{1,3}(?:\.\d{1,3}){3})(?::\d+)?$/.exec(node)
  return v4 ? (v4[1] as string) : node
}

const scheme = (value: string | undefined) => {
  const word = value?.toLowerCase()
  return word === 'http' || word === 'https' ? word : undefined
}

const host = (value: string | undefined) => (value && isPlainHost(value) ? value : undefined)

/**
 * Who sent a request that `peer`, a trusted proxy, passed on: the right-most address of `X-Forwarded-For` that is not
 * itself a trusted proxy. Each proxy appends the address it saw, so a client can add addresses on the left but never
 * choose the one the nearest proxy wrote; an entry that is no address ends the walk there. The scheme and host are
 * the last values of `X-Forwarded-Proto` and `X-Forwarded-Host`, which the nearest proxy sets. `Forwarded` (RFC
 * 7239) is not read: nginx, Caddy and HAProxy write `X-Forwarded-For` and pass a client's own `Forwarded` on as it
 * came, so believing it would let any client name itself.
 */
export function forwardedBy(peer: string, headers: Headers, trusted: (address: string) => boolean): Forwarded {
  const hops = values(headers.get('x-forwarded-for'))
  let address = peer
  for (let i = hops.length - 1; i >= 0; i--) {
    const node = nodeAddress(hops[i] as string)
    if (node.length > MAX_NODE || addressGroups(node) === undefined) break
    address = node
    if (!trusted(node)) break
  }
  const last = (name: string) => values(headers.get(name)).at(-1)
  return { address, proto: scheme(last('x-forwarded-proto')), host: host(last('x-forwarded-host')) }
}

/** How a server tells its clients apart: by the socket's peer, or through the proxies it trusts. */
export interface Clients {
  /** The per-client key (`clientKey`) of the client `request` came from. */
  key(server: Pick<Server<unknown>, 'requestIP'> | null | undefined, request: Request): string
  /** Who sent `request`; its proto and host only when a trusted proxy named them. */
  sender(server: Pick<Server<unknown>, 'requestIP'> | null | undefined, request: Request): Forwarded
}

// In-process calls (`app.handle`) have no socket: they share one address, which no proxy list can name.
const IN_PROCESS = 'in-process'

/**
 * The clients of a server that trusts the proxies `entries` names (`--trust-proxy`; none by default): from any
 * other peer, `X-Forwarded-For` and its kin are ignored, since any client can write them, and believing them would
 * let one client spread its attempts over invented addresses.
 *
 * @example
 * const clients = trustedClients(['loopback'])
 * clients.key(app.server, request) // '203.0.113.7', as nginx on 127.0.0.1 said in X-Forwarded-For
 */
export function trustedClients(entries: readonly string[]): Clients {
  // Checked here too, for servers embedded with a list the command line did not read: an entry that names nothing
  // must not quietly trust nothing.
  const trusted = trustedPeers(entries.map(trustEntry))
  // Each request is read once, however many rules ask.
  const seen = new WeakMap<Request, Forwarded>()
  const sender: Clients['sender'] = (server, request) => {
    const peer = server?.requestIP(request)?.address ?? IN_PROCESS
    if (entries.length === 0 || !trusted(peer)) return { address: peer }
    let found = seen.get(request)
    if (!found) {
      found = forwardedBy(peer, request.headers, trusted)
      seen.set(request, found)
    }
    return found
  }
  return { sender, key: (server, request) => clientKey(sender(server, request).address) }
}
