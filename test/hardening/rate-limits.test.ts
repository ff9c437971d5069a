import { afterEach, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { ACCOUNT_LIMITS } from '../../src/accounts/service.ts'
import { ensureBinary, type RunningBinary, startBinary } from '../support/binary.ts'

// The brakes on guessing passwords and on sign-ups, under real concurrency: parallel requests over real sockets to
// the executable, so that no check and its count can be interleaved into letting more through.

const { loginFailuresPerEmail, loginFailuresPerClient, signupsPerClient } = ACCOUNT_LIMITS
const USER = { name: 'Carlos', email: 'carlos@rock-legends.com', password: 'i-love-rock' }

let server: RunningBinary
beforeAll(() => ensureBinary(), 120_000)
beforeEach(async () => {
  server = await startBinary(['--port', '0', '--data', ':memory:', '--log', 'off'])
})
afterEach(() => server.stop())

const post = (path: string, body: unknown) =>
  fetch(`${server.url}/api/v1/user/${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })

/** The statuses of `size` requests sent all at once, with the Retry-After of each 429. */
async function burst(size: number, request: (i: number) => Promise<Response>) {
  const answers = await Promise.all(Array.from({ length: size }, (_, i) => request(i)))
  for (const answer of answers) {
    if (answer.status === 429) expect(Number(answer.headers.get('retry-after'))).toBeGreaterThan(0)
    await answer.arrayBuffer()
  }
  const count = (status: number) => answers.filter((answer) => answer.status === status).length
  return { count, statuses: new Set(answers.map((answer) => answer.status)) }
}

describe('under 50 parallel requests', () => {
  test(`wrong passwords for one email: at most ${loginFailuresPerEmail.limit} are checked, the rest 429; then even the right one waits`, async () => {
    expect((await post('signup', USER)).status).toBe(201)
    const { count, statuses } = await burst(50, () => post('login', { email: USER.email, password: 'wrong-password' }))
    expect([...statuses].sort()).toEqual([401, 429])
    expect(count(401)).toBeLessThanOrEqual(loginFailuresPerEmail.limit)
    expect(count(429)).toBeGreaterThanOrEqual(50 - loginFailuresPerEmail.limit)
    expect((await post('login', { email: USER.email, password: USER.password })).status).toBe(429)
  })

  test(`wrong logins over 50 emails from one address: at most ${loginFailuresPerClient.limit} are checked, the rest 429`, async () => {
    const { count } = await burst(50, (i) => post('login', { email: `user${i}@example.com`, password: 'guess-guess' }))
    expect(count(401)).toBeLessThanOrEqual(loginFailuresPerClient.limit)
    expect(count(401) + count(429)).toBe(50)
  })

  test(`sign-ups from one address: at most ${signupsPerClient.limit} go through, the rest 429`, async () => {
    const { count } = await burst(50, (i) => post('signup', { ...USER, email: `user${i}@example.com` }))
    expect(count(201)).toBeLessThanOrEqual(signupsPerClient.limit)
    expect(count(201) + count(429)).toBe(50)
  })
})
