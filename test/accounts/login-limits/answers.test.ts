import { describe, expect, test } from 'bun:test'
import { ACCOUNT_LIMITS } from '../../../src/accounts/service.ts'
import { testApp } from '../../helpers.ts'
import { CARLOS, type Call, manualClock } from '../helpers.ts'

// The login limits as the API answers them: 429 with Retry-After per email and per client address, lifted once the
// window has passed. Through `testApp()`, so over each backend of the contract suite. The ways around them and the
// ways to abuse them: lockout.test.ts and known-addresses.test.ts; under real concurrency, from real addresses:
// concurrent-clients.binary.test.ts.

const LOGIN = '/api/v1/user/login'

const logIn = (call: Call, email: string, password: string) =>
  call(LOGIN, { method: 'POST', body: { email, password } })

describe('login rate limits', () => {
  const perEmail = ACCOUNT_LIMITS.loginFailuresPerEmail
  const perClient = ACCOUNT_LIMITS.loginFailuresPerClient

  test('repeated failures for one email → 429 with Retry-After, even with the right password; lifted after the window', async () => {
    const clock = manualClock()
    const { call } = testApp(undefined, { now: clock.now })
    await call('/api/v1/user/signup', { method: 'POST', body: CARLOS })
    for (let i = 0; i < perEmail.limit; i++) expect((await logIn(call, CARLOS.email, `wrong-${i}-pw`)).status).toBe(401)
    const refused = await logIn(call, CARLOS.email, CARLOS.password)
    expect(refused.status).toBe(429)
    expect(refused.headers.get('content-type')).toBe('application/problem+json')
    expect(refused.json).toMatchObject({ type: '/problems/too-many-requests', status: 429 })
    expect(refused.headers.get('retry-after')).toBe(String(perEmail.windowMs / 1000))
    // The email's case does not open a second allowance.
    expect((await logIn(call, CARLOS.email.toUpperCase(), CARLOS.password)).status).toBe(429)
    clock.advance(perEmail.windowMs - 1000)
    expect((await logIn(call, CARLOS.email, CARLOS.password)).headers.get('retry-after')).toBe('1')
    clock.advance(1000)
    expect((await logIn(call, CARLOS.email, CARLOS.password)).status).toBe(200)
  })

  test('unknown emails are limited like known ones (429 says nothing about registration)', async () => {
    const { call } = testApp()
    for (let i = 0; i < perEmail.limit; i++) await logIn(call, 'nobody@rock-legends.com', 'wrong-password')
    expect((await logIn(call, 'nobody@rock-legends.com', 'wrong-password')).status).toBe(429)
  })

  test('a successful login clears the failures of its email', async () => {
    const { call } = testApp()
    await call('/api/v1/user/signup', { method: 'POST', body: CARLOS })
    for (let i = 0; i < perEmail.limit - 1; i++) await logIn(call, CARLOS.email, 'wrong-password')
    expect((await logIn(call, CARLOS.email, CARLOS.password)).status).toBe(200)
    for (let i = 0; i < perEmail.limit; i++)
      expect((await logIn(call, CARLOS.email, 'wrong-password')).status).toBe(401)
  })

  test('repeated failures from one client address over many emails → 429; lifted after the window', async () => {
    const clock = manualClock()
    const { call } = testApp(undefined, { now: clock.now })
    await call('/api/v1/user/signup', { method: 'POST', body: CARLOS })
    for (let i = 0; i < perClient.limit; i++)
      expect((await logIn(call, `guess${i}@rock-legends.com`, 'wrong-password')).status).toBe(401)
    const refused = await logIn(call, CARLOS.email, CARLOS.password)
    expect(refused.status).toBe(429)
    expect(refused.json.detail).toContain('address')
    expect(Number(refused.headers.get('retry-after'))).toBe(perClient.windowMs / 1000)
    clock.advance(perClient.windowMs)
    expect((await logIn(call, CARLOS.email, CARLOS.password)).status).toBe(200)
  })

  test('parallel guesses cannot slip past the limit', async () => {
    const { call } = testApp()
    await call('/api/v1/user/signup', { method: 'POST', body: CARLOS })
    const answers = await Promise.all(
      Array.from({ length: perEmail.limit * 2 }, () => logIn(call, CARLOS.email, 'wrong-password')),
    )
    const statuses = answers.map((answer) => answer.status)
    expect(statuses.filter((status) => status === 401)).toHaveLength(perEmail.limit)
    expect(statuses.filter((status) => status === 429)).toHaveLength(perEmail.limit)
  })
})
