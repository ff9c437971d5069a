import { describe, expect, test } from 'bun:test'
import { asService, testApp } from '../helpers.ts'
import { apiKey, bearer, CARLOS, type Call, createKey, signedIn } from './helpers.ts'

// The operator's account routes (`/__admin/users…`, what `rock-legends users` calls on a running server) and what a
// disabled account can still do: nothing. Runs over memory and, in `bun run test:sql`, over PostgreSQL.

const admin = (call: Call, action: 'disable' | 'enable', email = CARLOS.email) =>
  call(`/__admin/users/${action}`, { method: 'POST', body: { email }, headers: asService })

const login = (call: Call, password = CARLOS.password) =>
  call('/api/v1/user/login', { method: 'POST', body: { email: CARLOS.email, password } })

const me = (call: Call, headers: Record<string, string>) => call('/api/v1/user/me', { headers })

const write = (call: Call, headers: Record<string, string>) =>
  call('/api/v1/artists', { method: 'POST', body: { name: 'Pappo' }, headers })

describe('a disabled account', () => {
  test('its token and personal key get 401 at the next request; enabling brings both back', async () => {
    const { call } = testApp()
    const { token } = await signedIn(call)
    const { key } = await createKey(call, bearer(token))
    expect((await me(call, bearer(token))).status).toBe(200)

    const disabled = await admin(call, 'disable')
    expect(disabled.status).toBe(200)
    expect(disabled.json).toMatchObject({ changed: true, user: { email: CARLOS.email } })
    expect(disabled.json.user.disabled_at).toBeString()
    expect((await me(call, bearer(token))).status).toBe(401)
    expect((await write(call, apiKey(key))).status).toBe(401)
    expect((await me(call, apiKey(key))).headers.get('www-authenticate')).toBe('Bearer realm="rock-legends"')

    const enabled = await admin(call, 'enable')
    expect(enabled.json).toMatchObject({ changed: true })
    expect(enabled.json.user.disabled_at).toBeUndefined()
    expect((await me(call, bearer(token))).status).toBe(200)
    expect((await write(call, apiKey(key))).status).toBe(201)
  })

  test('cannot log in: the right password gets 403 account-disabled, a wrong one the usual 401', async () => {
    const { call } = testApp()
    await signedIn(call)
    await admin(call, 'disable')
    const right = await login(call)
    expect(right.status).toBe(403)
    expect(right.json).toMatchObject({ type: '/problems/account-disabled', status: 403 })
    expect(right.json.token).toBeUndefined()
    const wrong = await login(call, 'not-the-password')
    expect(wrong.status).toBe(401)
    expect(wrong.json.detail).toBe('The email or password is not correct.')
    await admin(call, 'enable')
    expect((await login(call)).status).toBe(200)
  })

  test('disable and enable are idempotent: a second call changes nothing and says so', async () => {
    const { call } = testApp()
    await signedIn(call)
    const first = await admin(call, 'disable')
    const second = await admin(call, 'disable')
    expect(second.status).toBe(200)
    expect(second.json).toMatchObject({ changed: false })
    // The account keeps the time it was first disabled.
    expect(second.json.user.disabled_at).toBe(first.json.user.disabled_at)
    expect((await admin(call, 'enable')).json.changed).toBe(true)
    expect((await admin(call, 'enable')).json.changed).toBe(false)
  })

  test('an unknown email is 404', async () => {
    const { call } = testApp()
    const answer = await admin(call, 'disable', 'nobody@rock-legends.com')
    expect(answer.status).toBe(404)
    expect(answer.json.detail).toContain('nobody@rock-legends.com')
  })
})

