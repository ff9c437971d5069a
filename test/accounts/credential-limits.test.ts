import { describe, expect, test } from 'bun:test'
import { CREDENTIAL_LIMITS } from '../../src/accounts/service.ts'
import { testApp } from '../helpers.ts'
import { apiKey, bearer, CARLOS, createKey, manualClock, signedIn, writeArtist } from './helpers.ts'

const KEYS = '/api/v1/user/api-keys'
const MAX_KEYS = CREDENTIAL_LIMITS.keys.max
const MAX_TOKENS = CREDENTIAL_LIMITS.tokens.max

const login = (call: ReturnType<typeof testApp>['call']) =>
  call('/api/v1/user/login', { method: 'POST', body: { email: CARLOS.email, password: CARLOS.password } })

describe('personal API keys per account', () => {
  test(`a key past ${MAX_KEYS} is 409 saying the limit and how to free a slot; revoking one frees it`, async () => {
    const { call, store } = testApp()
    const { token, user } = await signedIn(call)
    const keys = []
    for (let i = 0; i < MAX_KEYS; i++) keys.push(await createKey(call, bearer(token), `key ${i}`))
    const refused = await call(KEYS, { method: 'POST', body: { name: 'one too many' }, headers: bearer(token) })
    expect(refused.status).toBe(409)
    expect(refused.headers.get('content-type')).toBe('application/problem+json')
    expect(refused.json).toMatchObject({ type: '/problems/conflict', status: 409 })
    expect(refused.json.detail).toContain(`${MAX_KEYS} personal API keys`)
    expect(refused.json.detail).toContain('DELETE /api/v1/user/api-keys/{id}')
    expect((await call(KEYS, { headers: bearer(token) })).json.meta.total).toBe(MAX_KEYS)
    // The keys already made keep working.
    expect((await writeArtist(call, apiKey(keys[0]?.key ?? ''))).status).toBe(201)
    await call(`${KEYS}/${keys[0]?.id}`, { method: 'DELETE', headers: bearer(token) })
    const again = await createKey(call, bearer(token), 'replacement')
    expect(again.id).toBeGreaterThan(keys[MAX_KEYS - 1]?.id ?? 0)
    // The revoked key was purged on the way: only live keys and the session remain stored.
    expect(await store.credentials.listByUser(user.id)).toHaveLength(MAX_KEYS + 1)
  })

  test('concurrent creations cannot pass the limit together', async () => {
    const { call } = testApp()
    const { token } = await signedIn(call)
    const answers = await Promise.all(
      Array.from({ length: MAX_KEYS + 20 }, (_, i) =>
        call(KEYS, { method: 'POST', body: { name: `burst ${i}` }, headers: bearer(token) }),
      ),
    )
    const statuses = answers.map((answer) => answer.status)
    expect(statuses.filter((status) => status === 201)).toHaveLength(MAX_KEYS)
    expect(statuses.filter((status) => status === 409)).toHaveLength(20)
  })

  test("one account's limit leaves another's alone, and tokens do not count against keys", async () => {
    const { call } = testApp()
    const { token } = await signedIn(call)
    for (let i = 0; i < MAX_KEYS; i++) await createKey(call, bearer(token), `key ${i}`)
    const maria = await signedIn(call, { name: 'Maria', email: 'maria@rock-legends.com', password: 'rock-n-roll' })
    expect((await createKey(call, bearer(maria.token))).name).toBe('CI')
    expect((await login(call)).status).toBe(200)
  })
})

describe('bearer tokens per account', () => {
  test(`a login past ${MAX_TOKENS} live tokens revokes the oldest: logins keep working`, async () => {
    const { call, store } = testApp()
    const { token: first, user } = await signedIn(call)
    const tokens = [first]
    // One after another: logins in flight count as failures until they succeed, and would be throttled.
    while (tokens.length < MAX_TOKENS) {
      const answer = await login(call)
      expect(answer.status).toBe(200)
      tokens.push(answer.json.token)
    }
    expect(tokens).toHaveLength(MAX_TOKENS)
    expect((await call('/api/v1/user/me', { headers: bearer(first) })).status).toBe(200)
    const newest = await login(call)
    expect(newest.status).toBe(200)
    expect((await call('/api/v1/user/me', { headers: bearer(newest.json.token) })).status).toBe(200)
    // The oldest session ended, with the 401 of any revoked token; the second oldest still works.
    const ended = await call('/api/v1/user/me', { headers: bearer(first) })
    expect(ended.status).toBe(401)
    expect(ended.json.detail).toBe('The credentials are not valid: unknown, expired or revoked.')
    expect((await call('/api/v1/user/me', { headers: bearer(tokens[1] ?? '') })).status).toBe(200)
    const live = (await store.credentials.listByUser(user.id)).filter((credential) => credential.revokedAt === null)
    expect(live).toHaveLength(MAX_TOKENS)
  }, 60_000)

  test('expired and logged-out tokens do not count: they are purged at the next login', async () => {
    const clock = manualClock()
    const { call, store } = testApp(undefined, { now: clock.now })
    const { token, user } = await signedIn(call)
    await call('/api/v1/user/logout', { method: 'POST', headers: bearer(token) })
    const second = (await login(call)).json.token
    clock.advance(24 * 3_600_000)
    expect((await call('/api/v1/user/me', { headers: bearer(second) })).status).toBe(401)
    const third = (await login(call)).json.token
    const stored = await store.credentials.listByUser(user.id)
    expect(stored.map((credential) => credential.prefix)).toEqual([third.slice(0, 11)])
    for (const gone of [token, second])
      expect((await call('/api/v1/user/me', { headers: bearer(gone) })).status).toBe(401)
    expect((await call('/api/v1/user/me', { headers: bearer(third) })).status).toBe(200)
  })
})
