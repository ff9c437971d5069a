/**
 * The store the in-process contract tests run over. `testApp()` (test/helpers.ts) takes its store from
 * {@link testStore}: the in-memory document store by default, or with `ROCK_LEGENDS_TEST_BACKEND=postgres` a SQL
 * store over a fresh database of the harness's own PostgreSQL (test/support/postgres.ts). The same test files run
 * over each backend (`bun run test` runs the contract suite a second time that way, see package.json): one set of
 * tests, never a copy. With `ROCK_LEGENDS_TEST_POOLER=session` or `transaction` as well, the SQL stores reach that
 * PostgreSQL through a PgBouncer of this process in that pooling mode (test/support/pgbouncer.ts), as a replica over a
 * managed PostgreSQL does: in transaction mode with `?prepare=false` and no direct URL, so the change feed polls.
 */
import { onTestFinished } from 'bun:test'
import { openMemoryStore } from '../../src/store/document/memory.ts'
import type { Store } from '../../src/store/store.ts'
import { deferredLimiter } from './deferred-limiter.ts'
import { type PoolMode, startPgbouncer, type TestPgbouncer } from './pgbouncer.ts'
import { STORE_POOL, type TestPostgres, testPostgres } from './postgres.ts'

/** The backends the contract suite runs over. */
export type Backend = 'memory' | 'postgres'

/** The backend of this test run: `ROCK_LEGENDS_TEST_BACKEND`, the in-memory document store by default. */
export function testBackend(): Backend {
  const name = process.env.ROCK_LEGENDS_TEST_BACKEND ?? 'memory'
  if (name !== 'memory' && name !== 'postgres')
    throw new Error(`ROCK_LEGENDS_TEST_BACKEND must be memory or postgres, not "${name}"`)
  return name
}

/** The pooler the SQL stores go through: `ROCK_LEGENDS_TEST_POOLER`, none by default. */
export function testPooler(): PoolMode | undefined {
  const mode = process.env.ROCK_LEGENDS_TEST_POOLER
  if (mode === undefined || mode === '') return undefined
  if (mode !== 'session' && mode !== 'transaction')
    throw new Error(`ROCK_LEGENDS_TEST_POOLER must be session or transaction, not "${mode}"`)
  return mode
}

/** This process's PgBouncer in front of `server`, started on first use. */
let bouncer: Promise<TestPgbouncer> | undefined

/** The URL a SQL store of the contract suite opens `database` at: directly, or through the run's pooler. */
async function storeUrl(server: TestPostgres, database: string): Promise<string> {
  const mode = testPooler()
  if (!mode) return server.url(database)
  bouncer ??= startPgbouncer(server, mode)
  const url = (await bouncer).url(database)
  return mode === 'transaction' ? `${url}?prepare=false` : url
}

/**
 * A store that is usable at once although it opens asynchronously: every call waits for `ready`, then goes to the
 * store it gives. `noteUse`, which returns nothing, is passed on once the store is ready.
 */
