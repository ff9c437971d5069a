import { afterAll, afterEach, beforeAll, describe, expect, test } from 'bun:test'
import { SQL } from 'bun'
import { ACCOUNT_LIMITS, Accounts } from '../../../src/accounts/service.ts'
import type { PasswordHasher } from '../../../src/auth/password.ts'
import { TooManyAttemptsError, UnauthenticatedError } from '../../../src/model/errors.ts'
import { MemoryRecents } from '../../../src/store/document/memory-limiter.ts'
import { SqlRecents } from '../../../src/store/sql/limiter.ts'
import { openSqlStore, type SqlStore } from '../../../src/store/sql/sql-store.ts'
import type { Recents, RecentsRule } from '../../../src/store/store.ts'
import { skipWithoutPostgres, type TestPostgres, testPostgres } from '../../support/postgres.ts'

// Over PostgreSQL: each account's known addresses (exempt from the per-email ceiling) are its own latest few, shared
// by every replica. An account holds at most `knownAddressesPerAccount` rows (and its head row), which only its own
// logins replace, whatever the concurrency: a table of every address an account logged in from for 30 days would let
// an attacker's own account grow it without bound.

const skip = skipWithoutPostgres()
let pg: TestPostgres
const open: SQL[] = []
const stores: SqlStore[] = []

beforeAll(async () => {
  if (!skip) pg = await testPostgres()
})
/** The pools made to each database, kept for the next test that takes it: a new pool starts new backends. */
const kept = new Map<string, SQL[]>()
// The stores closed after their test; its databases are emptied for the next test's once they are (`emptyDatabase`).
afterEach(async () => {
  await Promise.all(stores.splice(0).map((store) => store.close()))
})
afterAll(async () => {
  await Promise.all(open.map((sql) => sql.close()))
})

/**
 * A database of the test's own with the schema and no rows: the same start as a new copy migrated, for far less of
 * PostgreSQL's work.
 */
const emptyDatabase = () => pg.emptyDatabase()

/** Pools of their own to an empty, migrated database ({@link emptyDatabase}), as replicas have. */
async function database(pools = 1): Promise<SQL[]> {
  const name = await emptyDatabase()
  const sqls = kept.get(name) ?? []
  kept.set(name, sqls)
  while (sqls.length < pools) {
    const sql = new SQL({ url: pg.url(name), max: 4 })
    sqls.push(sql)
    open.push(sql)
  }
  return sqls.slice(0, pools)
}

/** The member rows (head rows left out) of recents `name` whose owner starts with `owner`. */
async function rows(sql: SQL, name: string, owner: string): Promise<number> {
  const [row] = await sql`
    SELECT count(*) AS n FROM rl_attempts WHERE limiter = ${name} AND starts_with(subject, ${owner}) AND id <> ''`
  return Number(row?.n ?? 0)
}

type Step = ['add' | 'has', string, string] | ['advance', number]

/** Plays `steps`; what each `has` answered. */
async function play(recents: Recents, advance: (ms: number) => void, steps: readonly Step[]): Promise<boolean[]> {
  const answers: boolean[] = []
  for (const step of steps) {
    if (step[0] === 'advance') advance(step[1])
    else if (step[0] === 'add') await recents.add(step[1], step[2])
    else answers.push(await recents.has(step[1], step[2]))
  }
  return answers
}

const RULE: RecentsRule = { perOwner: 3, windowMs: 10_000 }
const STEPS: Step[] = [
  ['add', 'carlos', 'home'],
  ['has', 'carlos', 'home'],
  ['has', 'carlos', 'work'],
  ['has', 'mallory', 'home'],
  // A millisecond apart: of members added in the same one, which goes first is not defined.
  ...Array.from({ length: 50 }, (_, i): Step[] => [
    ['advance', 1],
    ['add', 'mallory', `a${i}`],
  ]).flat(),
  ['has', 'carlos', 'home'],
  ['has', 'mallory', 'a49'],
  ['has', 'mallory', 'a47'],
  ['has', 'mallory', 'a46'],
  ['advance', 1000],
  ['add', 'carlos', 'work'],
  ['advance', 1],
  ['add', 'carlos', 'phone'],
  ['advance', 1],
  ['add', 'carlos', 'home'],
  ['advance', 1],
  ['add', 'carlos', 'cafe'],
  ['has', 'carlos', 'work'],
  ['has', 'carlos', 'home'],
  ['has', 'carlos', 'cafe'],
  ['advance', 9400],
  ['has', 'mallory', 'a49'],
  ['has', 'carlos', 'home'],
  ['add', 'carlos', ''],
  ['has', 'carlos', ''],
]
const EXPECTED = [true, false, false, true, true, true, false, false, true, true, false, true, false]

