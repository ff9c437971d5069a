import { describe, expect, test } from 'bun:test'
import { ACCOUNT_LIMITS, Accounts } from '../../../src/accounts/service.ts'
import type { PasswordHasher } from '../../../src/auth/password.ts'
import { TooManyAttemptsError, UnauthenticatedError } from '../../../src/model/errors.ts'
import { openMemoryStore } from '../../../src/store/document/memory.ts'
import { MAX_KEYS, RateLimiter } from '../../../src/store/document/rate-limiter.ts'
import { CARLOS, manualClock } from '../helpers.ts'

// The ways around the login limits and the ways to abuse them, each played against the accounts service with the client
// address it is given (in-process HTTP calls all share one address; the executable is exercised from real addresses in
// concurrent-clients.binary.test.ts). Passwords are compared as plain text here: the limits are under test, not
// argon2.

const { loginFailuresPerClient: perClient, loginFailuresPerEmail: perEmail } = ACCOUNT_LIMITS
const ceiling = ACCOUNT_LIMITS.loginFailuresPerEmailCeiling
const OWNER = '198.51.100.7'
const ATTACKER = '203.0.113.66'

/** A hasher that "hashes" by prefixing; verify waits on a gate named by the password when one is set. */
function plainHasher() {
  const gates = new Map<string, Promise<void>>()
  const waiting = new Set<string>()
  const hasher: PasswordHasher = {
    hash: async (password) => `plain:${password}`,
    verify: async (hashed, password) => {
      waiting.add(password)
      await gates.get(password)
      waiting.delete(password)
      return hashed === `plain:${password}`
    },
  }
  /** Makes verify of `password` wait until the returned function is called. */
  const hold = (password: string) => {
    let open = () => {}
    gates.set(password, new Promise<void>((resolve) => (open = resolve)))
    return open
  }
  return { hasher, hold, waiting }
}

async function setUp() {
  const clock = manualClock()
  const { hasher, hold, waiting } = plainHasher()
  const accounts = new Accounts(openMemoryStore(), { now: clock.now, tokenTtlMs: 86_400_000, passwords: hasher })
  await accounts.signUp(CARLOS, OWNER)
  /** The outcome of one login: 200, 401 or 429, as the HTTP layer would answer. */
  const logIn = (client: string, password: string, email = CARLOS.email) =>
    accounts.logIn({ email, password }, client).then(
      () => 200,
      (error: unknown) => {
        if (error instanceof UnauthenticatedError) return 401
        if (error instanceof TooManyAttemptsError) return 429
        throw error
      },
    )
  return { accounts, clock, logIn, hold, waiting }
}

const until = async (condition: () => boolean) => {
  while (!condition()) await Bun.sleep(1)
}

describe('a guesser cannot keep the owner locked out', () => {
  test('failures from one address refuse that address only; the owner logs in from another', async () => {
    const { logIn } = await setUp()
    for (let i = 0; i < perEmail.limit; i++) expect(await logIn(ATTACKER, `wrong-${i}-pw`)).toBe(401)
    expect(await logIn(ATTACKER, 'wrong-again')).toBe(429)
    // Even the right password waits at the guessing address…
    expect(await logIn(ATTACKER, CARLOS.password)).toBe(429)
    // …while the owner, elsewhere, is not locked out, and the guesser stays refused after the owner's login.
    expect(await logIn(OWNER, CARLOS.password)).toBe(200)
    expect(await logIn(ATTACKER, 'wrong-still')).toBe(429)
  })

  test(`many addresses together stop at the ceiling of ${ceiling.limit} failures per email; the owner's usual address still gets in`, async () => {
    const { logIn, clock } = await setUp()
    expect(await logIn(OWNER, CARLOS.password)).toBe(200)
    const addresses = Math.ceil(ceiling.limit / perEmail.limit)
    for (let a = 0; a < addresses; a++)
      for (let i = 0; i < perEmail.limit; i++) expect(await logIn(`192.0.2.${a + 1}`, `wrong-${i}-pw`)).toBe(401)
    // A new address is refused for this account, however right its password…
    expect(await logIn('192.0.2.200', 'wrong-fresh')).toBe(429)
    expect(await logIn('192.0.2.201', CARLOS.password)).toBe(429)
    // …but the owner's address, known from a login in the last 30 days, is not: the guessers cannot lock them out.
    clock.advance(ACCOUNT_LIMITS.knownAddressMs - 60 * 60_000)
    for (let a = 0; a < addresses; a++)
      for (let i = 0; i < perEmail.limit; i++) await logIn(`192.0.2.${a + 1}`, `wrong-${i}-pw`)
    expect(await logIn('192.0.2.202', CARLOS.password)).toBe(429)
    expect(await logIn(OWNER, CARLOS.password)).toBe(200)
  })

  test('the ceiling applies to unknown emails alike, so a 429 says nothing about registration', async () => {
    const { logIn } = await setUp()
    const addresses = Math.ceil(ceiling.limit / perEmail.limit)
    for (let a = 0; a < addresses; a++)
      for (let i = 0; i < perEmail.limit; i++) await logIn(`192.0.2.${a + 1}`, 'wrong-pw', 'nobody@rock-legends.com')
    expect(await logIn('192.0.2.200', 'wrong-pw', 'nobody@rock-legends.com')).toBe(429)
  })

  test('the per-address limit still applies across emails', async () => {
    const { logIn } = await setUp()
    for (let i = 0; i < perClient.limit; i++)
      expect(await logIn(ATTACKER, 'wrong-pw', `guess${i}@example.com`)).toBe(401)
    expect(await logIn(ATTACKER, CARLOS.password)).toBe(429)
    expect(await logIn(OWNER, CARLOS.password)).toBe(200)
  })
})

