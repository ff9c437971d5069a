import { describe, expect, test } from 'bun:test'
import { forwardedBy, trustEntry, trustedClients, trustedPeers } from '../../src/http/proxies.ts'

// Which peers are believed, and what a believed peer's forwarding headers make of the client: the right-most hop
// that is not itself a trusted proxy, so a client may add hops on the left but never choose the one the nearest
// proxy wrote.

describe('trustEntry', () => {
  test.each(['127.0.0.1', '10.0.0.0/8', '2001:db8::/32', '::1', 'loopback', 'PRIVATE', ' 192.168.1.1/32 '])(
    '%p is an entry',
    (text) => {
      expect(() => trustEntry(text)).not.toThrow()
    },
  )

  test.each(['', 'localhost', '10.0.0.0/33', '::/129', '10.0.0.0/8/1', '10.0.0.256', 'private,loopback', '1.2.3.4/x'])(
    '%p is refused',
    (text) => {
      expect(() => trustEntry(text)).toThrow()
    },
  )
})

describe('trustedPeers', () => {
  const trusted = trustedPeers(['loopback', '10.1.0.0/16', '2001:db8:1::/48'])

  test.each([
    ['127.0.0.1', true],
    ['127.9.8.7', true],
    ['::1', true],
    ['::ffff:127.0.0.1', true],
    ['10.1.200.3', true],
    ['::ffff:10.1.2.3', true],
    ['10.2.0.1', false],
    ['2001:db8:1:ffff::9', true],
    ['2001:db8:2::1', false],
    ['203.0.113.7', false],
    ['in-process', false],
  ] as const)('%s: %p', (address, believed) => {
    expect(trusted(address)).toBe(believed)
  })

  test('private names the ranges of private networks, and nothing public', () => {
    const inside = trustedPeers(['private'])
    for (const address of ['10.9.9.9', '172.16.0.1', '172.31.255.255', '192.168.0.1', 'fd12::1'])
      expect({ address, trusted: inside(address) }).toEqual({ address, trusted: true })
    for (const address of ['172.32.0.1', '192.169.0.1', '8.8.8.8', '127.0.0.1', '2001:db8::1'])
      expect({ address, trusted: inside(address) }).toEqual({ address, trusted: false })
  })

  test('nothing is trusted by default', () => {
    expect(trustedPeers([])('127.0.0.1')).toBe(false)
  })
})

describe('forwardedBy, from a trusted peer', () => {
  const trusted = trustedPeers(['loopback', '10.0.0.0/8'])
  const sender = (headers: Record<string, string>) => forwardedBy('127.0.0.1', new Headers(headers), trusted)

  test.each([
    [{}, { address: '127.0.0.1' }],
    [{ 'x-forwarded-for': '203.0.113.7' }, { address: '203.0.113.7' }],
    // A client writes its own X-Forwarded-For; the proxy appends the address it saw: that one counts.
    [{ 'x-forwarded-for': '198.51.100.1, 203.0.113.7' }, { address: '203.0.113.7' }],
    // Hops that are trusted proxies themselves are passed over.
    [{ 'x-forwarded-for': '203.0.113.7, 10.0.0.5, 127.0.0.1' }, { address: '203.0.113.7' }],
    [{ 'x-forwarded-for': '10.0.0.5, 10.0.0.6' }, { address: '10.0.0.5' }],
    [{ 'x-forwarded-for': '[2001:db8::7]:4711' }, { address: '2001:db8::7' }],
    [{ 'x-forwarded-for': '203.0.113.7:5555' }, { address: '203.0.113.7' }],
    // A hop that is no address ends the walk: the client cannot pick a key by writing one.
    [{ 'x-forwarded-for': 'not-an-address' }, { address: '127.0.0.1' }],
    [{ 'x-forwarded-for': 'not-an-address, 203.0.113.7' }, { address: '203.0.113.7' }],
    // An unclosed quote is no address either: the walk stops before it, at the hop the proxy appended.
    [{ 'x-forwarded-for': '"abc, 203.0.113.9' }, { address: '203.0.113.9' }],
    [
      { 'x-forwarded-for': '203.0.113.7', 'x-forwarded-proto': 'https', 'x-forwarded-host': 'rock.example' },
      { address: '203.0.113.7', proto: 'https', host: 'rock.example' },
    ],
    // The last value is the nearest proxy's: one the client sent before it changes nothing.
    [
      {
        'x-forwarded-for': '203.0.113.7',
        'x-forwarded-proto': 'http, https',
        'x-forwarded-host': 'x.example, a.example:8443',
      },
      { address: '203.0.113.7', proto: 'https', host: 'a.example:8443' },
    ],
    [
      { 'x-forwarded-for': '203.0.113.7', 'x-forwarded-proto': 'gopher', 'x-forwarded-host': 'bad host/' },
      { address: '203.0.113.7' },
    ],
    // Forwarded is not read: the documented proxies pass a client's own on as it came.
    [{ forwarded: 'for=198.51.100.77;proto=https;host=evil.example' }, { address: '127.0.0.1' }],
    [{ forwarded: 'for=198.51.100.77', 'x-forwarded-for': '203.0.113.7' }, { address: '203.0.113.7' }],
  ] as const)('%o → %o', (headers, expected) => {
    expect(sender(headers)).toEqual(expected)
  })

  test('an address longer than any a proxy writes is not believed', () => {
    expect(sender({ 'x-forwarded-for': `${'1'.repeat(100)}` })).toEqual({ address: '127.0.0.1' })
  })
})

describe('trustedClients', () => {
  const server = (address: string) => ({ requestIP: () => ({ address, family: 'IPv4', port: 1 }) as never })
  const request = (headers: Record<string, string>) => new Request('http://localhost/', { headers })

  test('without a list, forwarding headers are ignored, whoever sends them', () => {
    const clients = trustedClients([])
    const forged = request({ 'x-forwarded-for': '203.0.113.7', forwarded: 'for=198.51.100.1' })
    expect(clients.key(server('127.0.0.1'), forged)).toBe('loopback')
    expect(clients.sender(server('198.51.100.9'), forged)).toEqual({ address: '198.51.100.9' })
  })

  test('from a peer not listed, forwarding headers are ignored', () => {
    const clients = trustedClients(['10.0.0.1'])
    expect(clients.key(server('198.51.100.9'), request({ 'x-forwarded-for': '203.0.113.7' }))).toBe('198.51.100.9')
  })

  test('from a listed peer, the client it names is the key, per IPv6 /56 as for a socket', () => {
    const clients = trustedClients(['loopback'])
    expect(clients.key(server('127.0.0.1'), request({ 'x-forwarded-for': '203.0.113.7' }))).toBe('203.0.113.7')
    expect(clients.key(server('::1'), request({ 'x-forwarded-for': '2001:db8:1:2:aaaa::1' }))).toBe('2001:db8:1:0::/56')
  })

  test('an entry that names nothing is refused, not quietly trusted as nothing', () => {
    expect(() => trustedClients(['10.0.0.0/33'])).toThrow()
    expect(() => trustedClients(['LOOPBACK'])).not.toThrow()
  })

  test('calls without a socket are in-process, whatever their headers say', () => {
    const clients = trustedClients(['loopback'])
    expect(clients.key(undefined, request({ 'x-forwarded-for': '203.0.113.7' }))).toBe('in-process')
  })
})
