import { describe, expect, test } from 'bun:test'
import { ACCOUNT_LIMITS } from '../../src/accounts/service.ts'
import { createApp } from '../../src/app.ts'
import { testStore } from '../support/backends.ts'
import { cheapPasswords } from '../support/passwords.ts'

const KEY = 'rate-limit-key'
const HOUR = 3_600_000

/** An app over this run's store (memory, or PostgreSQL when the run says so) with small quotas. */
function app() {
  const handle = createApp({
    store: testStore(),
    apiKeys: [KEY],
    passwords: cheapPasswords,
    report: () => {},
    catalogueLimits: {
      artistsPerAccount: { limit: 2, windowMs: HOUR },
      albumsPerAccount: { limit: 1, windowMs: HOUR },
    },
    limits: { ...ACCOUNT_LIMITS, signupsPerClient: { limit: 2, windowMs: 10 * 60_000 } },
  })
  const send = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    handle.handle(
      new Request(`http://localhost${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      }),
    )
  return { send }
}

const user = (n: number) => ({ name: `User ${n}`, email: `user${n}@rock-legends.com`, password: 'i-love-rock' })

/** Signs `n` up (from the default client) and logs in; the bearer header. */
async function signedIn(send: ReturnType<typeof app>['send'], n: number) {
  expect((await send('/api/v1/user/signup', user(n))).status).toBe(201)
  const login = await send('/api/v1/user/login', { email: user(n).email, password: user(n).password })
  const { token } = (await login.json()) as { token: string }
  return { authorization: `Bearer ${token}` }
}

const headersOf = (response: Response) => ({
  status: response.status,
  policy: response.headers.get('ratelimit-policy'),
  state: response.headers.get('ratelimit'),
  retryAfter: response.headers.get('retry-after'),
})

describe('RateLimit and RateLimit-Policy headers', () => {
  test("a user's creates say the account's quota and what remains of it; the 429 past it says it too", async () => {
    const { send } = app()
    const auth = await signedIn(send, 1)
    const answers = []
    for (const name of ['Soda Stereo', 'Virus', 'Sumo'])
      answers.push(headersOf(await send('/api/v1/artists', { name }, auth)))
    const policy = '"artists-per-account";q=2;w=3600'
    expect(answers).toEqual([
      { status: 201, policy, state: '"artists-per-account";r=1;t=3600', retryAfter: null },
      { status: 201, policy, state: '"artists-per-account";r=0;t=3600', retryAfter: null },
      { status: 429, policy, state: '"artists-per-account";r=0;t=3600', retryAfter: '3600' },
    ])
    const album = headersOf(await send('/api/v1/artists/1/albums', { name: 'Signos' }, auth))
    expect(album).toMatchObject({
      status: 201,
      policy: '"albums-per-account";q=1;w=3600',
      state: '"albums-per-account";r=0;t=3600',
    })
    const refused = headersOf(await send('/api/v1/artists/1/albums', { name: 'Doble vida' }, auth))
    expect(refused).toMatchObject({ status: 429, state: '"albums-per-account";r=0;t=3600' })
  })

  test('a create with an Idempotency-Key says them too; its replay, which counts nothing, does not', async () => {
    const { send } = app()
    const auth = { ...(await signedIn(send, 1)), 'idempotency-key': 'soda-1' }
    const first = headersOf(await send('/api/v1/artists', { name: 'Soda Stereo' }, auth))
    expect(first).toMatchObject({ status: 201, state: '"artists-per-account";r=1;t=3600' })
    const replayed = await send('/api/v1/artists', { name: 'Soda Stereo' }, auth)
    expect(replayed.headers.get('idempotent-replayed')).toBe('true')
    expect(headersOf(replayed)).toMatchObject({ status: 201, state: null })
    // The replay took nothing of the quota: one more create is still allowed.
    const next = headersOf(await send('/api/v1/artists', { name: 'Virus' }, { authorization: auth.authorization }))
    expect(next).toMatchObject({ status: 201, state: '"artists-per-account";r=0;t=3600' })
  })

  test('a create refused by the store (unknown artist, stale If-Match) counts nothing and says nothing', async () => {
    const { send } = app()
    const auth = await signedIn(send, 1)
    expect((await send('/api/v1/artists', { name: 'Spinetta' }, { 'x-api-key': KEY })).status).toBe(201)
    const unknown = headersOf(await send('/api/v1/artists/99/albums', { name: 'Artaud' }, auth))
    expect(unknown).toMatchObject({ status: 404, state: null })
    const stale = headersOf(
      await send('/api/v1/artists/1/albums', { name: 'Artaud' }, { ...auth, 'if-match': '"not-its-version"' }),
    )
    expect(stale).toMatchObject({ status: 412, state: null })
    // The one album the account may add is still there to add.
    const added = headersOf(await send('/api/v1/artists/1/albums', { name: 'Artaud' }, auth))
    expect(added).toMatchObject({ status: 201, state: '"albums-per-account";r=0;t=3600' })
  })

  test('a service key, which no quota counts, gets none', async () => {
    const { send } = app()
    const answer = headersOf(await send('/api/v1/artists', { name: 'Patricio Rey' }, { 'x-api-key': KEY }))
    expect(answer).toEqual({ status: 201, policy: null, state: null, retryAfter: null })
  })

  test('sign-ups say the quota of their address, and so does the 429 past it', async () => {
    const { send } = app()
    const answers = []
    for (const n of [1, 2, 3]) answers.push(headersOf(await send('/api/v1/user/signup', user(n))))
    const policy = '"signups-per-client";q=2;w=600'
    expect(answers.map(({ status, policy, state }) => ({ status, policy, state }))).toEqual([
      { status: 201, policy, state: '"signups-per-client";r=1;t=600' },
      { status: 201, policy, state: '"signups-per-client";r=0;t=600' },
      { status: 429, policy, state: `"signups-per-client";r=0;t=${answers[2]?.retryAfter}` },
    ])
  })

  test('a login refused for too many failures names the brake that refused it', async () => {
    const { send } = app()
    await send('/api/v1/user/signup', user(1))
    let last: Response | undefined
    for (let i = 0; i <= ACCOUNT_LIMITS.loginFailuresPerEmail.limit; i++)
      last = await send('/api/v1/user/login', { email: user(1).email, password: 'wrong-password' })
    const refused = headersOf(last as Response)
    expect(refused.status).toBe(429)
    expect(refused.policy).toBe('"login-failures-per-email-from-client";q=5;w=900')
    expect(refused.state).toBe(`"login-failures-per-email-from-client";r=0;t=${refused.retryAfter}`)
  })
})
