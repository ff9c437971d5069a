import { afterAll, afterEach, beforeAll, describe, expect, test } from 'bun:test'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Accounts } from '../../src/accounts/service.ts'
import type { PasswordHasher } from '../../src/auth/password.ts'
import { hashSecret } from '../../src/auth/secrets.ts'
import { userCredentials } from '../../src/auth/user-credentials.ts'
import { AccountDisabledError, UnauthenticatedError } from '../../src/model/errors.ts'
import { OperatorAccounts } from '../../src/ops/accounts.ts'
import { openMemoryStore } from '../../src/store/document/memory.ts'
import { openJsonFileStore } from '../../src/store/json-file/json-file.ts'
import type { Store } from '../../src/store/store.ts'
import { testApp } from '../helpers.ts'
import { removeDir, tempDir } from '../support/binary.ts'
import { STORED_HASH } from '../support/passwords.ts'
import { skipWithoutPostgres, type TestPostgres, testPostgres } from '../support/postgres.ts'
import { bearer, CARLOS } from './helpers.ts'

// A login whose password check is in flight while the operator resets the password, or disables the account, must not
// end with a working token. The race is made certain, not likely: the hasher's verify waits on a gate the test opens
// only once the operator's change is durable. Played over memory, a JSON data file and PostgreSQL (one store, and two
// replicas of one database).

const DAY = 86_400_000
const CLIENT = '198.51.100.7'
const NEW_PASSWORD = 'a-brand-new-password'

/** Passwords "hashed" by prefixing (argon2 is not under test); verify of a held password waits for its gate. */
function gatedHasher() {
  const gates = new Map<string, Promise<void>>()
  const waiting = new Map<string, number>()
  const count = (password: string, by: number) => waiting.set(password, (waiting.get(password) ?? 0) + by)
  const hasher: PasswordHasher = {
    hash: async (password) => `plain:${password}`,
    verify: async (hashed, password) => {
      count(password, 1)
      await gates.get(password)
      count(password, -1)
      return hashed === `plain:${password}`
    },
  }
  /** Makes verify of `password` wait; returns what opens the gate (and removes it). */
  const hold = (password: string) => {
    const { promise, resolve } = Promise.withResolvers<void>()
    gates.set(password, promise)
    return () => {
      gates.delete(password)
      resolve()
    }
  }
  /** Resolves once `n` verifies of `password` are waiting at its gate. */
  const inFlight = async (password: string, n = 1) => {
    while ((waiting.get(password) ?? 0) < n) await Bun.sleep(1)
  }
  return { hasher, hold, inFlight }
}

/** What a login ends with: its token, or the error it was refused with. */
const outcome = (login: Promise<{ token: string }>) =>
  login.then(
    ({ token }) => ({ token, error: undefined }),
    (error: unknown) => ({ token: undefined, error }),
  )

/** The race suite over stores `open()` gives; `second` opens another replica of the same data (SQL only). */
function raceSuite(open: () => Promise<Store>, second?: (first: Store) => Promise<Store>) {
  const opened: Store[] = []
  afterEach(async () => {
    for (const store of opened.splice(0)) await store.close().catch(() => {})
  })

  async function setUp() {
    const store = await open()
    opened.push(store)
    // The operator may work on another replica than the login's: the guarantee must hold across them.
    const operatorStore = second ? await second(store) : store
    if (operatorStore !== store) opened.push(operatorStore)
    const { hasher, hold, inFlight } = gatedHasher()
    const now = () => new Date()
    const accounts = new Accounts(store, { now, tokenTtlMs: DAY, passwords: hasher })
    const admin = new OperatorAccounts(operatorStore, now, hasher)
    await accounts.signUp(CARLOS, CLIENT)
    const check = userCredentials(store, now)
    /** Whether `token` authenticates a request now, as the guard of every route checks it. */
    const works = async (token: string) => (await check('bearer', hashSecret(token))) !== undefined
    const logIn = (password = CARLOS.password) => outcome(accounts.logIn({ email: CARLOS.email, password }, CLIENT))
    /** A login whose password check is held until `change` has run (and is durable). */
    const racing = async (change: () => Promise<unknown>) => {
      const open = hold(CARLOS.password)
      const login = logIn()
      await inFlight(CARLOS.password)
      await change()
      open()
      return login
    }
    return { store, accounts, admin, works, logIn, racing, hold, inFlight }
  }

  test('a password reset during the password check: the login gets 401 and no token, and none is stored', async () => {
    const { store, admin, works, logIn, racing } = await setUp()
    const before = await logIn()
    const { token, error } = await racing(() => admin.resetPassword(CARLOS.email, NEW_PASSWORD))
    // A login that lost the race unnoticed would answer 200 with a token that works for 24 hours.
    if (token) expect(await works(token)).toBe(false)
    expect(token).toBeUndefined()
    expect(error).toBeInstanceOf(UnauthenticatedError)
    expect((error as Error).message).toBe('The email or password is not correct.')
    const user = await store.users.findByEmail(CARLOS.email)
    const live = (await store.credentials.listByUser(user?.id ?? 0)).filter(
      (credential) => credential.kind === 'token' && credential.revokedAt === null,
    )
    expect(live).toEqual([])
    // The session from before the reset is over too; the new password logs in, the old one does not.
    expect(await works(before.token as string)).toBe(false)
    expect((await logIn()).error).toBeInstanceOf(UnauthenticatedError)
    const after = await logIn(NEW_PASSWORD)
    expect(await works(after.token as string)).toBe(true)
  })

  test('a disable during the password check: the login gets 403 and no token, not even once enabled again', async () => {
    const { store, admin, works, logIn, racing } = await setUp()
    const { token, error } = await racing(() => admin.setDisabled(CARLOS.email, true))
    if (token) {
      // A login that lost the race unnoticed would get a 200 with a token, refused while disabled, working again once
      // enabled.
      await admin.setDisabled(CARLOS.email, false)
      expect(await works(token)).toBe(false)
    }
    expect(token).toBeUndefined()
    expect(error).toBeInstanceOf(AccountDisabledError)
    const user = await store.users.findByEmail(CARLOS.email)
    expect(await store.credentials.listByUser(user?.id ?? 0)).toEqual([])
    await admin.setDisabled(CARLOS.email, false)
    expect(await works((await logIn()).token as string)).toBe(true)
  })

  test('a reset while several logins check the password: none of them ends with a working token', async () => {
    const { admin, logIn, works, hold, inFlight } = await setUp()
    const open = hold(CARLOS.password)
    const logins = Array.from({ length: 4 }, () => logIn())
    await inFlight(CARLOS.password, logins.length)
    await admin.resetPassword(CARLOS.email, NEW_PASSWORD)
    open()
    for (const { token, error } of await Promise.all(logins)) {
      if (token) expect(await works(token)).toBe(false)
      expect(error).toBeInstanceOf(UnauthenticatedError)
    }
  })
}

