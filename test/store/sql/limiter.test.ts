import { afterAll, afterEach, beforeAll, describe, expect, test } from 'bun:test'
import { SQL } from 'bun'
import { ACCOUNT_LIMITS, Accounts } from '../../../src/accounts/service.ts'
import type { PasswordHasher } from '../../../src/auth/password.ts'
import { TooManyAttemptsError, UnauthenticatedError } from '../../../src/model/errors.ts'
import { MemoryLimiter } from '../../../src/store/document/memory-limiter.ts'
import { SqlLimiter, SWEEP_BATCH, SWEEP_EVERY_MS } from '../../../src/store/sql/limiter.ts'
import { openSqlStore, type SqlStore } from '../../../src/store/sql/sql-store.ts'
import type { Attempt, Limiter, RateLimit } from '../../../src/store/store.ts'
import { skipWithoutPostgres, type TestPostgres, testPostgres } from '../../support/postgres.ts'

// The rate limits over SQL: a limit holds across replicas together, and the SQL limiter means what the memory limiter
// means, shown by playing the same scripts against both.

const skip = skipWithoutPostgres()
let pg: TestPostgres
const stores: SqlStore[] = []

/**
 * The database of the test running: one with the service's schema and no rows (`reusedDatabase`), emptied again after
 * each test (`recycle`) for the next one, and the pools to it kept open from test to test. A new database per test (a
 * copy of a template, its migrations run) and new connections each time cost PostgreSQL seconds over this file, and
 * prove nothing here: the limits are under test, not the migrations (test/store/sql/migrate.test.ts).
 */
let current: string | undefined
/** Pools kept open to the reused database, by their place among a test's pools and their size. */
const kept = new Map<string, SQL>()

/** The name of the test's database, taken on first use. */
async function testDatabase(): Promise<string> {
  current ??= await pg.reusedDatabase()
  return current
}

/** `pools` pools of their own to an empty, migrated database, as each replica has one; `max` connections each. */
async function database(pools = 1, max = 4): Promise<SQL[]> {
  const name = await testDatabase()
  return Array.from({ length: pools }, (_, index) => {
    const key = `${name} ${index} ${max}`
    let sql = kept.get(key)
    if (!sql) {
      sql = new SQL({ url: pg.url(name), max })
      kept.set(key, sql)
    }
    return sql
  })
}

/** A clock the test moves by hand, starting at a real epoch time (ms), so that times need a BIGINT. */
function manualClock(start = 1_750_000_000_000) {
  let now = start
  return {
    now: () => now,
    advance: (ms: number) => {
      now += ms
    },
  }
}

beforeAll(async () => {
  if (!skip) pg = await testPostgres()
})
afterEach(async () => {
  // The stores first: the database is emptied only once nothing but the idle kept pools holds it.
  await Promise.all(stores.splice(0).map((store) => store.close()))
  if (current) await pg.recycle(current)
  current = undefined
})
afterAll(async () => {
  await Promise.all([...kept.values()].map((sql) => sql.close()))
})

/** One step of a script; `settle` and `forgive` name an attempt by the order in which it was counted. */
type Step =
  | ['hit' | 'record' | 'forgetSettled' | 'count' | 'retryAfter', string]
  | ['settle' | 'forgive', number]
  | ['advance', number]

/** Plays `steps` on `limiter`; what each step answered (a hit: 0 when counted, else the seconds to wait). */
async function play(limiter: Limiter, advance: (ms: number) => void, steps: readonly Step[]): Promise<unknown[]> {
  const attempts: Attempt[] = []
  const answers: unknown[] = []
  for (const step of steps) {
    if (step[0] === 'advance') advance(step[1])
    else if (step[0] === 'settle' || step[0] === 'forgive') await limiter[step[0]](attempts[step[1]] as Attempt)
    else if (step[0] === 'hit') {
      const { attempt, retryAfter } = await limiter.hit(step[1])
      if (attempt) attempts.push(attempt)
      answers.push(retryAfter)
    } else if (step[0] === 'record') attempts.push(await limiter.record(step[1]))
    else if (step[0] === 'forgetSettled') await limiter.forgetSettled(step[1])
    else answers.push(await limiter[step[0]](step[1] as string))
  }
  return answers
}

const RULE: RateLimit = { limit: 3, windowMs: 10_000 }
const hits = (key: string, n: number): Step[] => Array.from({ length: n }, () => ['hit', key] as Step)

