import { describe, expect, test } from 'bun:test'
import { testApp } from '../helpers.ts'
import { apiKey, bearer, createKey, manualClock, signedIn, writeArtist } from './helpers.ts'

const UNAUTHORIZED = {
  type: '/problems/unauthorized',
  title: 'Credentials are missing or not valid',
  status: 401,
  detail: 'The credentials are not valid: unknown, expired or revoked.',
}

describe('writes with user credentials', () => {
  test('a bearer token from login may write', async () => {
    const { call } = testApp()
    const { token } = await signedIn(call)
    const { status, json } = await writeArtist(call, bearer(token))
    expect(status).toBe(201)
    expect(json.name).toBe('X')
  })

  test('a personal key may write, and the use is recorded', async () => {
    const clock = manualClock('2025-06-01T12:00:00Z')
    const { call, store } = testApp(undefined, { now: clock.now })
    const { token } = await signedIn(call)
    const { id, key } = await createKey(call, bearer(token))
    clock.advance(5000)
    expect((await writeArtist(call, apiKey(key))).status).toBe(201)
    const record = (await store.credentials.listByUser(1)).find((credential) => credential.id === id)
    expect(record?.lastUsedAt).toBe('2025-06-01T12:00:05.000Z')
  })

  // Every way a credential can be wrong gets the very same answer, so a caller cannot tell them apart.
  test.each([
    ['after the key is revoked', 'revoked key'],
    ['after logout', 'logged out'],
    ['after the token expired', 'expired'],
    ['with a token sent as X-API-Key', 'token as key'],
    ['with a revoked key sent as Bearer', 'revoked key as bearer'],
    ['with an unknown token', 'unknown'],
    ['with a truncated token', 'truncated'],
  ])('answers the same 401 %s', async (_, case_) => {
    const clock = manualClock()
    const { call } = testApp(undefined, { now: clock.now })
    const { token } = await signedIn(call)
    const { id, key } = await createKey(call, bearer(token))
    let headers: Record<string, string>
    switch (case_) {
      case 'revoked key':
        await call(`/api/v1/user/api-keys/${id}`, { method: 'DELETE', headers: bearer(token) })
        headers = apiKey(key)
        break
      case 'logged out':
        await call('/api/v1/user/logout', { method: 'POST', headers: bearer(token) })
        headers = bearer(token)
        break
      case 'expired':
        clock.advance(86_400_000)
        headers = bearer(token)
        break
      case 'token as key':
        headers = apiKey(token)
        break
      case 'revoked key as bearer':
        await call(`/api/v1/user/api-keys/${id}`, { method: 'DELETE', headers: bearer(token) })
        headers = bearer(key)
        break
      case 'unknown':
        headers = bearer(`rl_tok_${'A'.repeat(32)}`)
        break
      default:
        headers = bearer(token.slice(0, -1))
    }
    const { status, json, headers: answer } = await writeArtist(call, headers)
    expect(status).toBe(401)
    expect(answer.get('www-authenticate')).toBe('Bearer realm="rock-legends"')
    expect(json).toEqual(UNAUTHORIZED)
  })

  test('a personal key may also be sent as a bearer token (DESIGN.md), and Authorization decides when both are sent', async () => {
    const { call } = testApp()
    const { token } = await signedIn(call)
    const { key } = await createKey(call, bearer(token))
    expect((await writeArtist(call, bearer(key))).status).toBe(201)
    // A generated client that sends the key both ways.
    expect((await writeArtist(call, { ...bearer(key), ...apiKey(key) })).status).toBe(201)
    // Authorization decides: a good key does not rescue a bad bearer, and a bad key does not spoil a good one.
    expect((await writeArtist(call, { ...bearer('rl_key_nope'), ...apiKey(key) })).status).toBe(401)
    expect((await writeArtist(call, { ...bearer(key), ...apiKey('rl_key_nope') })).status).toBe(201)
    // A token is a bearer token only.
    expect((await writeArtist(call, apiKey(token))).status).toBe(401)
  })

  test('revoking a key leaves the token and other keys working', async () => {
    const { call } = testApp()
    const { token } = await signedIn(call)
    const first = await createKey(call, bearer(token), 'first')
    const second = await createKey(call, bearer(token), 'second')
    await call(`/api/v1/user/api-keys/${first.id}`, { method: 'DELETE', headers: bearer(token) })
    expect((await writeArtist(call, apiKey(first.key))).status).toBe(401)
    expect((await writeArtist(call, apiKey(second.key))).status).toBe(201)
    expect((await writeArtist(call, bearer(token))).status).toBe(201)
  })

  test('personal keys do not expire with the token that created them', async () => {
    const clock = manualClock()
    const { call } = testApp(undefined, { now: clock.now })
    const { token } = await signedIn(call)
    const { key } = await createKey(call, bearer(token))
    clock.advance(400 * 86_400_000)
    expect((await writeArtist(call, bearer(token))).status).toBe(401)
    expect((await writeArtist(call, apiKey(key))).status).toBe(201)
  })
})