describe('over memory', () => raceSuite(async () => openMemoryStore()))

describe('over a JSON data file', () => {
  let dir: string
  beforeAll(() => {
    dir = tempDir()
  })
  afterAll(() => removeDir(dir))
  raceSuite(async () => openJsonFileStore(join(dir, `${crypto.randomUUID()}.json`)))
})

const skip = skipWithoutPostgres()
let pg: TestPostgres
beforeAll(async () => {
  if (!skip) pg = await testPostgres()
})

describe.skipIf(skip)('over PostgreSQL', () => {
  const urls = new WeakMap<Store, string>()
  /**
   * The database of the test running: with the schema and no rows (`emptyDatabase`), the same start as a new copy
   * migrated, for far less of PostgreSQL's work; emptied again once the suite's afterEach has closed its stores.
   */
  const open = async () => {
    const { openSqlStore } = await import('../../src/store/sql/sql-store.ts')
    const url = pg.url(await pg.emptyDatabase())
    const store = await openSqlStore(url, { pool: 3 })
    urls.set(store, url)
    return store
  }
  describe('one replica', () => raceSuite(open))
  describe('the operator on another replica', () =>
    raceSuite(open, async (first) => {
      const { openSqlStore } = await import('../../src/store/sql/sql-store.ts')
      return openSqlStore(urls.get(first) as string, { pool: 3, owner: 'operator' })
    }))
})

describe('a token of an older epoch than its account is refused at use (data written by hand)', () => {
  let dir: string
  beforeAll(() => {
    dir = tempDir()
  })
  afterAll(() => removeDir(dir))

  test('GET /me with it is 401, though it is neither revoked nor expired; a key of that epoch still works', async () => {
    const file = join(dir, 'db.json')
    const token = 'rl_tok_planted-token-of-epoch-0'
    const key = 'rl_key_planted-key-of-epoch-0'
    const credential = (id: number, kind: 'token' | 'key', secret: string) => ({
      id,
      userId: 1,
      kind,
      name: kind === 'key' ? 'CI' : null,
      hash: hashSecret(secret),
      prefix: secret.slice(0, 11),
      createdAt: '2026-01-01T00:00:00.000Z',
      expiresAt: null,
      lastUsedAt: null,
      revokedAt: null,
      epoch: 0,
    })
    writeFileSync(
      file,
      JSON.stringify({
        version: 1,
        counters: { artists: 0, albums: 0, users: 1, credentials: 2 },
        artists: [],
        albums: [],
        users: [
          {
            id: 1,
            name: 'Carlos',
            email: CARLOS.email,
            passwordHash: STORED_HASH,
            createdAt: '2026-01-01T00:00:00.000Z',
            disabledAt: null,
            credentialsEpoch: 1,
          },
        ],
        credentials: [credential(1, 'token', token), credential(2, 'key', key)],
      }),
    )
    const store = await openJsonFileStore(file)
    try {
      const { call } = testApp(store)
      expect((await call('/api/v1/user/me', { headers: bearer(token) })).status).toBe(401)
      expect((await call('/api/v1/user/me', { headers: { 'x-api-key': key } })).status).toBe(200)
    } finally {
      await store.close()
    }
  })
})
