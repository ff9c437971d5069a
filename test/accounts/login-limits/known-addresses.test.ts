import { describe, expect, test } from 'bun:test'
import { ACCOUNT_LIMITS, Accounts } from '../../../src/accounts/service.ts'
import type { PasswordHasher } from '../../../src/auth/password.ts'
import { TooManyAttemptsError, UnauthenticatedError } from '../../../src/model/errors.ts'
import { openMemoryStore } from '../../../src/store/document/memory.ts'
import { MemoryRecents } from '../../../src/store/document/memory-limiter.ts'
import { CARLOS, manualClock } from '../helpers.ts'

// The addresses an account logged in from lately are exempt from the per-email ceiling, so a crowd of guessers cannot
// lock the owner out at home. Each account keeps its own latest few, which only its own logins replace: were they one
// server-wide list of the last 10,000 logins, an attacker logging in to her own account from 10,001 addresses would
// push the owner's out, then reach the ceiling. Passwords are compared as plain text: the limits are under test, not
// argon2.

const { loginFailuresPerEmail: perEmail, loginFailuresPerEmailCeiling: ceiling } = ACCOUNT_LIMITS
const { knownAddressesPerAccount: perAccount, knownAddressMs } = ACCOUNT_LIMITS
const OWNER = '198.51.100.7'
const MALLORY = { name: 'Mallory', email: 'mallory@example.com', password: 'mallory-pw' }

const plain: PasswordHasher = {
  hash: async (password) => `plain:${password}`,
  verify: async (hashed, password) => hashed === `plain:${password}`,
}

/** The `i`-th of 16 million IPv4 addresses in 10.0.0.0/8, each its own client. */
const address = (i: number) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`

async function setUp() {
  const clock = manualClock()
  const accounts = new Accounts(openMemoryStore(), { now: clock.now, tokenTtlMs: 86_400_000, passwords: plain })
  await accounts.signUp(CARLOS, OWNER)
  await accounts.signUp(MALLORY, '203.0.113.66')
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
  /** Fails `ceiling.limit` logins for Carlos from as many addresses as it takes (each gets `perEmail`). */
  const reachCeiling = async () => {
    for (let a = 0; a < Math.ceil(ceiling.limit / perEmail.limit); a++)
      for (let i = 0; i < perEmail.limit; i++) await logIn(`192.0.2.${a + 1}`, `wrong-${i}-pw`)
  }
  return { clock, logIn, reachCeiling }
}

describe("another account's logins cannot flush the owner's known address", () => {
  test("after 10,001 logins to another account from 10,001 addresses, the owner's home address is still exempt", async () => {
    const { logIn, reachCeiling, clock } = await setUp()
    expect(await logIn(OWNER, CARLOS.password)).toBe(200)
    for (let i = 0; i <= 10_000; i++) {
      clock.advance(1)
      expect(await logIn(address(i), MALLORY.password, MALLORY.email)).toBe(200)
    }
    await reachCeiling()
    // A new address is refused for Carlos's account: the ceiling is reached…
    expect(await logIn('192.0.2.200', CARLOS.password)).toBe(429)
    // …but his home address is still known to his account, and gets in.
    expect(await logIn(OWNER, CARLOS.password)).toBe(200)
  }, 60_000)

  test(`an account keeps its own ${perAccount} latest addresses: an older one goes only by the owner's own logins`, async () => {
    const { logIn, reachCeiling, clock } = await setUp()
    const homes = Array.from({ length: perAccount + 1 }, (_, i) => `198.51.100.${100 + i}`)
    for (const home of homes) {
      clock.advance(1000)
      expect(await logIn(home, CARLOS.password)).toBe(200)
    }
    await reachCeiling()
    // The oldest, pushed out by his own later logins, is not known any more; his latest ones are.
    expect(await logIn(homes[0] as string, CARLOS.password)).toBe(429)
    for (const home of homes.slice(1)) expect(await logIn(home, CARLOS.password)).toBe(200)
  })

  test("the owner's logins at the ceiling take no one else's failures back", async () => {
    const { logIn, reachCeiling } = await setUp()
    expect(await logIn(OWNER, CARLOS.password)).toBe(200)
    await reachCeiling()
    // Each success from the known address once counted an attempt, which pushed the oldest real failure out of the
    // full window, then forgave it: a guesser elsewhere got one more try per login of the owner.
    for (let i = 0; i < 5; i++) expect(await logIn(OWNER, CARLOS.password)).toBe(200)
    expect(await logIn('192.0.2.201', 'still-guessing')).toBe(429)
    // A failure from the known address still counts against the ceiling, like any other.
    expect(await logIn(OWNER, 'a-slip-at-home')).toBe(401)
    expect(await logIn('192.0.2.202', CARLOS.password)).toBe(429)
  })

  test('a known address is forgotten once its window has passed without a login from it', async () => {
    const { logIn, reachCeiling, clock } = await setUp()
    expect(await logIn(OWNER, CARLOS.password)).toBe(200)
    clock.advance(knownAddressMs + 1)
    await reachCeiling()
    expect(await logIn(OWNER, CARLOS.password)).toBe(429)
  })
})

describe('the known addresses take memory bounded per account', () => {
  test(`one owner's adds from 100,000 members leave it ${perAccount}, and never touch another owner's`, async () => {
    const known = new MemoryRecents({ perOwner: perAccount, windowMs: knownAddressMs }, () => 0)
    await known.add('carlos', OWNER)
    for (let i = 0; i < 100_000; i++) await known.add('mallory', address(i))
    expect(known.members('mallory')).toBe(perAccount)
    expect(known.members('carlos')).toBe(1)
    expect(known.size).toBe(2)
    expect(await known.has('carlos', OWNER)).toBe(true)
    expect(await known.has('mallory', address(99_999))).toBe(true)
    expect(await known.has('mallory', address(99_999 - perAccount))).toBe(false)
    // Known to its owner only.
    expect(await known.has('mallory', OWNER)).toBe(false)
  })

  test('owners quiet for a whole window are forgotten by later adds, so quiet accounts cost nothing', async () => {
    let now = 0
    const known = new MemoryRecents({ perOwner: 3, windowMs: 1000 }, () => now)
    for (let i = 0; i < 1000; i++) await known.add(`owner${i}`, OWNER)
    expect(known.size).toBe(1000)
    now = 1001
    await known.add('late', OWNER)
    expect(known.size).toBe(1)
    expect(await known.has('owner0', OWNER)).toBe(false)
    expect(await known.has('late', OWNER)).toBe(true)
  })
})
