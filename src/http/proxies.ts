import type { Server } from 'bun'
import { addressGroups, clientKey } from './client-key.ts'

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

/** Where a request came from: its client, and the scheme and host it asked for. */
export interface Origin {
  /** The client's address (or the identifier a proxy gave for it), as the proxy nearest it saw it. */
  address: string
  /** `http` or `https`, as the client asked the proxy nearest it; undefined when no trusted proxy said. */
  proto?: 'http' | 'https'
  /** The `Host` the client sent that proxy; undefined when no trusted proxy said. */
  host?: string
}

/** A forwarded identifier longer than this names nothing a proxy writes: the hop is not believed. */
const MAX_NODE = 64

/** Splits a header into its comma-separated elements, outside quoted strings. */
function elements(header: string): string[] {
  const parts: string[] = []
  let start = 0
  let quoted = false
  for (let i = 0; i < header.length; i++) {
    const char = header[i]
    if (char === '"' && header[i - 1] !== '\\') quoted = !quoted
    else if (char === ',' && !quoted) {
      parts.push(header.slice(start, i))
      start = i + 1
    }
  }
  parts.push(header.slice(start))
  return parts.map((part) => part.trim()).filter(Boolean)
}

/** The pairs of one `Forwarded` element (RFC 7239): `for`, `proto`, `host`, names in lower case, quotes removed. */
function pairs(element: string): Record<string, string> {
  const found: Record<string, string> = {}
  for (const pair of element.split(';')) {
    const equals = pair.indexOf('=')
    if (equals < 0) continue
    const name = pair.slice(0, equals).trim().toLowerCase()
    let value = pair.slice(equals + 1).trim()
    if (value.startsWith('"') && value.endsWith('"') && value.length >= 2)
      value = value.slice(1, -1).replace(/\\(.)/g, '$1')
    if (!(name in found)) found[name] = value
  }
  return found
}

/** The address of a `for=` node, its port and brackets dropped: `"[2001:db8::1]:4711"` is `2001:db8::1`. */
function nodeAddress(node: string): string {
  const bracketed = /^\[([^\]]*)\](?::\d+)?$/.exec(node)
  if (bracketed) return bracketed[1] as string
  const v4 = /^(\d{1,3}(?:\.\d{1,3}){3})(?::\d+)?$/.exec(node)
  return v4 ? (v4[1] as string) : node
}

const scheme = (value: string | undefined) => {
  const word = value?.trim().toLowerCase()
  return word === 'http' || word === 'https' ? word : undefined
}

// A host as `Host` may hold it: a name or IPv4 address, or a bracketed IPv6 address, and an optional port.
const HOST =
  /^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*|\[[0-9a-f:.]+\])(?::\d{1,5})?$/i
const host = (value: string | undefined) => {
  const text = value?.trim()
  return text && text.length <= 255 && HOST.test(text) ? text : undefined
}

/**
 * Where a request that `peer` (a trusted proxy) sent came from: the right-most hop of `Forwarded` (RFC 7239), or of
 * `X-Forwarded-For`, that is not itself a trusted proxy, so that a client can add hops on the left but never choose
 * the one the nearest proxy wrote. With `Forwarded`, the scheme and host are that hop's `proto` and `host`; with
 * `X-Forwarded-For`, the first of `X-Forwarded-Proto` and `X-Forwarded-Host`, as proxies write one each. Without
 * either header, the peer itself.
 */
export function forwardedOrigin(peer: string, headers: Headers, trusted: (address: string) => boolean): Origin {
  const forwarded = headers.get('forwarded')
  if (forwarded) {
    const hops = elements(forwarded).map(pairs)
    for (let i = hops.length - 1; i >= 0; i--) {
      const hop = hops[i] as Record<string, string>
      const node = hop.for === undefined ? undefined : nodeAddress(hop.for)
      if (node === undefined || node.length > MAX_NODE) break
      if (trusted(node) && i > 0) continue
      return { address: node, proto: scheme(hop.proto), host: host(hop.host) }
    }
    return { address: peer }
  }
  const chain = headers.get('x-forwarded-for')
  if (!chain) return { address: peer }
  const hops = elements(chain).map(nodeAddress)
  let address = peer
  for (let i = hops.length - 1; i >= 0; i--) {
    const node = hops[i] as string
    if (node.length > MAX_NODE || addressGroups(node) === undefined) break
    address = node
    if (!trusted(node)) break
  }
  const first = (name: string) => headers.get(name)?.split(',')[0]
  return { address, proto: scheme(first('x-forwarded-proto')), host: host(first('x-forwarded-host')) }
}

/** How a server tells its clients apart: by the socket's peer, or through the proxies it trusts. */
export interface Clients {
  /** The per-client key (`clientKey`) of the client `request` came from. */
  key(server: Pick<Server<unknown>, 'requestIP'> | null | undefined, request: Request): string
  /** Where `request` came from; its proto and host only when a trusted proxy named them. */
  origin(server: Pick<Server<unknown>, 'requestIP'> | null | undefined, request: Request): Origin
}

// In-process calls (`app.handle`) have no socket: they share one address, which no proxy list can name.
const IN_PROCESS = 'in-process'

/**
 * The clients of a server that trusts the proxies `entries` names (`--trust-proxy`; none by default): from any
 * other peer, forwarding headers are ignored, since any client can write them, and believing them would let one
 * client spread its attempts over invented addresses.
 *
 * @example
 * const clients = trustedClients(['loopback'])
 * clients.key(app.server, request) // '203.0.113.7', as nginx on 127.0.0.1 said in X-Forwarded-For
 */
export function trustedClients(entries: readonly string[]): Clients {
  const trusted = trustedPeers(entries)
  // Each request is read once, however many rules ask.
  const seen = new WeakMap<Request, Origin>()
  const origin: Clients['origin'] = (server, request) => {
    const peer = server?.requestIP(request)?.address ?? IN_PROCESS
    if (entries.length === 0 || !trusted(peer)) return { address: peer }
    let found = seen.get(request)
    if (!found) {
      found = forwardedOrigin(peer, request.headers, trusted)
      seen.set(request, found)
    }
    return found
  }
  return { origin, key: (server, request) => clientKey(origin(server, request).address) }
}