const SCRIPTS: { name: string; rule?: RateLimit; steps: Step[]; expected: unknown[] }[] = [
  {
    name: 'limit attempts per window, then the seconds until the oldest leaves it',
    steps: [
      ['hit', 'a'],
      ['advance', 1000],
      ['hit', 'a'],
      ['advance', 1000],
      ['hit', 'a'],
      ['advance', 1000],
      ['hit', 'a'],
      ['retryAfter', 'a'],
      ['retryAfter', 'b'],
      ['advance', 6500],
      ['retryAfter', 'a'],
      ['advance', 500],
      ['hit', 'a'],
      ['count', 'a'],
    ],
    expected: [0, 0, 0, 7, 7, 0, 1, 0, 3],
  },
  {
    name: 'the window slides: a burst at the edge of one window does not double the allowance',
    rule: { limit: 2, windowMs: 10_000 },
    steps: [['advance', 9000], ...hits('a', 2), ['advance', 2000], ['hit', 'a'], ['retryAfter', 'a']],
    expected: [0, 0, 8, 8],
  },
  {
    name: 'a success forgives its own attempt only: those before and after it keep counting',
    rule: { limit: 2, windowMs: 60_000 },
    steps: [
      ['hit', 'a'],
      ['advance', 10_000],
      ['hit', 'a'],
      ['forgive', 0],
      ['advance', 10_000],
      ['hit', 'a'],
      ['retryAfter', 'a'],
      ['count', 'a'],
    ],
    expected: [0, 0, 0, 50, 2],
  },
  {
    name: 'forgetSettled forgets the finished attempts, not those still in flight',
    rule: { limit: 5, windowMs: 60_000 },
    steps: [
      ...hits('a', 3),
      ['settle', 0],
      ['settle', 1],
      ['settle', 2],
      ...hits('a', 2),
      ['forgetSettled', 'a'],
      ['count', 'a'],
      ...hits('a', 4),
      ['count', 'a'],
    ],
    expected: [0, 0, 0, 0, 0, 2, 0, 0, 0, 60, 5],
  },
  {
    name: 'a settled attempt keeps counting; a refused hit counts nothing',
    steps: [...hits('a', 3), ['settle', 1], ...hits('a', 2), ['count', 'a'], ['advance', 10_000], ['count', 'a']],
    expected: [0, 0, 0, 10, 10, 3, 0],
  },
  {
    name: 'keys are counted apart',
    steps: [...hits('a', 3), ['hit', 'b'], ['count', 'b'], ['count', 'a'], ['hit', 'a']],
    expected: [0, 0, 0, 0, 1, 3, 10],
  },
  {
    name: 'record counts past the limit for an exempt caller, keeping the newest `limit`',
    steps: [
      ...hits('a', 3),
      ['advance', 2000],
      ['record', 'a'],
      ['count', 'a'],
      ['retryAfter', 'a'],
      ['advance', 8000],
      ['count', 'a'],
    ],
    expected: [0, 0, 0, 3, 8, 1],
  },
  {
    name: 'a known address (limit 1) is known for the window after its latest record',
    rule: { limit: 1, windowMs: 30_000 },
    steps: [
      ['count', 'k'],
      ['record', 'k'],
      ['advance', 20_000],
      ['record', 'k'],
      ['advance', 20_000],
      ['count', 'k'],
      ['advance', 10_000],
      ['count', 'k'],
    ],
    expected: [0, 1, 0],
  },
  {
    name: 'forgiving an attempt that left the window changes nothing',
    steps: [['hit', 'a'], ['advance', 11_000], ['forgive', 0], ['count', 'a'], ...hits('a', 4)],
    expected: [0, 0, 0, 0, 0, 10],
  },
]

