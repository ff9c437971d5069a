import type { testApp } from '../helpers.ts'

/** What `testApp().call` is. */
export type Call = ReturnType<typeof testApp>['call']

/** A user to sign up; each test gets its own store, so the same one can be used everywhere. */
export const CARLOS = { name: 'Carlos', email: 'carlos@rock-legends.com', password: 'i-love-rock' }

/** A clock the test moves by hand, for token expiry and rate-limit windows. */
export function manualClock(start = '2025-06-01T12:00:00Z') {
  let time = Date.parse(start)
  return {
    now: () => new Date(time),
    advance: (ms: number) => {
      time += ms
    },
  }
}

/** Headers presenting a bearer token. */
export const bearer = (token: string) => ({ authorization: `Bearer ${token}` })

/** Headers presenting a personal (or service) API key. */
export const apiKey = (key: string) => ({ 'x-api-key': key })

/** Signs up `user` and logs in; returns the login answer (`token`, `user`, …). */
export async function signedIn(call: Call, user: { name: string; email: string; password: string } = CARLOS) {
  const signup = await call('/api/v1/user/signup', { method: 'POST', body: user })
  if (signup.status !== 201) throw new Error(`sign-up failed: ${signup.status} ${signup.text}`)
  const login = await call('/api/v1/user/login', {
    method: 'POST',
    body: { email: user.email, password: user.password },
  })
  if (login.status !== 200) throw new Error(`login failed: ${login.status} ${login.text}`)
  return login.json as { user: { id: number; name: string; email: string }; token: string; expires_at: string }
}

/** Creates a personal API key named `name` with `headers`; returns the 201 body, key included. */
export async function createKey(call: Call, headers: Record<string, string>, name = 'CI') {
  const created = await call('/api/v1/user/api-keys', { method: 'POST', body: { name }, headers })
  if (created.status !== 201) throw new Error(`key creation failed: ${created.status} ${created.text}`)
  return created.json as { id: number; name: string; prefix: string; key: string }
}

/** Adds an artist named "X": the write every credential test tries. */
export const writeArtist = (call: Call, headers: Record<string, string>) =>
  call('/api/v1/artists', { method: 'POST', body: { name: 'X' }, headers })
