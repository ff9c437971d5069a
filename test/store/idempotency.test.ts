/**
 * The store's idempotency keys (src/store/idempotency.ts), the same script played on the document store and on the
 * SQL store: claims, replays, mismatches, claims in flight, expiry, lease takeover and the bounds in bytes; then what
 * each keeps across a restart, and one claim of many made at once through two SQL stores over one database. Last, a
 * process that dies right after a keyed create is durable, before it answers: the answer was kept in the same write,
 * so a retry replays it at once, over a data file and over PostgreSQL; and a commit the disk refuses keeps no answer.
 */
import { afterEach, beforeAll, describe, expect, test } from 'bun:test'
import { copyFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { readDataFile } from '../../src/ops/read-data-file.ts'
import { openMemoryStore } from '../../src/store/document/memory.ts'
import { entryBytes, type IdempotencyLimits, type KeyedRequest } from '../../src/store/idempotency.ts'
import { openJsonFileStore } from '../../src/store/json-file/json-file.ts'
import { openSqlStore, type SqlStore } from '../../src/store/sql/sql-store.ts'
import type { Store } from '../../src/store/store.ts'
import { faultyFileSystem } from '../disk/failing-fs.ts'
import { asService, testApp } from '../helpers.ts'
import { skipWithoutPostgres, type TestPostgres, testPostgres } from '../support/postgres.ts'

const skip = skipWithoutPostgres()
let pg: TestPostgres
const opened: SqlStore[] = []

beforeAll(async () => {
  if (!skip) pg = await testPostgres()
})
afterEach(async () => {
  await Promise.all(opened.splice(0).map((store) => store.close().catch(() => {})))
})

const openSql = async (name?: string) => {
  const store = await openSqlStore(pg.url(name ?? (await pg.emptyDatabase())), { pool: 2, waitMs: 5000 })
  opened.push(store)
  return store
}

const LIMITS: IdempotencyLimits = { ttlMs: 86_400_000, leaseMs: 60_000, bytesPerScope: 4096, bytesInAll: 8192 }
const T0 = Date.parse('2026-01-01T00:00:00Z')
const request = (key: string, over: Partial<KeyedRequest> = {}): KeyedRequest => ({
  scope: 'key:1',
  key,
  fingerprint: 'POST /api/v1/artists sha256-a',
  ...over,
})
const ANSWER = {
  status: 201,
  headers: { 'content-type': 'application/json', location: '/api/v1/artists/7', etag: '"a7"' },
  body: '{"id":7,"name":"Pappo"}',
}

/** Inserts an artist for the request that claimed `keyed` as `claim`, keeping {@link ANSWER} in the same write. */
const insertKept = (store: Store, keyed: KeyedRequest, claim: string, now = T0) =>
  store.artists.insert({ name: 'Pappo' }, undefined, {
    request: keyed,
    claim,
    expiresAt: now + LIMITS.ttlMs,
    answer: () => ANSWER,
  })

/** Claims `key` for `request` and keeps `answer` for it at `now`, with the artist it answers. */
async function answered(store: Store, keyed: KeyedRequest, now = T0) {
  const claim = await store.idempotency.claim(keyed, now, LIMITS)
  if (claim.kind !== 'claimed') throw new Error(`expected a claim, got ${claim.kind}`)
  await insertKept(store, keyed, claim.claim, now)
}

/** The script both stores play; it answers what each step saw, for the two stores to agree on. */
async function script(store: Store) {
  const seen: unknown[] = []
  const claim = (keyed: KeyedRequest, now = T0) => store.idempotency.claim(keyed, now, LIMITS)
  // A first claim, then its twin while it runs: in flight.
  const first = await claim(request('k1'))
  seen.push(first.kind, await claim(request('k1')))
  if (first.kind !== 'claimed') return seen
  // Another body with the same key, while running and once answered: a mismatch.
  seen.push(await claim(request('k1', { fingerprint: 'other' })))
  await insertKept(store, request('k1'), first.claim)
  seen.push(await claim(request('k1')), await claim(request('k1', { fingerprint: 'other' })))
  // The same key in another scope is another key: one client never sees another's answer.
  seen.push((await claim(request('k1', { scope: 'user:2' }))).kind)
  // Answered a day ago: expired, so free again.
  seen.push((await claim(request('k1'), T0 + LIMITS.ttlMs + 1)).kind)
  // A claim never answered holds for its lease, then another request takes it; the first one's insert then writes
  // nothing (the one that took the key over makes the record), and the key stays the taker's.
  const stale = await claim(request('k2'))
  seen.push((await claim(request('k2'), T0 + LIMITS.leaseMs - 1)).kind)
  const taker = await claim(request('k2'), T0 + LIMITS.leaseMs + 1)
  seen.push(taker.kind)
  const artists = (await store.artists.list({ limit: 1, offset: 0 })).total
  if (stale.kind === 'claimed')
    seen.push(
      await insertKept(store, request('k2'), stale.claim, T0 + LIMITS.leaseMs + 2).then(
        () => 'written',
        (error: Error) => error.name,
      ),
    )
  seen.push((await store.artists.list({ limit: 1, offset: 0 })).total - artists)
  seen.push((await claim(request('k2'), T0 + LIMITS.leaseMs + 3)).kind)
  // A released key is free at once.
  const released = await claim(request('k3'))
  if (released.kind === 'claimed') await store.idempotency.release(request('k3'), released.claim)
  seen.push((await claim(request('k3'))).kind)
  // An answer kept in a write of its own (a request whose change is not one insert) replays the same way; a claim
  // taken over keeps nothing.
  const own = await claim(request('k4'))
  if (own.kind === 'claimed') await store.idempotency.keep(request('k4'), own.claim, ANSWER, T0 + LIMITS.ttlMs)
  seen.push(await claim(request('k4')))
  const overtaken = await claim(request('k5'))
  await claim(request('k5'), T0 + LIMITS.leaseMs + 1)
  if (overtaken.kind === 'claimed')
    seen.push(
      await store.idempotency.keep(request('k5'), overtaken.claim, ANSWER, T0 + LIMITS.ttlMs).then(
        () => 'kept',
        (error: Error) => error.name,
      ),
    )
  return seen
}

const EXPECTED = [
  'claimed',
  { kind: 'in-flight', retryAfter: 1 },
  { kind: 'mismatch' },
  { kind: 'replay', answer: ANSWER },
  { kind: 'mismatch' },
  'claimed',
  'claimed',
  'in-flight',
  'claimed',
  'ClaimLostError',
  0,
  'in-flight',
  'claimed',
  { kind: 'replay', answer: ANSWER },
  'ClaimLostError',
]

/** Fills scope `key:1` to its bound with answers, at `T0`; how many fit. */
async function fill(store: Store, scope = 'key:1') {
  const one = entryBytes(request('f-0', { scope }), ANSWER)
  const fit = Math.floor(LIMITS.bytesPerScope / one)
  for (let i = 0; i < fit; i++) await answered(store, request(`f-${i}`, { scope }))
  return fit
}

async function bounds(store: Store) {
  const fit = await fill(store)
  // The scope is full: a new key is refused until its oldest answer expires; a known one still replays.
  const full = await store.idempotency.claim(request('one-more'), T0 + 1000, LIMITS)
  const replay = (await store.idempotency.claim(request('f-0'), T0 + 1000, LIMITS)).kind
  // Another scope is not held back by it, until all scopes together are full.
  await fill(store, 'key:2')
  const everywhere = await store.idempotency.claim(request('x', { scope: 'key:3' }), T0 + 1000, LIMITS)
  const later = (await store.idempotency.claim(request('one-more'), T0 + LIMITS.ttlMs + 1, LIMITS)).kind
  return { fit, full, replay, everywhere, later }
}

/**
 * Two keyed creates sent together (one batch, over SQL one transaction): one whose claim was taken over after its
 * lease, one whose claim holds. What each became, then the artists made and what each key answers after.
 */
async function takenOverInABatch(store: Store) {
  const later = T0 + LIMITS.leaseMs + 1
  const stale = await store.idempotency.claim(request('old'), T0, LIMITS)
  await store.idempotency.claim(request('old'), later, LIMITS)
  const fresh = await store.idempotency.claim(request('new'), later, LIMITS)
  if (stale.kind !== 'claimed' || fresh.kind !== 'claimed') throw new Error('expected two claims')
  const settled = await Promise.allSettled([
    insertKept(store, request('old'), stale.claim),
    insertKept(store, request('new'), fresh.claim, later),
  ])
  return {
    inserts: settled.map((each) => (each.status === 'fulfilled' ? 'made' : (each.reason as Error).name)),
    artists: (await store.artists.list({ limit: 1, offset: 0 })).total,
    old: (await store.idempotency.claim(request('old'), later + 1, LIMITS)).kind,
    new: (await store.idempotency.claim(request('new'), later + 1, LIMITS)).kind,
  }
}

const TAKEN_OVER: Awaited<ReturnType<typeof takenOverInABatch>> = {
  inserts: ['ClaimLostError', 'made'],
  artists: 1,
  old: 'in-flight',
  new: 'replay',
}

describe('idempotency keys in the document store', () => {
  test('claims, replays, mismatches, claims in flight, expiry and lease', async () => {
    expect(await script(openMemoryStore())).toEqual(EXPECTED)
  })

  test('a create whose claim was taken over writes nothing; the others of its batch are made', async () => {
    expect(await takenOverInABatch(openMemoryStore())).toEqual(TAKEN_OVER)
  })

  test('bounded in bytes per scope and in all: a new key past them is refused, known keys still replay', async () => {
    const seen = await bounds(openMemoryStore())
    expect(seen.fit).toBeGreaterThan(3)
    expect(seen.full).toEqual({ kind: 'full', of: 'scope', retryAfter: LIMITS.ttlMs / 1000 - 1 })
    expect(seen.replay).toBe('replay')
    expect(seen.everywhere).toEqual({ kind: 'full', of: 'all', retryAfter: LIMITS.ttlMs / 1000 - 1 })
    expect(seen.later).toBe('claimed')
  })

  test('a data file keeps the answers across restarts (journal and compaction), never the claims in flight', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'rl-idempotency-'))
    const path = join(directory, 'db.json')
    try {
      const now = Date.now()
      let store = await openJsonFileStore(path)
      await answered(store, request('kept'), now)
      await store.idempotency.claim(request('running'), now, LIMITS)
      // Closed without a compaction in between: the answer is in the journal.
      await store.close()
      store = await openJsonFileStore(path, { compactAfterBytes: 1 })
      expect(await store.idempotency.claim(request('kept'), now + 1, LIMITS)).toEqual({
        kind: 'replay',
        answer: ANSWER,
      })
      expect((await store.idempotency.claim(request('running'), now + 1, LIMITS)).kind).toBe('claimed')
      await store.close()
      // Folded into the data file by the close; a backup's snapshot leaves them out.
      expect(await Bun.file(path).json()).toMatchObject({ idempotency: [{ key: 'kept' }] })
      store = await openJsonFileStore(path)
      expect((await store.idempotency.claim(request('kept'), now + 2, LIMITS)).kind).toBe('replay')
      expect(await store.snapshot()).not.toHaveProperty('idempotency')
      // Nor does what the operator's commands read of the file (backup, copy, verify).
      expect(readDataFile(path).document).not.toHaveProperty('idempotency')
      // A restore replaces the catalogue the answers spoke of: they go with it.
      await store.restore(await store.snapshot())
      expect((await store.idempotency.claim(request('kept'), now + 3, LIMITS)).kind).toBe('claimed')
      await store.close()
    } finally {
      rmSync(directory, { recursive: true, force: true })
    }
  })
})