describe('a lock is not forgotten by flooding the limiter with other keys', () => {
  test(`after failures for ${MAX_KEYS + 1} other emails from as many addresses, the guessing address is still refused`, async () => {
    const { logIn } = await setUp()
    for (let i = 0; i < perEmail.limit; i++) await logIn(ATTACKER, `wrong-${i}-pw`)
    expect(await logIn(ATTACKER, 'wrong-again')).toBe(429)
    for (let i = 0; i <= MAX_KEYS; i++)
      await logIn(`10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`, 'wrong-pw', `flood${i}@example.com`)
    expect(await logIn(ATTACKER, 'wrong-again')).toBe(429)
    expect(await logIn(OWNER, CARLOS.password)).toBe(200)
  })

  test('the limiter evicts the quietest key below its limit first, and holds at most maxKeys keys', () => {
    let now = 0
    const limiter = new RateLimiter({ limit: 2, windowMs: 60_000 }, () => now, 100)
    limiter.hit('locked')
    limiter.hit('locked')
    for (let i = 0; i < 1000; i++) {
      now += 1
      limiter.hit(`other${i}`)
    }
    expect(limiter.retryAfter('locked')).toBeGreaterThan(0)
    expect(limiter.size).toBe(100)
    expect(limiter.count('other0')).toBe(0)
    expect(limiter.count('other999')).toBe(1)
  })

  test('when every key is locked, memory still wins: the lock held longest goes first', () => {
    let now = 0
    const limiter = new RateLimiter({ limit: 1, windowMs: 60_000 }, () => now, 100)
    for (let i = 0; i < 101; i++) {
      now += 1
      limiter.hit(`locked${i}`)
    }
    expect(limiter.size).toBe(100)
    expect(limiter.retryAfter('locked0')).toBe(0)
    expect(limiter.retryAfter('locked1')).toBeGreaterThan(0)
  })

  test('each key keeps at most `limit` attempts, however many it makes', () => {
    const limiter = new RateLimiter({ limit: 3, windowMs: 60_000 }, () => 0)
    for (let i = 0; i < 1000; i++) limiter.hit('a')
    expect(limiter.count('a')).toBe(3)
  })
})

describe('a correct login among failures in flight', () => {
  test('takes back its own count only: the failures in flight beside it still count', async () => {
    const { logIn, hold, waiting } = await setUp()
    // The owner's login starts first and is still being checked when three guesses from the same address arrive.
    const release = hold(CARLOS.password)
    const owner = logIn(OWNER, CARLOS.password)
    await until(() => waiting.has(CARLOS.password))
    const holds = ['wrong-1-pw', 'wrong-2-pw', 'wrong-3-pw'].map(hold)
    const guesses = ['wrong-1-pw', 'wrong-2-pw', 'wrong-3-pw'].map((password) => logIn(OWNER, password))
    await until(() => waiting.size === 4)
    release()
    expect(await owner).toBe(200)
    for (const open of holds) open()
    expect(await Promise.all(guesses)).toEqual([401, 401, 401])
    // Three failures counted, so two more are checked and the sixth attempt is refused.
    expect(await logIn(OWNER, 'wrong-4-pw')).toBe(401)
    expect(await logIn(OWNER, 'wrong-5-pw')).toBe(401)
    expect(await logIn(OWNER, CARLOS.password)).toBe(429)
  })

  test('forgiving one attempt leaves the others, earlier or later, as they were', () => {
    let now = 0
    const limiter = new RateLimiter({ limit: 2, windowMs: 60_000 }, () => now)
    const success = limiter.hit('a')
    now = 10_000
    limiter.hit('a')
    limiter.forgive(success)
    now = 20_000
    limiter.hit('a')
    // The two failures at 10 s and 20 s remain: the first leaves the window at 70 s.
    expect(limiter.retryAfter('a')).toBe(50)
  })

  test('a success forgets its address’s earlier failures for the email, not those still in flight', () => {
    const limiter = new RateLimiter({ limit: 5, windowMs: 60_000 }, () => 0)
    for (let i = 0; i < 3; i++) limiter.settle(limiter.hit('a'))
    limiter.hit('a')
    limiter.hit('a')
    limiter.forgetSettled('a')
    expect(limiter.count('a')).toBe(2)
  })
})
