import { expect, test } from 'bun:test'
import { clientKey, LOOPBACK } from '../../src/http/client-key.ts'

// The per-address login and sign-up limits are keyed by this: every address one client gets for free must map to
// one key, or the client walks around the limit by changing address.
test.each([
  // IPv4: loopback is one machine, however many of its 16 million addresses it uses.
  ['127.0.0.1', LOOPBACK],
  ['127.0.0.2', LOOPBACK],
  ['127.255.255.254', LOOPBACK],
  ['203.0.113.9', '203.0.113.9'],
  ['10.0.0.1', '10.0.0.1'],
  ['128.0.0.1', '128.0.0.1'],
  // IPv4-mapped IPv6: how a dual-stack socket shows an IPv4 client.
  ['::ffff:203.0.113.9', '203.0.113.9'],
  ['::FFFF:203.0.113.9', '203.0.113.9'],
  ['0:0:0:0:0:ffff:203.0.113.9', '203.0.113.9'],
  ['::ffff:cb00:7109', '203.0.113.9'],
  ['::ffff:127.0.0.2', LOOPBACK],
  // IPv6 loopback.
  ['::1', LOOPBACK],
  ['0:0:0:0:0:0:0:1', LOOPBACK],
  // IPv6: the /56, whichever way the address is written (so a /48 is 256 clients, not 65,536).
  ['2001:db8:1:2::1', '2001:db8:1:0::/56'],
  ['2001:db8:1:2:ffff:ffff:ffff:ffff', '2001:db8:1:0::/56'],
  ['2001:0db8:0001:0002:0000:0000:0000:0001', '2001:db8:1:0::/56'],
  ['2001:DB8:1:2:A:B:C:D', '2001:db8:1:0::/56'],
  ['2001:db8:1:3::1', '2001:db8:1:0::/56'],
  ['2001:db8:1:ff::1', '2001:db8:1:0::/56'],
  ['2001:db8:1:100::1', '2001:db8:1:100::/56'],
  ['2001:db8:1:1ff:1::', '2001:db8:1:100::/56'],
  ['2001:db8:1:ff00::1', '2001:db8:1:ff00::/56'],
  ['2001:db8::1', '2001:db8:0:0::/56'],
  ['2001:db8::1:0:0:1', '2001:db8:0:0::/56'],
  ['2001:db8:0:0:1::', '2001:db8:0:0::/56'],
  ['::', '0:0:0:0::/56'],
  ['::2', '0:0:0:0::/56'],
  ['fe80::1%eth0', 'fe80:0:0:0::/56'],
  ['[2001:db8:1:2::1]', '2001:db8:1:0::/56'],
  ['64:ff9b::203.0.113.9', '64:ff9b:0:0::/56'],
  ['fd00::2', 'fd00:0:0:0::/56'],
  // Not addresses: kept as they are (lower-cased), each its own key.
  ['in-process', 'in-process'],
  ['256.1.1.1', '256.1.1.1'],
  ['1.2.3', '1.2.3'],
  ['2001:db8::1::2', '2001:db8::1::2'],
  ['1:2:3:4:5:6:7:8:9', '1:2:3:4:5:6:7:8:9'],
  ['1:2:3:4:5:6:7', '1:2:3:4:5:6:7'],
  ['1:2:3:4:5:6:7::8', '1:2:3:4:5:6:7::8'],
  ['12345::1', '12345::1'],
  ['::ffff:1.2.3.256', '::ffff:1.2.3.256'],
])('%s → %s', (address, key) => {
  expect(clientKey(address)).toBe(key)
})

test('addresses in different /56s or different IPv4 hosts stay apart', () => {
  const keys = ['2001:db8:1:2::1', '2001:db8:1:102::1', '2001:db8:2:2::1', '203.0.113.9', '203.0.113.10', '::1'].map(
    clientKey,
  )
  expect(new Set(keys).size).toBe(keys.length)
})

// One line's addresses are one client. A home line is usually delegated a /56, a free tunnel a /48: counted by /64,
// the /48 would be 65,536 clients, each with its own allowance of guesses and sign-ups.
test('the 256 /64s of one /56 are one client, and a whole /48 is 256 clients, as an IPv4 /24 is', () => {
  const oneSite = new Set(
    Array.from({ length: 256 }, (_, i) => clientKey(`2001:db8:7:${(0x4200 + i).toString(16)}::1`)),
  )
  expect(oneSite.size).toBe(1)
  const slash48 = new Set<string>()
  for (let subnet = 0; subnet < 65_536; subnet += 7) slash48.add(clientKey(`2001:db8:7:${subnet.toString(16)}:1::1`))
  expect(slash48.size).toBe(256)
  const slash24 = new Set(Array.from({ length: 256 }, (_, i) => clientKey(`198.51.100.${i}`)))
  expect(slash48.size).toBe(slash24.size)
})