describe.skipIf(skip)('idempotency keys in the SQL store', () => {
  test('the same script as the document store, the same answers', async () => {
    expect(await script(await openSql())).toEqual(EXPECTED)
  })

  test('a create whose claim was taken over writes nothing; the others of its transaction are made', async () => {
    expect(await takenOverInABatch(await openSql())).toEqual(TAKEN_OVER)
  })

  test('the same bounds as the document store', async () => {
    expect(await bounds(await openSql())).toEqual(await bounds(openMemoryStore()))
  })

  test('many claims of one key at once through two stores over one database: exactly one is claimed', async () => {
    const name = await pg.emptyDatabase()
    const [one, two] = [await openSql(name), await openSql(name)]
    const claims = await Promise.all(
      Array.from({ length: 10 }, (_, i) => (i % 2 ? one : two).idempotency.claim(request('race'), T0, LIMITS)),
    )
    expect(claims.filter((claim) => claim.kind === 'claimed')).toHaveLength(1)
    expect(claims.filter((claim) => claim.kind === 'in-flight')).toHaveLength(9)
    // Kept across a restart of both: the answer is the database's.
    const claimed = claims.find((claim) => claim.kind === 'claimed')
    if (claimed?.kind === 'claimed') await insertKept(one, request('race'), claimed.claim)
    await Promise.all([one.close(), two.close()])
    const again = await openSql(name)
    expect(await again.idempotency.claim(request('race'), T0 + 1, LIMITS)).toEqual({ kind: 'replay', answer: ANSWER })
  })
})