describe.skipIf(skip)('the SQL limiter, over a real PostgreSQL', () => {
  test.each(SCRIPTS)('means what the memory limiter means: $name', async ({ rule = RULE, steps, expected }) => {
    const [sql] = await database()
    const memoryClock = manualClock()
    const sqlClock = manualClock()
    const inMemory = await play(new MemoryLimiter(rule, memoryClock.now), memoryClock.advance, steps)
    const overSql = await play(new SqlLimiter(sql as SQL, 'test', rule, sqlClock.now), sqlClock.advance, steps)
    expect(inMemory).toEqual(expected)
    expect(overSql).toEqual(inMemory)
  })

  test('a hit says how many more attempts remain, as the memory limiter does, with no second statement', async () => {
    const [sql] = await database()
    const clock = manualClock()
    const rule = { limit: 3, windowMs: 10_000 }
    const remaining = async (limiter: MemoryLimiter | SqlLimiter) => {
      const answers: (number | string)[] = []
      for (let i = 0; i < 4; i++) {
        const hit = await limiter.hit('a')
        answers.push(hit.attempt ? hit.remaining : `wait ${hit.retryAfter}`)
      }
      return answers
    }
    expect(await remaining(new MemoryLimiter(rule, clock.now))).toEqual([2, 1, 0, 'wait 10'])
    expect(await remaining(new SqlLimiter(sql as SQL, 'remaining', rule, clock.now))).toEqual([2, 1, 0, 'wait 10'])
  })

  // Five rounds: how the hits interleave differs from run to run.
  test.each([1, 2, 3, 4, 5])(
    'two replicas share one limit: of 20 concurrent hits split across both, exactly 5 pass (#%i)',
    async () => {
      const [first, second] = await database(2, 10)
      const clock = manualClock()
      const rule = { limit: 5, windowMs: 15 * 60_000 }
      const replicas = [first, second].map((sql) => new SqlLimiter(sql as SQL, 'login', rule, clock.now))
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, i) => (replicas[i % 2] as SqlLimiter).hit('carlos@rock-legends.com')),
      )
      expect(answers.filter(({ attempt }) => attempt)).toHaveLength(5)
      expect(answers.filter(({ retryAfter }) => retryAfter === 15 * 60)).toHaveLength(15)
      for (const replica of replicas) expect(await replica.count('carlos@rock-legends.com')).toBe(5)
    },
  )

  test('what one replica forgives, settles and forgets, the other sees at once', async () => {
    const [first, second] = await database(2)
    const clock = manualClock()
    const a = new SqlLimiter(first as SQL, 'login', RULE, clock.now)
    const b = new SqlLimiter(second as SQL, 'login', RULE, clock.now)
    const attempts = await Promise.all([a.hit('k'), b.hit('k'), a.hit('k')])
    expect(await b.hit('k')).toEqual({ attempt: undefined, retryAfter: 10 })
    await b.forgive(attempts[0]?.attempt as Attempt)
    expect(await a.count('k')).toBe(2)
    await a.settle(attempts[1]?.attempt as Attempt)
    await b.forgetSettled('k')
    expect(await a.count('k')).toBe(1)
  })

  test('limiters of different names do not share counts', async () => {
    const [sql] = await database()
    const clock = manualClock()
    const perClient = new SqlLimiter(sql as SQL, 'per-client', { limit: 1, windowMs: 60_000 }, clock.now)
    const signups = new SqlLimiter(sql as SQL, 'signups', { limit: 1, windowMs: 60_000 }, clock.now)
    expect((await perClient.hit('203.0.113.66')).retryAfter).toBe(0)
    expect((await signups.hit('203.0.113.66')).retryAfter).toBe(0)
    expect((await perClient.hit('203.0.113.66')).retryAfter).toBe(60)
  })

  test('retryAfter asked for many keys at once (one statement): each key gets its own answer, as when asked alone', async () => {
    const [sql] = await database()
    const clock = manualClock()
    const rule = { limit: 2, windowMs: 60_000 }
    const brake = new SqlLimiter(sql as SQL, 'brake', rule, clock.now)
    // Another limiter's attempts for the same keys count for nothing here.
    const other = new SqlLimiter(sql as SQL, 'other', rule, clock.now)
    await brake.record('full-at-0')
    await brake.record('full-at-0')
    await brake.record('one')
    await other.record('one')
    await other.record('one')
    clock.advance(10_000)
    await brake.record('full-at-10')
    clock.advance(10_000)
    await brake.record('full-at-10')
    clock.advance(10_000)
    const keys = ['full-at-0', 'one', 'full-at-10', 'never', 'full-at-0', 'full-at-10', 'never']
    // Asked in one turn: they share one statement (limiter.ts), and must not borrow each other's attempts.
    const together = await Promise.all(keys.map((key) => brake.retryAfter(key)))
    expect(together).toEqual([30, 0, 40, 0, 30, 40, 0])
    const alone: number[] = []
    for (const key of keys) alone.push(await brake.retryAfter(key))
    expect(alone).toEqual(together)
  })

  test('attempts that left the window are deleted: the key’s own at its next hit, every key’s by the sweep', async () => {
    const [sql] = await database()
    const clock = manualClock()
    const limiter = new SqlLimiter(sql as SQL, 'login', RULE, clock.now)
    const rows = async () => Number((await (sql as SQL)`SELECT count(*) AS n FROM rl_attempts`)[0].n)
    for (let i = 0; i < 20; i++) await limiter.hit(`key${i}`)
    await limiter.hit('key0')
    // One attempt of each of 20 keys (key0 has two) and each key's head row.
    expect(await rows()).toBe(20 + 1 + 20)
    clock.advance(RULE.windowMs + 1)
    await limiter.hit('key0')
    // key0's two old attempts went with its hit; the sweep is not due yet (a minute after the first).
    expect(await rows()).toBe(19 + 1 + 20)
    clock.advance(SWEEP_EVERY_MS)
    await limiter.hit('other')
    // Every key quiet for a window is gone, key0 too (its newest attempt is 70 s old): only other's rows are left.
    expect(await rows()).toBe(2)
  })

  test(`a backlog is swept ${SWEEP_BATCH} rows at a time, at every hit until it is gone`, async () => {
    const [sql] = await database()
    const clock = manualClock()
    const limiter = new SqlLimiter(sql as SQL, 'login', RULE, clock.now)
    const old = clock.now() - RULE.windowMs - 1
    const backlog = Array.from({ length: 2500 }, (_, i) => ({
      limiter: 'login',
      subject: `old${i}`,
      id: '',
      at_ms: old,
      settled: 1,
    }))
    await (sql as SQL)`INSERT INTO rl_attempts ${(sql as SQL)(backlog)}`
    const rows = async () => Number((await (sql as SQL)`SELECT count(*) AS n FROM rl_attempts`)[0].n)
    await limiter.hit('a')
    expect(await rows()).toBe(1500 + 2)
    await limiter.hit('a')
    expect(await rows()).toBe(500 + 3)
    await limiter.hit('a')
    // The backlog is gone; a's head row and its three attempts are left.
    expect(await rows()).toBe(4)
    expect(await limiter.sweep()).toBe(0)
  })
})