describe('reset-password', () => {
  test('sets the new password and revokes every live bearer token; personal keys keep working', async () => {
    const { call } = testApp()
    const { token } = await signedIn(call)
    const second = (await login(call)).json.token as string
    const { key } = await createKey(call, bearer(token))
    const reset = await call('/__admin/users/reset-password', {
      method: 'POST',
      body: { email: CARLOS.email, password: 'a-new-password' },
      headers: asService,
    })
    expect(reset.status).toBe(200)
    expect(reset.json).toMatchObject({ revoked_tokens: 2, user: { email: CARLOS.email } })
    for (const old of [token, second]) expect((await me(call, bearer(old))).status).toBe(401)
    expect((await me(call, apiKey(key))).status).toBe(200)
    expect((await login(call)).status).toBe(401)
    expect((await login(call, 'a-new-password')).status).toBe(200)
  })

  test('refuses a password the sign-up rules refuse', async () => {
    const { call } = testApp()
    await signedIn(call)
    const reset = await call('/__admin/users/reset-password', {
      method: 'POST',
      body: { email: CARLOS.email, password: 'short' },
      headers: asService,
    })
    expect(reset.status).toBe(400)
  })
})

describe('the operator routes /__admin/users', () => {
  test('list and add: every account with its state, new ones with the sign-up rules', async () => {
    const { call } = testApp()
    await signedIn(call)
    const added = await call('/__admin/users', {
      method: 'POST',
      body: { name: 'María', email: ' Maria@Rock-Legends.com ', password: 'rock-n-roll' },
      headers: asService,
    })
    expect(added.status).toBe(201)
    expect(added.json).toMatchObject({ id: 2, name: 'María', email: 'maria@rock-legends.com' })
    expect(added.json.passwordHash).toBeUndefined()
    await admin(call, 'disable')
    const list = await call('/__admin/users?limit=1', { headers: asService })
    expect(list.status).toBe(200)
    expect(list.json.meta).toEqual({ limit: 1, offset: 0, total: 2, next: '/__admin/users?limit=1&offset=1' })
    expect(list.json.data).toHaveLength(1)
    expect(list.json.data[0]).toMatchObject({ id: 1, email: CARLOS.email })
    expect(list.json.data[0].disabled_at).toBeString()
    expect(JSON.stringify(list.json)).not.toContain('argon2')
    // The new account logs in, with sign-up rules applied (and taken emails refused, look-alikes included).
    expect(
      (
        await call('/api/v1/user/login', {
          method: 'POST',
          body: { email: 'maria@rock-legends.com', password: 'rock-n-roll' },
        })
      ).status,
    ).toBe(200)
    const taken = await call('/__admin/users', {
      method: 'POST',
      body: { name: 'C', email: 'ＣＡＲＬＯＳ@rock-legends.com', password: 'rock-n-roll' },
      headers: asService,
    })
    expect(taken.status).toBe(409)
    const invalid = await call('/__admin/users', {
      method: 'POST',
      body: { name: 'C', email: 'not-an-email', password: 'rock-n-roll' },
      headers: asService,
    })
    expect(invalid.status).toBe(400)
  })

  const ROUTES = [
    ['GET', '/__admin/users', undefined],
    ['POST', '/__admin/users', { name: 'X', email: 'x@rock-legends.com', password: 'rock-n-roll' }],
    ['POST', '/__admin/users/disable', { email: CARLOS.email }],
    ['POST', '/__admin/users/enable', { email: CARLOS.email }],
    ['POST', '/__admin/users/reset-password', { email: CARLOS.email, password: 'rock-n-roll' }],
  ] as const

  test.each(ROUTES)('%s %s: 401 anonymous, 403 with a user token or personal key', async (method, path, body) => {
    const { call } = testApp()
    const { token } = await signedIn(call)
    const { key } = await createKey(call, bearer(token))
    const anonymous = await call(path, { method, body })
    expect(anonymous.status).toBe(401)
    for (const headers of [bearer(token), apiKey(key)]) {
      const answer = await call(path, { method, body, headers })
      expect(answer.status).toBe(403)
      expect(answer.json.type).toBe('/problems/credential-not-allowed')
    }
    // Nothing was changed by the refused calls.
    expect((await me(call, bearer(token))).status).toBe(200)
    expect((await call('/__admin/users', { headers: asService })).json.meta.total).toBe(1)
  })

  test('are not in the public OpenAPI document', async () => {
    const { call } = testApp()
    expect((await call('/openapi.json')).text).not.toContain('/__admin/users')
  })
})
