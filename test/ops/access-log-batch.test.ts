import { afterEach, describe, expect, spyOn, test } from 'bun:test'
import { type AccessEntry, createLogger, flushLog, prettyAccess } from '../../src/log.ts'

// The access log keeps the entries of a batch and makes their lines at the flush (src/log.ts). These tests check that
// the lines are what they would have been one at a time: the same text, the escapes, the times of the JSON lines.

// biome-ignore lint/suspicious/noControlCharactersInRegex: looking for control characters is the point.
const CONTROL = /[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]/

const entry: AccessEntry = {
  method: 'GET',
  path: '/api/v1/artists/1',
  status: 200,
  bytes: 487,
  durationMs: 0.25,
  requestId: 'id',
  client: '127.0.0.1',
}

/** Spies on the writes of the flushes. */
function written() {
  flushLog()
  const spy = spyOn(console, 'error').mockImplementation(() => {})
  return { spy, writes: () => spy.mock.calls.map((call) => String(call[0])) }
}

afterEach(() => {
  flushLog()
})

describe('a batch of access lines', () => {
  test('is the lines one at a time would be, a hostile target among plain ones escaped in its own line', () => {
    const { spy, writes } = written()
    try {
      const access = createLogger('pretty').access as (entry: AccessEntry) => void
      const entries: AccessEntry[] = [
        entry,
        { ...entry, method: 'CONNECT', path: 'a\u202ebc\u009b2J\u0085:443', status: 404 },
        { ...entry, path: '/api/v1/artists?q=a\\b', durationMs: 12.345 },
        { ...entry, path: '/pe\u00f1a\x1b[2J', status: 503, requestId: 'client-id\\1' },
        { ...entry, durationMs: 99.96 },
      ]
      for (const each of entries) access(each)
      flushLog()
      expect(writes()).toEqual([entries.map((each) => prettyAccess(each)).join('\n')])
      const text = writes()[0] as string
      expect(text).not.toMatch(CONTROL)
      expect(text).toContain('CONNECT a\\u{202e}bc\\x9b2J\\x85:443 404 487 B 0.3 ms 127.0.0.1 id')
      expect(text).toContain('/api/v1/artists?q=a\\\\b 200 487 B 12.3 ms 127.0.0.1 id')
      expect(text).toContain('/pe\u00f1a\\x1b[2J 503 487 B 0.3 ms 127.0.0.1 client-id\\1')
    } finally {
      spy.mockRestore()
    }
  })

  test('writes durations with one decimal, as toFixed(1) does', () => {
    for (const durationMs of [0, 0.04, 0.06, 1.234, 9.96, 99.96, 12345.678, 1e-9])
      expect(prettyAccess({ ...entry, durationMs })).toBe(
        `GET /api/v1/artists/1 200 487 B ${durationMs.toFixed(1)} ms 127.0.0.1 id`,
      )
  })

  test('JSON lines carry the time each request was logged, not the time of the flush', async () => {
    const { spy, writes } = written()
    try {
      const access = createLogger('json').access as (entry: AccessEntry) => void
      const before = Date.now()
      access(entry)
      const after = Date.now()
      await Bun.sleep(30)
      flushLog()
      const line = JSON.parse(writes().join('\n'))
      expect(Date.parse(line.time)).toBeGreaterThanOrEqual(before)
      expect(Date.parse(line.time)).toBeLessThanOrEqual(after)
      expect(line).toMatchObject({ message: 'request', ...entry })
    } finally {
      spy.mockRestore()
    }
  })

  test('lines of two loggers keep their order', () => {
    const { spy, writes } = written()
    try {
      createLogger('pretty').access?.(entry)
      createLogger('json').access?.({ ...entry, requestId: 'second' })
      createLogger('pretty').access?.({ ...entry, requestId: 'third' })
      flushLog()
      const lines = writes().join('\n').split('\n')
      expect(lines).toHaveLength(3)
      expect(lines[0]).toBe(prettyAccess(entry))
      expect(JSON.parse(lines[1] as string).requestId).toBe('second')
      expect(lines[2]).toBe(prettyAccess({ ...entry, requestId: 'third' }))
    } finally {
      spy.mockRestore()
    }
  })

  test('goes out at once when a megabyte of lines waits, before its timer', () => {
    const { spy, writes } = written()
    try {
      const access = createLogger('pretty').access as (entry: AccessEntry) => void
      const long = { ...entry, path: `/api/v1/artists?q=${'a'.repeat(100_000)}` }
      let count = 0
      while (spy.mock.calls.length === 0 && count < 100) {
        access(long)
        count++
      }
      // About 1 MB: the bound on what waits, whatever the lines hold.
      expect(count).toBeGreaterThanOrEqual(10)
      expect(count).toBeLessThanOrEqual(11)
      expect(writes()[0]?.split('\n')).toHaveLength(count)
    } finally {
      spy.mockRestore()
    }
  })
})

describe('a field holding a newline', () => {
  test('is escaped, in a batch of plain lines', () => {
    const { spy, writes } = written()
    try {
      const access = createLogger('pretty').access as (entry: AccessEntry) => void
      access(entry)
      access({ ...entry, method: 'CONNECT', path: 'a\nGET /forged 200 0.1 ms x:443' })
      access(entry)
      flushLog()
      const lines = writes().join('\n').split('\n')
      expect(lines).toHaveLength(3)
      expect(lines[1]).toBe('CONNECT a\\nGET /forged 200 0.1 ms x:443 200 487 B 0.3 ms 127.0.0.1 id')
    } finally {
      spy.mockRestore()
    }
  })
})
