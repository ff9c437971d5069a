/**
 * The store's idempotency keys (src/store/idempotency.ts), the same script played on the document store and on the
 * SQL store: claims, replays, mismatches, claims in flight, expiry, lease takeover and the bounds in bytes; then what
 * each keeps across a restart, and one claim of many made at once through two SQL stores over one database.
 */
import { afterEach, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { readDataFile } from '../../src/ops/read-data-file.ts'
import { openMemoryStore } from '../../src/store/document/memory.ts'
import { entryBytes, type IdempotencyLimits, type KeyedRequest } from '../../src/store/idempotency.ts'
import { openJsonFileStore } from '../../src/store/json-file/json-file.ts'
import { openSqlStore, type SqlStore } from '../../src/store/sql/sql-store.ts'
import type { Store } from '../../src/store/store.ts'
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

/** Claims `key` for `request` and keeps `answer` for it at `now`. */
async function answered(store: Store, keyed: KeyedRequest, now = T0) {
  const claim = await store.idempotency.claim(keyed, now, LIMITS)
  if (claim.kind !== 'claimed') throw new Error(`expected a claim, got ${claim.kind}`)
  await store.idempotency.complete(keyed, claim.claim, ANSWER, now, LIMITS)
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
  await store.idempotency.complete(request('k1'), first.claim, ANSWER, T0, LIMITS)
  seen.push(await claim(request('k1')), await claim(request('k1', { fingerprint: 'other' })))
  // The same key in another scope is another key: one client never sees another's answer.
  seen.push((await claim(request('k1', { scope: 'user:2' }))).kind)
  // Answered a day ago: expired, so free again.
  seen.push((await claim(request('k1'), T0 + LIMITS.ttlMs + 1)).kind)
  // A claim never answered holds for its lease, then another request takes it; the first one's answer is then lost.
  const stale = await claim(request('k2'))
  seen.push((await claim(request('k2'), T0 + LIMITS.leaseMs - 1)).kind)
  const taker = await claim(request('k2'), T0 + LIMITS.leaseMs + 1)
  seen.push(taker.kind)
  if (stale.kind === 'claimed')
    await store.idempotency.complete(request('k2'), stale.claim, ANSWER, T0 + LIMITS.leaseMs + 2, LIMITS)
  seen.push((await claim(request('k2'), T0 + LIMITS.leaseMs + 3)).kind)
  // A released key is free at once.
  const released = await claim(request('k3'))
  if (released.kind === 'claimed') await store.idempotency.release(request('k3'), released.claim)
  seen.push((await claim(request('k3'))).kind)
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
  'in-flight',
  'claimed',
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

describe('idempotency keys in the document store', () => {
  test('claims, replays, mismatches, claims in flight, expiry and lease', async () => {
    expect(await script(openMemoryStore())).toEqual(EXPECTED)
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
    if (claimed?.kind === 'claimed') await one.idempotency.complete(request('race'), claimed.claim, ANSWER, T0, LIMITS)
    await Promise.all([one.close(), two.close()])
    const again = await openSql(name)
    expect(await again.idempotency.claim(request('race'), T0 + 1, LIMITS)).toEqual({ kind: 'replay', answer: ANSWER })
  })
})