/**
 * `store` as a process that dies the moment its first artist insert is durable: that insert never returns (no answer
 * is sent, nothing after it runs); `durable` resolves then.
 */
function diesAfterInsert(store: Store) {
  const { promise: durable, resolve } = Promise.withResolvers<void>()
  const artists: Store['artists'] = {
    ...store.artists,
    insert: async (...args) => {
      await store.artists.insert(...args)
      resolve()
      return new Promise<never>(() => {})
    },
  }
  const dying = new Proxy(store, { get: (target, name) => (name === 'artists' ? artists : Reflect.get(target, name)) })
  return { store: dying, durable }
}

/** The POST of Pappo with Idempotency-Key `key`, through `app`. */
const post = (app: ReturnType<typeof testApp>, key: string) =>
  app.call('/api/v1/artists', {
    method: 'POST',
    body: { name: 'Pappo', band: 'Pappo’s Blues' },
    headers: { ...asService, 'idempotency-key': key },
  })

/** What a retry after the crash must get: the artist the first request made, as its first answer would have said. */
async function expectReplayOfTheOnlyArtist(app: ReturnType<typeof testApp>, key: string) {
  const retry = await post(app, key)
  expect(retry.status).toBe(201)
  expect(retry.headers.get('idempotent-replayed')).toBe('true')
  const stored = await app.call('/api/v1/artists/1')
  expect(retry.text).toBe(stored.text)
  expect(retry.headers.get('location')).toBe('/api/v1/artists/1')
  expect(retry.headers.get('etag')).toBe(stored.headers.get('etag'))
  expect((await app.call('/api/v1/artists?limit=1')).json.meta.total).toBe(1)
}

