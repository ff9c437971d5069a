/**
 * `Idempotency-Key` on the creates (src/http/idempotency.ts), through the whole app: a retry gets the first answer
 * again without a second write; another body with the key is 422; a key whose first request is still running is 409;
 * keys are per account; answers expire after 24 hours; the answers kept are bounded. Runs over the memory store and,
 * in `bun run test:sql`, over PostgreSQL.
 */
import { describe, expect, test } from 'bun:test'
import { IDEMPOTENCY_LIMITS } from '../../src/store/idempotency.ts'
import type { Store } from '../../src/store/store.ts'
import { bearer, CARLOS, manualClock, signedIn } from '../accounts/helpers.ts'
import { asService, testApp } from '../helpers.ts'
import { testStore } from '../support/backends.ts'

const ARTISTS = '/api/v1/artists'
const keyed = (key: string, headers: Record<string, string> = asService) => ({ ...headers, 'idempotency-key': key })
const create = (
  call: ReturnType<typeof testApp>['call'],
  key: string,
  body: object = { name: 'Pappo' },
  headers: Record<string, string> = asService,
) => call(ARTISTS, { method: 'POST', body, headers: keyed(key, headers) })
const total = async (call: ReturnType<typeof testApp>['call']) => (await call(`${ARTISTS}?limit=1`)).json.meta.total

/**
 * `store` with its artist inserts held until `open()` is called: a create that stays in flight as long as a test
 * needs, over the real store.
 */
function gated(store: Store) {
  const { promise, resolve } = Promise.withResolvers<void>()
  // Resolved once the first insert is held at the gate: its request has claimed its key by then.
  const held = Promise.withResolvers<void>()
  const artists = {
    ...store.artists,
    insert: async (...args: Parameters<Store['artists']['insert']>) => {
      held.resolve()
      await promise
      return store.artists.insert(...args)
    },
  }
  const proxy = new Proxy(store, { get: (target, name) => (name === 'artists' ? artists : Reflect.get(target, name)) })
  return { store: proxy, open: () => resolve(), held: held.promise }
}