describe('the same script gives the same answers in memory and over SQL', () => {
  test('in memory', async () => {
    let now = 1_750_000_000_000
    const recents = new MemoryRecents(RULE, () => now)
    expect(await play(recents, (ms) => (now += ms), STEPS)).toEqual(EXPECTED)
  })

  test.skipIf(skip)('over SQL', async () => {
    const [sql] = await database()
    let now = 1_750_000_000_000
    const recents = new SqlRecents(sql as SQL, 'known', RULE, () => now)
    expect(await play(recents, (ms) => (now += ms), STEPS)).toEqual(EXPECTED)
    expect(await recents.members('mallory')).toBe(RULE.perOwner)
  })
})

describe.skipIf(skip)('over SQL, shared by replicas', () => {
  test('60 adds of one owner at once, over two pools, leave exactly perOwner rows; another owner keeps its own', async () => {
    const [a, b] = await database(2)
    const now = () => 1_750_000_000_000
    const replicas = [a, b].map((sql) => new SqlRecents(sql as SQL, 'known', { perOwner: 10, windowMs: 60_000 }, now))
    await replicas[0]?.add('carlos', 'home')
    await Promise.all(Array.from({ length: 60 }, (_, i) => replicas[i % 2]?.add('mallory', `a${i}`)))
    expect(await rows(a as SQL, 'known', 'mallory')).toBe(10)
    expect(await replicas[1]?.has('carlos', 'home')).toBe(true)
  })

  test('the sweep deletes members and head rows that left the window', async () => {
    const [sql] = await database()
    let now = 1_750_000_000_000
    const recents = new SqlRecents(sql as SQL, 'known', { perOwner: 2, windowMs: 1000 }, () => now)
    for (let i = 0; i < 5; i++) await recents.add(`owner${i}`, 'x')
    now += 1001
    expect(await recents.sweep()).toBe(10)
    const [row] = await (sql as SQL)`SELECT count(*) AS n FROM rl_attempts WHERE limiter = 'known'`
    expect(Number(row?.n)).toBe(0)
  })

  test("an account's logins from 40 addresses keep its latest 10 only; the owner's home address stays exempt on both replicas", async () => {
    const url = pg.url(await emptyDatabase())
    const plain: PasswordHasher = {
      hash: async (password) => `plain:${password}`,
      verify: async (hashed, password) => hashed === `plain:${password}`,
    }
    const replicas = await Promise.all(
      ['a', 'b'].map(async (owner) => {
        const store = await openSqlStore(url, { pool: 4, waitMs: 5000, owner })
        stores.push(store)
        return new Accounts(store, { now: () => new Date(), tokenTtlMs: 86_400_000, passwords: plain })
      }),
    )
    const sql = new SQL({ url, max: 1 })
    open.push(sql)
    const CARLOS = { name: 'Carlos', email: 'carlos@rock-legends.com', password: 'i-love-rock' }
    const MALLORY = { name: 'Mallory', email: 'mallory@example.com', password: 'mallory-pw' }
    await replicas[0]?.signUp(CARLOS, '198.51.100.7')
    await replicas[0]?.signUp(MALLORY, '203.0.113.66')
    const logIn = (replica: number, client: string, password: string, email = CARLOS.email) =>
      (replicas[replica] as Accounts).logIn({ email, password }, client).then(
        () => 200,
        (error: unknown) => {
          if (error instanceof UnauthenticatedError) return 401
          if (error instanceof TooManyAttemptsError) return 429
          throw error
        },
      )
    expect(await logIn(0, '198.51.100.7', CARLOS.password)).toBe(200)
    for (let i = 0; i < 40; i++)
      expect(await logIn(i % 2, `10.0.0.${i + 1}`, MALLORY.password, MALLORY.email)).toBe(200)
    expect(await rows(sql, 'known-addresses', MALLORY.email)).toBe(ACCOUNT_LIMITS.knownAddressesPerAccount)
    // A crowd reaches the ceiling for Carlos's account: a new address is refused, his home is not, on either replica.
    const { loginFailuresPerEmail: perEmail, loginFailuresPerEmailCeiling: ceiling } = ACCOUNT_LIMITS
    for (let a = 0; a < Math.ceil(ceiling.limit / perEmail.limit); a++)
      for (let i = 0; i < perEmail.limit; i++) await logIn(a % 2, `192.0.2.${a + 1}`, `wrong-${i}-pw`)
    expect(await logIn(1, '192.0.2.200', CARLOS.password)).toBe(429)
    expect(await logIn(1, '198.51.100.7', CARLOS.password)).toBe(200)
    expect(await logIn(0, '198.51.100.7', CARLOS.password)).toBe(200)
  }, 60_000)
})