describe('a keyed create whose process dies once it is durable, before it answers', () => {
  test('over a data file: the files as the crash leaves them replay the answer at once, with one artist', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'rl-idempotency-crash-'))
    const crashed = mkdtempSync(join(tmpdir(), 'rl-idempotency-crashed-'))
    try {
      const store = await openJsonFileStore(join(directory, 'db.json'))
      const dying = diesAfterInsert(store)
      void post(testApp(dying.store), 'crash')
      await dying.durable
      // What a kill -9 leaves now: the data file and its journal as they are on the disk, the answer never sent.
      for (const name of ['db.json', 'db.json.journal'])
        if (existsSync(join(directory, name))) copyFileSync(join(directory, name), join(crashed, name))
      const restarted = await openJsonFileStore(join(crashed, 'db.json'))
      await expectReplayOfTheOnlyArtist(testApp(restarted), 'crash')
      await Promise.all([restarted.close(), store.close()])
    } finally {
      rmSync(directory, { recursive: true, force: true })
      rmSync(crashed, { recursive: true, force: true })
    }
  })

  test('a commit the disk refuses keeps no answer: the retry makes the artist, once', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'rl-idempotency-refused-'))
    try {
      const disk = faultyFileSystem()
      const store = await openJsonFileStore(join(directory, 'db.json'), { fs: disk.fs })
      const app = testApp(store)
      disk.arm({ step: 'write', code: 'ENOSPC', target: 'journal' })
      expect((await post(app, 'full')).status).toBe(503)
      disk.clear()
      const made = await post(app, 'full')
      expect(made.status).toBe(201)
      expect(made.headers.get('idempotent-replayed')).toBeNull()
      await expectReplayOfTheOnlyArtist(app, 'full')
      await store.close()
      // Kept in the data file as the store closed it.
      const reopened = await openJsonFileStore(join(directory, 'db.json'))
      await expectReplayOfTheOnlyArtist(testApp(reopened), 'full')
      await reopened.close()
    } finally {
      rmSync(directory, { recursive: true, force: true })
    }
  })

  test.skipIf(skip)(
    'over PostgreSQL: another store over the database replays the answer at once, one row',
    async () => {
      const name = await pg.emptyDatabase()
      const dying = diesAfterInsert(await openSql(name))
      void post(testApp(dying.store), 'crash')
      await dying.durable
      // Another replica, while the first one is gone: no lease to wait for.
      await expectReplayOfTheOnlyArtist(testApp(await openSql(name)), 'crash')
    },
  )
})