describe('Idempotency-Key on creates', () => {
  test('a retry gets the first answer again, status, headers and body, marked as replayed; one artist is added', async () => {
    const { call } = testApp()
    const first = await create(call, 'retry-1')
    expect(first.status).toBe(201)
    expect(first.headers.get('idempotent-replayed')).toBeNull()
    const again = await create(call, 'retry-1')
    expect(again.status).toBe(201)
    expect(again.text).toBe(first.text)
    for (const name of ['location', 'etag', 'content-type'])
      expect(again.headers.get(name)).toBe(first.headers.get(name))
    expect(again.headers.get('idempotent-replayed')).toBe('true')
    expect(await total(call)).toBe(1)
    // The key quoted as a structured-field string (as the draft writes it) is the same key.
    expect((await create(call, '"retry-1"')).headers.get('idempotent-replayed')).toBe('true')
    // Without a key, the same body is a new artist, as always.
    expect((await call(ARTISTS, { method: 'POST', body: { name: 'Pappo' }, headers: asService })).json.id).toBe(2)
  })

  test('an album added twice with one key is added once', async () => {
    const { call } = testApp()
    await create(call, 'artist')
    const album = () =>
      call(`${ARTISTS}/1/albums`, {
        method: 'POST',
        body: { name: 'Pappo’s Blues', year: 1971 },
        headers: keyed('album'),
      })
    const first = await album()
    const again = await album()
    expect([first.status, again.status]).toEqual([201, 201])
    expect(again.json).toEqual(first.json)
    expect(again.headers.get('location')).toBe(first.headers.get('location'))
    expect((await call(`${ARTISTS}/1/albums`)).json.meta.total).toBe(1)
  })

  test('an album added on a condition of its artist and with a key is added once, and replayed', async () => {
    const { call } = testApp()
    const artist = await create(call, 'artist')
    const etag = artist.headers.get('etag') as string
    const album = () =>
      call(`${ARTISTS}/1/albums`, {
        method: 'POST',
        body: { name: 'Pappo’s Blues', year: 1971 },
        headers: { ...keyed('conditional-album'), 'if-match': etag },
      })
    const first = await album()
    const again = await album()
    expect([first.status, again.status]).toEqual([201, 201])
    expect(again.headers.get('idempotent-replayed')).toBe('true')
    expect(again.text).toBe(first.text)
    expect((await call(`${ARTISTS}/1/albums`)).json.meta.total).toBe(1)
    // A condition that does not hold refuses the create, and frees its key for the corrected request.
    const stale = await call(`${ARTISTS}/1/albums`, {
      method: 'POST',
      body: { name: 'Vol. 2' },
      headers: { ...keyed('stale'), 'if-match': '"not-the-artist"' },
    })
    expect(stale.status).toBe(412)
    const corrected = await call(`${ARTISTS}/1/albums`, {
      method: 'POST',
      body: { name: 'Vol. 2' },
      headers: { ...keyed('stale'), 'if-match': etag },
    })
    expect(corrected.status).toBe(201)
    expect(corrected.headers.get('idempotent-replayed')).toBeNull()
  })

  test('the same key with another body, or on another path, is 422 and writes nothing', async () => {
    const { call } = testApp()
    await create(call, 'k')
    const other = await create(call, 'k', { name: 'Spinetta' })
    expect(other.status).toBe(422)
    expect(other.headers.get('content-type')).toBe('application/problem+json')
    expect(other.json).toMatchObject({ type: '/problems/idempotency-key-reused', status: 422 })
    expect(other.json.detail).toContain('"k"')
    const elsewhere = await call(`${ARTISTS}/1/albums`, {
      method: 'POST',
      body: { name: 'Pappo' },
      headers: keyed('k'),
    })
    expect(elsewhere.status).toBe(422)
    expect(await total(call)).toBe(1)
    expect((await call(`${ARTISTS}/1/albums`)).json.meta.total).toBe(0)
  })

  test('a retry while the first request is still being processed is 409 with Retry-After, then gets its answer', async () => {
    const { store, open, held } = gated(testStore())
    const { call } = testApp(store)
    const first = create(call, 'slow')
    // The claim comes before the insert: once the first is held at the gate, the key is its.
    await held
    const during = await create(call, 'slow')
    expect(during.status).toBe(409)
    expect(during.json).toMatchObject({ type: '/problems/idempotency-key-in-use', status: 409 })
    expect(during.headers.get('retry-after')).toBe('1')
    open()
    expect((await first).status).toBe(201)
    const after = await create(call, 'slow')
    expect(after.headers.get('idempotent-replayed')).toBe('true')
    expect(await total(call)).toBe(1)
  })

  test('keys are per account: the same key from another account is its own request, never the first answer', async () => {
    const { call } = testApp()
    const { token } = await signedIn(call)
    const { token: other } = await signedIn(call, { ...CARLOS, email: 'luis@rock-legends.com' })
    const mine = await create(call, 'shared', { name: 'Pappo' }, bearer(token))
    const theirs = await create(call, 'shared', { name: 'Pappo' }, bearer(other))
    const service = await create(call, 'shared', { name: 'Pappo' })
    expect([mine.json.id, theirs.json.id, service.json.id]).toEqual([1, 2, 3])
    expect(theirs.headers.get('idempotent-replayed')).toBeNull()
    // The account's key holds whichever of its credentials retries: a new login finds it.
    const relogin = await call('/api/v1/user/login', {
      method: 'POST',
      body: { email: CARLOS.email, password: CARLOS.password },
    })
    const retried = await create(call, 'shared', { name: 'Pappo' }, bearer(relogin.json.token))
    expect(retried.json.id).toBe(1)
    expect(retried.headers.get('idempotent-replayed')).toBe('true')
  })

  test('an answer is replayed for 24 hours, then the key is free again', async () => {
    const clock = manualClock()
    const { call } = testApp(testStore(), { now: clock.now })
    await create(call, 'day')
    clock.advance(IDEMPOTENCY_LIMITS.ttlMs - 1)
    expect((await create(call, 'day')).headers.get('idempotent-replayed')).toBe('true')
    clock.advance(2)
    const later = await create(call, 'day')
    expect(later.headers.get('idempotent-replayed')).toBeNull()
    expect(later.json.id).toBe(2)
  })

  test('a refused create keeps nothing: the same key works once the request can succeed', async () => {
    const { call, store } = testApp()
    const album = () =>
      call(`${ARTISTS}/1/albums`, { method: 'POST', body: { name: 'Artaud' }, headers: keyed('after-404') })
    expect((await album()).status).toBe(404)
    await store.load([{ name: 'Spinetta', image: null, albums: [] }])
    const created = await album()
    expect(created.status).toBe(201)
    expect(created.headers.get('idempotent-replayed')).toBeNull()
  })

  test.each([
    ['empty', ''],
    ['too long', 'k'.repeat(256)],
    ['not ASCII', 'clé'],
    ['a control character', 'a\tb'],
  ])('a key that is %s is 400 naming the header', async (_, key) => {
    const { call } = testApp()
    const refused = await create(call, key)
    expect(refused.status).toBe(400)
    expect(refused.json.errors).toEqual([{ parameter: 'Idempotency-Key', detail: expect.stringContaining('1–255') }])
    expect(await total(call)).toBe(0)
  })

  test('bounded: past an account’s bytes a new key is 429, past everyone’s 503; kept keys and keyless creates work', async () => {
    const limits = { ...IDEMPOTENCY_LIMITS, bytesPerScope: 2000, bytesInAll: 3000 }
    const { call } = testApp(testStore(), { idempotency: limits })
    const { token } = await signedIn(call)
    let status = 201
    let keys = 0
    while (status === 201) status = (await create(call, `k${keys++}`)).status
    const full = await create(call, 'one-more')
    expect(full.status).toBe(429)
    expect(full.json).toMatchObject({ type: '/problems/idempotency-keys-exhausted', status: 429 })
    expect(Number(full.headers.get('retry-after'))).toBeGreaterThan(86_000)
    expect((await create(call, 'k0')).headers.get('idempotent-replayed')).toBe('true')
    expect((await call(ARTISTS, { method: 'POST', body: { name: 'No key' }, headers: asService })).status).toBe(201)
    // Another account has room of its own until all of them together are full.
    let mine = 201
    while (mine === 201) mine = (await create(call, `u${keys++}`, { name: 'Mine' }, bearer(token))).status
    expect(mine).toBe(503)
    const everyone = await create(call, 'u-more', { name: 'Mine' }, bearer(token))
    expect(everyone.json).toMatchObject({ type: '/problems/idempotency-keys-full', status: 503 })
    expect(everyone.headers.get('retry-after')).not.toBeNull()
  })
})
