import { describe, expect, test } from 'bun:test'
import { ACCOUNT_LIMITS } from '../../src/accounts/service.ts'
import { testApp } from '../helpers.ts'
import { CARLOS, manualClock } from './helpers.ts'

const SIGNUP = '/api/v1/user/signup'

describe('POST /api/v1/user/signup', () => {
  test('creates the user: 201, Location, and never the password', async () => {
    const { call } = testApp()
    const { status, json, headers, text } = await call(SIGNUP, { method: 'POST', body: CARLOS })
    expect(status).toBe(201)
    expect(headers.get('location')).toBe('/api/v1/user/me')
    expect(json).toEqual({ id: 1, name: 'Carlos', email: 'carlos@rock-legends.com' })
    expect(text).not.toContain(CARLOS.password)
  })

  test('trims the name and trims and lower-cases the email', async () => {
    const { call, store } = testApp()
    const body = { name: '  Carlos  ', email: '  Carlos@Rock-Legends.COM \n', password: CARLOS.password }
    const { status, json } = await call(SIGNUP, { method: 'POST', body })
    expect(status).toBe(201)
    expect(json).toMatchObject({ name: 'Carlos', email: 'carlos@rock-legends.com' })
    expect((await store.users.findByEmail('carlos@rock-legends.com'))?.passwordHash).toStartWith('$argon2id$')
  })

  test.each([
    ['a missing name', { email: CARLOS.email, password: CARLOS.password }, '/name'],
    ['an empty name', { ...CARLOS, name: '' }, '/name'],
    ['a blank name', { ...CARLOS, name: '   ' }, '/name'],
    ['a name over 100 characters', { ...CARLOS, name: 'x'.repeat(101) }, '/name'],
    ['a missing email', { name: 'Carlos', password: CARLOS.password }, '/email'],
    ['an email without @', { ...CARLOS, email: 'carlos.rock-legends.com' }, '/email'],
    ['an email without a domain dot', { ...CARLOS, email: 'carlos@localhost' }, '/email'],
    ['an email with two @', { ...CARLOS, email: 'carlos@rock@legends.com' }, '/email'],
    ['an email with a space inside', { ...CARLOS, email: 'car los@rock-legends.com' }, '/email'],
    ['an email with an empty label', { ...CARLOS, email: 'carlos@rock..com' }, '/email'],
    ['an email over 254 characters', { ...CARLOS, email: `${'a'.repeat(250)}@x.com` }, '/email'],
    ['an email that is not a string', { ...CARLOS, email: 42 }, '/email'],
    ['a password of 7 characters', { ...CARLOS, password: '1234567' }, '/password'],
    ['a password over 1,024 characters', { ...CARLOS, password: 'p'.repeat(1025) }, '/password'],
    ['a missing password', { name: 'Carlos', email: CARLOS.email }, '/password'],
    ['an unknown property', { ...CARLOS, admin: true }, '/admin'],
    ['an id', { ...CARLOS, id: 7 }, '/id'],
  ])('rejects %s with 400 naming the field', async (_, body, pointer) => {
    const { call, store } = testApp()
    const { status, json, headers, text } = await call(SIGNUP, { method: 'POST', body })
    expect(status).toBe(400)
    expect(headers.get('content-type')).toBe('application/problem+json')
    // A rejected password is never echoed back.
    if ('password' in body) expect(text).not.toContain(body.password)
    expect(json).toMatchObject({ type: '/problems/validation-error', status: 400 })
    expect(json.errors).toContainEqual({ pointer, detail: expect.any(String) })
    expect(await store.isEmpty()).toBe(true)
  })

  test.each([
    ['a password of exactly 8 characters', { ...CARLOS, password: '12345678' }],
    ['a password of exactly 1,024 characters', { ...CARLOS, password: 'p'.repeat(1024) }],
    ['a name of exactly 100 characters', { ...CARLOS, name: 'x'.repeat(100) }],
    ['a plus-addressed email', { ...CARLOS, email: 'carlos+rock@mail.rock-legends.com.ar' }],
  ])('accepts %s', async (_, body) => {
    const { call } = testApp()
    expect((await call(SIGNUP, { method: 'POST', body })).status).toBe(201)
  })

  test('checks a long hostile email in linear time (no catastrophic backtracking)', async () => {
    const { call } = testApp()
    // Many labels, then a character that fails the match at the very end: the worst case for a backtracking pattern.
    // As many as a sign-up body holds: at most 16 KiB is read (SMALL_BODY_BYTES).
    const hostile = `a@${'a.'.repeat(7_000)}a@`
    const started = performance.now()
    const { status } = await call(SIGNUP, { method: 'POST', body: { ...CARLOS, email: hostile } })
    expect(status).toBe(400)
    // Generous: a backtracking pattern takes minutes on this input, a linear one milliseconds.
    expect(performance.now() - started).toBeLessThan(2000)
  })

  test.each([
    ['the same email', CARLOS.email],
    ['upper case', 'CARLOS@ROCK-LEGENDS.COM'],
    ['surrounding whitespace', '  carlos@rock-legends.com\t'],
    ['mixed case and whitespace', ' Carlos@Rock-Legends.com '],
  ])('answers 409 for a registered email in %s', async (_, email) => {
    const { call } = testApp()
    await call(SIGNUP, { method: 'POST', body: CARLOS })
    const { status, json, headers } = await call(SIGNUP, { method: 'POST', body: { ...CARLOS, name: 'Other', email } })
    expect(status).toBe(409)
    expect(headers.get('content-type')).toBe('application/problem+json')
    expect(json).toMatchObject({ type: '/problems/conflict', status: 409 })
    expect(json.detail).toContain('carlos@rock-legends.com')
  })

  test('of five simultaneous sign-ups with one email (in any case), exactly one succeeds', async () => {
    const { call, store } = testApp()
    const emails = [
      'carlos@rock-legends.com',
      'CARLOS@rock-legends.com',
      ' carlos@ROCK-legends.com',
      'Carlos@Rock-Legends.Com ',
    ]
    const answers = await Promise.all(
      [...emails, CARLOS.email].map((email) => call(SIGNUP, { method: 'POST', body: { ...CARLOS, email } })),
    )
    const statuses = answers.map((answer) => answer.status).sort()
    expect(statuses).toEqual([201, 409, 409, 409, 409])
    // One account, the one the 201 answered (over SQL its id need not be 1: a refused insert may have taken a number
    // from the sequence first).
    const created = answers.find((answer) => answer.status === 201)?.json as { id: number }
    expect((await store.users.get(created.id))?.email).toBe('carlos@rock-legends.com')
    expect((await store.users.list({ limit: 10, offset: 0 })).total).toBe(1)
  })

  test('limits sign-ups per client address: 429 with Retry-After, lifted after the window', async () => {
    const clock = manualClock()
    const { call } = testApp(undefined, { now: clock.now })
    const { limit, windowMs } = ACCOUNT_LIMITS.signupsPerClient
    const signUp = (i: number) =>
      call(SIGNUP, { method: 'POST', body: { ...CARLOS, email: `fan${i}@rock-legends.com` } })
    for (let i = 0; i < limit; i++) expect((await signUp(i)).status).toBe(201)
    const refused = await signUp(limit)
    expect(refused.status).toBe(429)
    expect(refused.headers.get('content-type')).toBe('application/problem+json')
    expect(refused.json).toMatchObject({ type: '/problems/too-many-requests', status: 429 })
    expect(Number(refused.headers.get('retry-after'))).toBe(windowMs / 1000)
    clock.advance(windowMs / 2)
    expect(Number((await signUp(limit)).headers.get('retry-after'))).toBe(windowMs / 2000)
    clock.advance(windowMs / 2)
    expect((await signUp(limit)).status).toBe(201)
  })
})
