/** The key every loopback address shares: one machine, however many of its 16 million addresses it uses. */
export const LOOPBACK = 'loopback'

const IPV4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/
const HEXTET = /^[0-9a-f]{1,4}$/

/** The four octets of a dotted IPv4 address, or undefined when `text` is not one. */
function ipv4(text: string): number[] | undefined {
  const octets = IPV4.exec(text)?.slice(1).map(Number)
  return octets?.every((octet) => octet <= 255) ? octets : undefined
}

/** The eight 16-bit groups of an IPv6 address (`::` expanded, a trailing dotted IPv4 read as two groups). */
function ipv6(text: string): number[] | undefined {
  let tail: number[] = []
  let head = text
  if (text.includes('.')) {
    const dotted = text.lastIndexOf(':')
    const octets = ipv4(text.slice(dotted + 1))
    if (!octets) return undefined
    const [a = 0, b = 0, c = 0, d = 0] = octets
    tail = [(a << 8) | b, (c << 8) | d]
    // Keep a `::` just before the IPv4 part (`::1.2.3.4`), drop a single colon (`::ffff:1.2.3.4`).
    head = text.slice(0, dotted + 1)
    if (!head.endsWith('::')) head = head.slice(0, -1)
  }
  const halves = head.split('::')
  if (halves.length > 2) return undefined
  const groups = (half: string | undefined) => (half ? half.split(':') : [])
  const before = groups(halves[0])
  const after = groups(halves[1])
  if (![...before, ...after].every((group) => HEXTET.test(group))) return undefined
  const parsed = (list: string[]) => list.map((group) => Number.parseInt(group, 16))
  const given = before.length + after.length + tail.length
  if (halves.length === 1) return given === 8 ? [...parsed(before), ...tail] : undefined
  if (given > 7) return undefined
  return [...parsed(before), ...Array<number>(8 - given).fill(0), ...parsed(after), ...tail]
}

/**
 * The eight 16-bit groups of an IP address, an IPv4 one as its IPv4-mapped IPv6 form (`::ffff:a.b.c.d`); brackets
 * and a zone (`%eth0`) are dropped. Undefined when `text` is no address.
 */
export function addressGroups(text: string): number[] | undefined {
  const plain = text.trim().toLowerCase()
  const v4 = ipv4(plain)
  if (v4) {
    const [a = 0, b = 0, c = 0, d = 0] = v4
    return [0, 0, 0, 0, 0, 0xffff, (a << 8) | b, (c << 8) | d]
  }
  return ipv6(plain.replace(/^\[(.*)\]$/, '$1').replace(/%.*$/, ''))
}

/** An IPv4 address as its per-client key: loopback shared, any other one itself, written canonically. */
const ipv4Key = (octets: number[]) => (octets[0] === 127 ? LOOPBACK : octets.join('.'))

/**
 * The key a client address is rate-limited under, so that one client cannot spread its attempts over addresses it
 * gets for free: all of 127.0.0.0/8 and `::1` are one key (the machine itself), an IPv4-mapped IPv6 address
 * (`::ffff:1.2.3.4`, how a dual-stack socket shows an IPv4 client) is that IPv4 address, and an IPv6 address is its
 * /56: the block one home or office line is usually delegated (RFC 6177), which its owner can spread addresses over
 * for free (256 /64s, each as free to any host in it). So a /48, as tunnel brokers hand out for nothing, is 256
 * clients, as an IPv4 /24 is, not 65,536. Anything else, such as the `in-process` of calls without a socket, is its
 * own key.
 *
 * @example
 * clientKey('127.0.0.2') // 'loopback'
 * clientKey('::ffff:203.0.113.9') // '203.0.113.9'
 * clientKey('2001:db8:1:2:aaaa::1') // '2001:db8:1:0::/56'
 */
export function clientKey(address: string): string {
  const text = address.trim().toLowerCase()
  const v4 = ipv4(text)
  if (v4) return ipv4Key(v4)
  // A zone (`fe80::1%eth0`) names the interface, not the client; brackets come from URL-style writing.
  const v6 = ipv6(text.replace(/^\[(.*)\]$/, '$1').replace(/%.*$/, ''))
  if (!v6) return text
  const [a = 0, b = 0, c = 0, d = 0, e = 0, f = 0, g = 0, h = 0] = v6
  if (a === 0 && b === 0 && c === 0 && d === 0 && e === 0) {
    if (f === 0xffff) return ipv4Key([g >> 8, g & 0xff, h >> 8, h & 0xff])
    if (f === 0 && g === 0 && h === 1) return LOOPBACK
  }
  return `${[a, b, c, d & 0xff00].map((group) => group.toString(16)).join(':')}::/56`
}
