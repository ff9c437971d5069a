import { expect, test } from 'bun:test'
import { RateLimiter } from '../../src/store/document/rate-limiter.ts'

const limiter = (limit = 3, windowMs = 10_000) => {
  let now = 0
  return {
    limiter: new RateLimiter({ limit, windowMs }, () => now),
    advance: (ms: number) => {
      now += ms
    },
  }
}

test('allows `limit` attempts per window, then says how many seconds to wait', () => {
  const { limiter: failures, advance } = limiter()
  for (let i = 0; i < 3; i++) {
    expect(failures.retryAfter('a')).toBe(0)
    failures.hit('a')
    advance(1000)
  }
  // Attempts at 0 s, 1 s and 2 s; now 3 s: the first leaves the 10 s window at 10 s.
  expect(failures.retryAfter('a')).toBe(7)
  expect(failures.retryAfter('b')).toBe(0)
  advance(6500)
  expect(failures.retryAfter('a')).toBe(1)
  advance(500)
  expect(failures.retryAfter('a')).toBe(0)
})

test('the window slides: a burst at the edge of one window does not double the allowance', () => {
  const { limiter: failures, advance } = limiter(2, 10_000)
  advance(9000)
  failures.hit('a')
  failures.hit('a')
  advance(2000)
  expect(failures.retryAfter('a')).toBe(8)
})

test('forgive takes back one attempt; reset forgets them all', () => {
  const { limiter: failures } = limiter(2)
  failures.hit('a')
  failures.hit('a')
  failures.forgive('a')
  expect(failures.retryAfter('a')).toBe(0)
  failures.hit('a')
  failures.reset('a')
  failures.hit('a')
  expect(failures.retryAfter('a')).toBe(0)
})
