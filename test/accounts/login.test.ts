import { describe, expect, test } from 'bun:test'
import { Accounts } from '../../src/accounts/service.ts'
import { createApp } from '../../src/app.ts'
import { argon2id, type PasswordHasher } from '../../src/auth/password.ts'
import { domainProblem } from '../../src/http/domain-problem.ts'
import type { Problem } from '../../src/http/problem.ts'
import { UnauthenticatedError } from '../../src/model/errors.ts'
import { openMemoryStore } from '../../src/store/document/memory.ts'
import { testApp } from '../helpers.ts'
import { bearer, CARLOS, type Call, manualClock, signedIn } from './helpers.ts'

const LOGIN = '/api/v1/user/login'
const DAY = 86_400_000

const logIn = (call: Call, email: string, password: string) =>
  call(LOGIN, { method: 'POST', body: { email, password } })

describe('POST /api/v1/user/login', () => {
  test('answers the user, a bearer token and its expiry (24 hours by default)', async () => {
    const clock = manualClock('2025-06-01T12:00:00Z')
    const { call } = testApp(undefined, { now: clock.now })
    await call('/api/v1/user/signup', { method: 'POST', body: CARLOS })
    const { status, json } = await logIn(call, ' CARLOS@rock-legends.com ', CARLOS.password)
    expect(status).toBe(200)
    expect(json).toEqual({
      user: { id: 1, name: 'Carlos', email: 'carlos@rock-legends.com' },
      token: expect.stringMatching(/^rl_tok_[0-9A-Za-z]{32}$/),
      token_type: 'Bearer',
      expires_at: '2025-06-02T12:00:00.000Z',
    })
  })

  test('takes the token lifetime from the tokenTtlMs option', async () => {
    const clock = manualClock('2025-06-01T12:00:00Z')
    const app = createApp({ store: openMemoryStore(), now: clock.now, tokenTtlMs: 30 * 60_000 })
    const post = (path: string, body: unknown) =>
      app.handle(
        new Request(`http://localhost${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        }),
      )
    await post('/api/v1/user/signup', CARLOS)
    const login = await post(LOGIN, { email: CARLOS.email, password: CARLOS.password })
    const session = (await login.json()) as { token: string; expires_at: string }
    expect(session.expires_at).toBe('2025-06-01T12:30:00.000Z')
    const me = () => app.handle(new Request('http://localhost/api/v1/user/me', { headers: bearer(session.token) }))
    clock.advance(30 * 60_000 - 1)
    expect((await me()).status).toBe(200)
    clock.advance(1)
    expect((await me()).status).toBe(401)
  })

  test('gives an unknown email and a wrong password the same 401', async () => {
    const { call } = testApp()
    await call('/api/v1/user/signup', { method: 'POST', body: CARLOS })
    const wrongPassword = await logIn(call, CARLOS.email, 'not-the-password')
    const unknownEmail = await logIn(call, 'nobody@rock-legends.com', CARLOS.password)
    for (const answer of [wrongPassword, unknownEmail]) {
      expect(answer.status).toBe(401)
      expect(answer.headers.get('content-type')).toBe('application/problem+json')
      expect(answer.headers.get('www-authenticate')).toBe('Bearer realm="rock-legends"')
    }
    expect(unknownEmail.text).toBe(wrongPassword.text)
    expect(wrongPassword.json).toMatchObject({ type: '/problems/unauthorized', status: 401 })
  })

  test('verifies with argon2 on both failure paths: the unknown email against a dummy hash of the same cost', async () => {
    const verified: string[] = []
    const hashes: string[] = []
    const watched: PasswordHasher = {
      hash: async (password) => {
        const hashed = await argon2id.hash(password)
        hashes.push(hashed)
        return hashed
      },
      verify: (hashed, password) => {
        verified.push(hashed)
        return argon2id.verify(hashed, password)
      },
    }
    const store = openMemoryStore()
    const accounts = new Accounts(store, { now: () => new Date(), tokenTtlMs: DAY, passwords: watched })
    await accounts.signUp(CARLOS, 'test')
    const failure = (email: string) =>
      accounts.logIn({ email, password: 'not-the-password' }, 'test').then(
        () => undefined,
        (error: unknown) => error,
      )
    const wrongPassword = await failure(CARLOS.email)
    const unknownEmail = await failure('nobody@rock-legends.com')
    const again = await failure('somebody@rock-legends.com')
    for (const error of [wrongPassword, unknownEmail, again]) expect(error).toBeInstanceOf(UnauthenticatedError)
    const answer = (error: unknown) => (domainProblem(error as UnauthenticatedError) as Problem).toResponse().text()
    expect(await answer(unknownEmail)).toBe(await answer(wrongPassword))
    // One verify per login; the real user's hash, then the dummy twice (made once, on the first login).
    const userHash = (await store.users.findByEmail(CARLOS.email))?.passwordHash
    const [dummy] = hashes.filter((hashed) => hashed !== userHash)
    expect(hashes).toHaveLength(2)
    expect(verified).toEqual([userHash as string, dummy as string, dummy as string])
    // Same algorithm and parameters, so the same work: only the salt and digest differ.
    const parameters = (hashed: string) => hashed.split('$').slice(0, 4).join('$')
    expect(parameters(dummy as string)).toBe(parameters(userHash as string))
    expect(parameters(userHash as string)).toBe('$argon2id$v=19$m=19456,t=2,p=1')
  })

  test.each([
    ['a bad email', { email: 'not-an-email', password: 'whatever1' }, '/email'],
    ['a missing password', { email: CARLOS.email }, '/password'],
    ['an empty password', { email: CARLOS.email, password: '' }, '/password'],
    ['a password over 1,024 characters', { email: CARLOS.email, password: 'p'.repeat(1025) }, '/password'],
    ['an unknown property', { email: CARLOS.email, password: 'whatever1', remember: true }, '/remember'],
  ])('rejects %s with 400', async (_, body, pointer) => {
    const { call } = testApp()
    const { status, json } = await call(LOGIN, { method: 'POST', body })
    expect(status).toBe(400)
    expect(json.errors).toContainEqual({ pointer, detail: expect.any(String) })
  })

  test('expires tokens after their lifetime (injected clock)', async () => {
    const clock = manualClock()
    const { call } = testApp(undefined, { now: clock.now })
    const { token } = await signedIn(call)
    clock.advance(DAY - 1000)
    expect((await call('/api/v1/user/me', { headers: bearer(token) })).status).toBe(200)
    clock.advance(1000)
    const expired = await call('/api/v1/user/me', { headers: bearer(token) })
    expect(expired.status).toBe(401)
    expect(expired.json.type).toBe('/problems/unauthorized')
  })

  test('each login issues a new token; the old one keeps working', async () => {
    const { call } = testApp()
    const first = await signedIn(call)
    const second = await logIn(call, CARLOS.email, CARLOS.password)
    expect(second.json.token).not.toBe(first.token)
    for (const token of [first.token, second.json.token])
      expect((await call('/api/v1/user/me', { headers: bearer(token) })).status).toBe(200)
  })
})

describe('GET /api/v1/user/me and POST /api/v1/user/logout', () => {
  test('me is the caller, without the password hash', async () => {
    const { call } = testApp()
    const { token } = await signedIn(call)
    const { status, json } = await call('/api/v1/user/me', { headers: bearer(token) })
    expect(status).toBe(200)
    expect(json).toEqual({ id: 1, name: 'Carlos', email: 'carlos@rock-legends.com' })
  })

  test('logout revokes the presented token, and only that one', async () => {
    const { call } = testApp()
    const { token } = await signedIn(call)
    const other = (await logIn(call, CARLOS.email, CARLOS.password)).json.token
    const out = await call('/api/v1/user/logout', { method: 'POST', headers: bearer(token) })
    expect(out.status).toBe(204)
    expect(out.text).toBe('')
    expect((await call('/api/v1/user/me', { headers: bearer(token) })).status).toBe(401)
    expect((await call('/api/v1/user/logout', { method: 'POST', headers: bearer(token) })).status).toBe(401)
    expect((await call('/api/v1/user/me', { headers: bearer(other) })).status).toBe(200)
  })

  test.each([
    ['no credentials', {}],
    ['an unknown token', bearer('rl_tok_00000000000000000000000000000000')],
    ['a malformed header', { authorization: 'Basic Y2FybG9zOnJvY2s=' }],
  ])('me and logout answer 401 to %s', async (_, headers) => {
    const { call } = testApp()
    for (const [method, path] of [
      ['GET', '/api/v1/user/me'],
      ['POST', '/api/v1/user/logout'],
    ] as const) {
      const { status, headers: answer } = await call(path, { method, headers })
      expect(status).toBe(401)
      expect(answer.get('www-authenticate')).toBe('Bearer realm="rock-legends"')
    }
  })
})
