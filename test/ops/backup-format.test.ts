import { expect, test } from 'bun:test'
import type { StoreDocument } from '../../src/model/store-document.ts'
import { canonicalJson, contentChecksum, decodeBackup, encodeBackup } from '../../src/ops/backup-format.ts'

const meta = { takenAt: '2026-11-25T12:00:00.000Z', store: 'json-file' as const, build: 'test' }
const content = (): StoreDocument => ({
  version: 1,
  counters: { artists: 2, albums: 0, users: 0, credentials: 0 },
  artists: [
    { id: 1, name: 'Spinetta', band: 'Almendra' },
    // A field a later build may add to a record travels through untouched.
    { id: 2, name: 'García', ...{ version: 7, tags: { b: 1, a: [2, null] } } },
  ],
  albums: [],
  users: [],
  credentials: [],
})
const encode = (value: unknown) => [...encodeBackup(meta, value as StoreDocument)].join('')

test('a backup reads back as written: header, content, and every field of every record', () => {
  const text = encode(content())
  const { backup, problems } = decodeBackup(text)
  expect(problems).toEqual([])
  expect(backup).toMatchObject({ format: 'rock-legends-backup', formatVersion: 1, ...meta })
  expect(backup?.content).toEqual(content())
  // One record per line, like the data file.
  expect(text.split('\n').some((line) => line.startsWith('{"id":2,'))).toBe(true)
})

test('the checksum is over the canonical content: key order and layout do not change it, a value does', () => {
  const reordered = {
    ...content(),
    artists: content().artists.map((a) => Object.fromEntries(Object.entries(a).reverse())),
  }
  expect(contentChecksum(reordered)).toBe(contentChecksum(content()))
  expect(contentChecksum(JSON.parse(JSON.stringify(content(), null, 2)))).toBe(contentChecksum(content()))
  const changed = content()
  ;(changed.artists[0] as { name: string }).name = 'Spineta'
  expect(contentChecksum(changed)).not.toBe(contentChecksum(content()))
  expect(canonicalJson({ b: 1, a: [{ d: 1, c: undefined }] })).toBe('{"a":[{"d":1}],"b":1}')
  expect(contentChecksum(content())).toBe(
    `sha256:${new Bun.CryptoHasher('sha256').update(canonicalJson(content())).digest('hex')}`,
  )
})

test.each([
  ['not JSON', '{"format":', '/: not JSON'],
  ['a data file', JSON.stringify({ version: 1, counters: {} }), 'it looks like a data file'],
  [
    'a newer format',
    encode(content()).replace('"formatVersion":1', '"formatVersion":2'),
    'newer than this build reads',
  ],
  ['a changed record', encode(content()).replace('"Spinetta"', '"Spineta"'), '/checksum: does not match the content'],
  ['no checksum', encode(content()).replace(/"checksum":"[^"]*"/, '"checksum":"md5"'), '/checksum: must be'],
  ['a bad time', encode(content()).replace(meta.takenAt, 'yesterday'), '/takenAt: must be an ISO 8601 time'],
])('%s is named as a problem', (_, text, expected) => {
  const { problems } = decodeBackup(text)
  expect(problems.map(({ where, what }) => `${where}: ${what}`).join('\n')).toContain(expected)
})