function whenReady(ready: Promise<Store>): Store {
  const on =
    <A extends unknown[], R>(call: (store: Store, ...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> =>
      call(await ready, ...args)
  return {
    artists: {
      get: on((store, id: number) => store.artists.get(id)),
      list: on((store, ...args: Parameters<Store['artists']['list']>) => store.artists.list(...args)),
      insert: on((store, ...args: Parameters<Store['artists']['insert']>) => store.artists.insert(...args)),
      replace: on((store, ...args: Parameters<Store['artists']['replace']>) => store.artists.replace(...args)),
      history: on((store, ...args: Parameters<Store['artists']['history']>) => store.artists.history(...args)),
    },
    albums: {
      get: on((store, id: number) => store.albums.get(id)),
      listByArtist: on((store, ...args: Parameters<Store['albums']['listByArtist']>) =>
        store.albums.listByArtist(...args),
      ),
      insert: on((store, ...args: Parameters<Store['albums']['insert']>) => store.albums.insert(...args)),
      replace: on((store, ...args: Parameters<Store['albums']['replace']>) => store.albums.replace(...args)),
      remove: on((store, ...args: Parameters<Store['albums']['remove']>) => store.albums.remove(...args)),
    },
    users: {
      get: on((store, id: number) => store.users.get(id)),
      findByEmail: on((store, email: string) => store.users.findByEmail(email)),
      insert: on((store, fields: Parameters<Store['users']['insert']>[0]) => store.users.insert(fields)),
      list: on((store, page: Parameters<Store['users']['list']>[0]) => store.users.list(page)),
      update: on((store, ...args: Parameters<Store['users']['update']>) => store.users.update(...args)),
      startEpoch: on((store, ...args: Parameters<Store['users']['startEpoch']>) => store.users.startEpoch(...args)),
    },
    credentials: {
      findByHash: on((store, hash: string) => store.credentials.findByHash(hash)),
      listByUser: on((store, userId: number) => store.credentials.listByUser(userId)),
      insert: on((store, ...args: Parameters<Store['credentials']['insert']>) => store.credentials.insert(...args)),
      revoke: on((store, id: number, at: string) => store.credentials.revoke(id, at)),
      revokeAll: on((store, ...args: Parameters<Store['credentials']['revokeAll']>) =>
        store.credentials.revokeAll(...args),
      ),
      noteUse: (id, at) => {
        ready.then((store) => store.credentials.noteUse(id, at))
      },
      purge: on((store, now: string) => store.credentials.purge(now)),
    },
    idempotency: {
      claim: on((store, ...args: Parameters<Store['idempotency']['claim']>) => store.idempotency.claim(...args)),
      release: on((store, ...args: Parameters<Store['idempotency']['release']>) => store.idempotency.release(...args)),
      keep: on((store, ...args: Parameters<Store['idempotency']['keep']>) => store.idempotency.keep(...args)),
    },
    isEmpty: on((store) => store.isEmpty()),
    load: on((store, ...args: Parameters<Store['load']>) => store.load(...args)),
    snapshot: on((store) => store.snapshot()),
    resetPoint: on((store) => store.resetPoint()),
    restore: on((store, snapshot: Parameters<Store['restore']>[0]) => store.restore(snapshot)),
    check: on((store) => store.check()),
    changes: {
      subscribe: on((store, ...args: Parameters<Store['changes']['subscribe']>) => store.changes.subscribe(...args)),
      end: () => {
        ready.then((store) => store.changes.end())
      },
    },
    close: on((store) => store.close()),
    limiter: (name, rule, clock) => deferredLimiter(ready.then((store) => store.limiter(name, rule, clock))),
    recents: (name, rule, clock) => {
      const recents = ready.then((store) => store.recents(name, rule, clock))
      recents.catch(() => {})
      return {
        add: async (owner, member) => (await recents).add(owner, member),
        has: async (owner, member) => (await recents).has(owner, member),
      }
    },
  }
}

/** A fresh, empty store of this run's backend (see {@link testBackend}). */
export function testStore(): Store {
  if (testBackend() === 'memory') return openMemoryStore()
  const postgres = testPostgres()
  const database = postgres.then((server) => server.reusedDatabase())
  database.catch(() => {})
  const ready = (async () => {
    const { openSqlStore } = await import('../../src/store/sql/sql-store.ts')
    const server = await postgres
    const name = await database
    const url = await storeUrl(server, name)
    // Over the pool this process keeps for that database: the next test's store there uses the same connections.
    return openSqlStore(url, { ...STORE_POOL, over: await server.storePool(name, url) })
  })()
  // A store opened by a test is closed once that test has finished (a test's app lives as long as the test wants it).
  // Each store also reads the changes of other replicas every second: left open, the stores of finished tests would
  // keep the shared server busy. One opened at a file's or a describe's top level (where `onTestFinished` throws) lives
  // as long as the process. Not in a `beforeAll`: the hook would close it as soon as the `beforeAll` ends.
  // Once closed, its database is emptied for the next test of this process (a new copy costs the server far more).
  try {
    onTestFinished(async () => {
      try {
        await (await ready).close()
        await (await postgres).recycle(await database)
      } catch {}
    })
  } catch {}
  return whenReady(ready)
}