// Passwords compared as plain text: the limits are under test here, not argon2.
const plain: PasswordHasher = {
  hash: async (password) => `plain:${password}`,
  verify: async (hashed, password) => hashed === `plain:${password}`,
}

describe.skipIf(skip)('two accounts services over two SQL stores of one database (two replicas)', () => {
  async function twoReplicas() {
    const url = pg.url(await testDatabase())
    const replicas = await Promise.all(
      ['a', 'b'].map(async (owner) => {
        const store = await openSqlStore(url, { pool: 4, waitMs: 5000, owner })
        stores.push(store)
        return new Accounts(store, { now: () => new Date(), tokenTtlMs: 86_400_000, passwords: plain })
      }),
    )
    await replicas[0]?.signUp(CARLOS, OWNER)
    /** The outcome of one login on `replica`: 200, 401 or 429, as the HTTP layer would answer. */
    const logIn = (replica: number, client: string, password: string) =>
      (replicas[replica] as Accounts).logIn({ email: CARLOS.email, password }, client).then(
        () => 200,
        (error: unknown) => {
          if (error instanceof UnauthenticatedError) return 401
          if (error instanceof TooManyAttemptsError) return 429
          throw error
        },
      )
    return logIn
  }

  const CARLOS = { name: 'Carlos', email: 'carlos@rock-legends.com', password: 'i-love-rock' }
  const OWNER = '198.51.100.7'
  const ATTACKER = '203.0.113.66'
  const perEmail = ACCOUNT_LIMITS.loginFailuresPerEmail.limit

  test(`${perEmail} failed logins for one email from one address hold across both replicas together`, async () => {
    const logIn = await twoReplicas()
    for (let i = 0; i < perEmail; i++) expect(await logIn(i % 2, ATTACKER, `wrong-${i}-pw`)).toBe(401)
    expect(await logIn(0, ATTACKER, CARLOS.password)).toBe(429)
    expect(await logIn(1, ATTACKER, CARLOS.password)).toBe(429)
    // The owner, at another address, is not locked out on either replica.
    expect(await logIn(1, OWNER, CARLOS.password)).toBe(200)
    expect(await logIn(0, OWNER, CARLOS.password)).toBe(200)
  })

  test('of 20 parallel wrong logins split across both, exactly 5 are checked; the rest are refused', async () => {
    const logIn = await twoReplicas()
    const statuses = await Promise.all(Array.from({ length: 20 }, (_, i) => logIn(i % 2, ATTACKER, `wrong-${i}-pw`)))
    expect(statuses.filter((status) => status === 401)).toHaveLength(perEmail)
    expect(statuses.filter((status) => status === 429)).toHaveLength(20 - perEmail)
  })

  test('the owner’s slips on one replica are forgotten by a login on the other', async () => {
    const logIn = await twoReplicas()
    for (let i = 0; i < perEmail - 1; i++) await logIn(0, OWNER, `typo-${i}-pw`)
    expect(await logIn(1, OWNER, CARLOS.password)).toBe(200)
    for (let i = 0; i < perEmail; i++) expect(await logIn(0, OWNER, `typo-again-${i}`)).toBe(401)
    expect(await logIn(1, OWNER, 'one-too-many')).toBe(429)
  })
})
