import { expect, test } from 'bun:test'
import { clientKey, LOOPBACK } from '../../src/auth/client-key.ts'

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
  // IPv6: the /64, whichever way the address is written.
  ['2001:db8:1:2::1', '2001:db8:1:2::/64'],
  ['2001:db8:1:2:ffff:ffff:ffff:ffff', '2001:db8:1:2::/64'],
  ['2001:0db8:0001:0002:0000:0000:0000:0001', '2001:db8:1:2::/64'],
  ['2001:DB8:1:2:A:B:C:D', '2001:db8:1:2::/64'],
  ['2001:db8:1:3::1', '2001:db8:1:3::/64'],
  ['2001:db8::1', '2001:db8:0:0::/64'],
  ['2001:db8::1:0:0:1', '2001:db8:0:0::/64'],
  ['2001:db8:0:0:1::', '2001:db8:0:0::/64'],
  ['::', '0:0:0:0::/64'],
  ['::2', '0:0:0:0::/64'],
  ['fe80::1%eth0', 'fe80:0:0:0::/64'],
  ['[2001:db8:1:2::1]', '2001:db8:1:2::/64'],
  ['64:ff9b::203.0.113.9', '64:ff9b:0:0::/64'],
  ['fd00::2', 'fd00:0:0:0::/64'],
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

test('addresses in different /64s or different IPv4 hosts stay apart', () => {
  const keys = ['2001:db8:1:2::1', '2001:db8:1:3::1', '203.0.113.9', '203.0.113.10', '::1'].map(clientKey)
  expect(new Set(keys).size).toBe(keys.length)
})
