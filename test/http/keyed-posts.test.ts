/**
 * `Idempotency-Key` on every POST beyond the catalogue's creates (src/http/idempotency.ts): sign-up, login, logout, a
 * new personal key, the operator's account routes, a fixture's fault and reset. A retry with the same key and body
 * gets the first answer again and does nothing more; where the body holds a password or the answer a secret, nothing
 * the store keeps reveals them without the key. Runs over the memory store and, in `bun run test:sql`, PostgreSQL.
 */
import { afterAll, describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { createApp } from '../../src/app.ts'
import { openJsonFileStore } from '../../src/store/json-file/json-file.ts'
import { bearer, CARLOS, type Call, signedIn } from '../accounts/helpers.ts'
import { fixtureWorld, operatorJson } from '../fixtures/support.ts'
import { asService, testApp } from '../helpers.ts'
import { removeDir, tempDir } from '../support/binary.ts'
import { cheapPasswords } from '../support/passwords.ts'

const USER = '/api/v1/user'
/** Keys as a client makes them: random, long enough for any route. */
const newKey = () => crypto.randomUUID()
const keyed = (key: string, headers: Record<string, string> = {}) => ({ ...headers, 'idempotency-key': key })

/** Sends `body` to `path` twice with one key; both answers. */
async function twice(call: Call, path: string, body: unknown, headers: Record<string, string> = {}, key = newKey()) {
  const first = await call(path, { method: 'POST', body, headers: keyed(key, headers) })
  const again = await call(path, { method: 'POST', body, headers: keyed(key, headers) })
  return { first, again, key }
}

/** That `again` is `first` sent again: status, headers that matter and body, marked as replayed. */
function expectReplayed(first: Awaited<ReturnType<Call>>, again: Awaited<ReturnType<Call>>) {
  expect(first.headers.get('idempotent-replayed')).toBeNull()
  expect(again.headers.get('idempotent-replayed')).toBe('true')
  expect(again.status).toBe(first.status)
  expect(again.text).toBe(first.text)
  for (const name of ['location', 'content-type']) expect(again.headers.get(name)).toBe(first.headers.get(name))
}

describe('Idempotency-Key on the account routes', () => {
  test('a sign-up retried with its key gets its 201 again, not a 409', async () => {
    const { call } = testApp()
    const { first, again } = await twice(call, `${USER}/signup`, CARLOS)
    expect(first.status).toBe(201)
    expectReplayed(first, again)
    // Without the key, the same sign-up is what it always was: the address is taken.
    expect((await call(`${USER}/signup`, { method: 'POST', body: CARLOS })).status).toBe(409)
  })

  test('the same key with another body is 422 and signs nobody up', async () => {
    const { call } = testApp()
    const key = newKey()
    expect((await call(`${USER}/signup`, { method: 'POST', body: CARLOS, headers: keyed(key) })).status).toBe(201)
    const other = { ...CARLOS, email: 'pappo@rock-legends.com' }
    const reused = await call(`${USER}/signup`, { method: 'POST', body: other, headers: keyed(key) })
    expect(reused.status).toBe(422)
    expect(reused.json.type).toBe('/problems/idempotency-key-reused')
    const login = await call(`${USER}/login`, {
      method: 'POST',
      body: { email: other.email, password: other.password },
    })
    expect(login.status).toBe(401)
  })

  test('a refused request keeps nothing: the key carries the corrected request', async () => {
    const { call } = testApp()
    const key = newKey()
    const short = { ...CARLOS, password: 'short' }
    expect((await call(`${USER}/signup`, { method: 'POST', body: short, headers: keyed(key) })).status).toBe(400)
    const fixed = await call(`${USER}/signup`, { method: 'POST', body: CARLOS, headers: keyed(key) })
    expect(fixed.status).toBe(201)
    expect(fixed.headers.get('idempotent-replayed')).toBeNull()
  })

  test('where a password or a secret is at stake, a short key is refused before anything is done', async () => {
    const { call } = testApp()
    const login = { email: CARLOS.email, password: CARLOS.password }
    for (const [path, body] of [
      [`${USER}/signup`, CARLOS],
      [`${USER}/login`, login],
    ] as const) {
      const refused = await call(path, { method: 'POST', body, headers: keyed('retry-1') })
      expect(refused.status).toBe(400)
      expect(refused.json.errors).toEqual([{ parameter: 'Idempotency-Key', detail: expect.stringContaining('22') }])
    }
    expect((await call(`${USER}/login`, { method: 'POST', body: login })).status).toBe(401)
  })

  test('a login retried with its key gets the same token again', async () => {
    const { call } = testApp()
    await call(`${USER}/signup`, { method: 'POST', body: CARLOS })
    const credentials = { email: CARLOS.email, password: CARLOS.password }
    const { first, again } = await twice(call, `${USER}/login`, credentials)
    expect(first.status).toBe(200)
    expectReplayed(first, again)
    expect((await call(`${USER}/me`, { headers: bearer(again.json.token) })).status).toBe(200)
    // The wrong password with the key of a good login is another request, and is checked as one.
    const wrong = await call(`${USER}/login`, {
      method: 'POST',
      body: { ...credentials, password: 'not-the-password' },
      headers: keyed(newKey()),
    })
    expect(wrong.status).toBe(401)
  })

  test('a new personal key retried with its key is made once, and the same key answered', async () => {
    const { call } = testApp()
    const { token } = await signedIn(call)
    const { first, again } = await twice(call, `${USER}/api-keys`, { name: 'CI' }, bearer(token))
    expect(first.status).toBe(201)
    expectReplayed(first, again)
    expect((await call(`${USER}/api-keys`, { headers: bearer(token) })).json.meta.total).toBe(1)
    expect((await call(`${USER}/me`, { headers: { 'x-api-key': again.json.key } })).status).toBe(200)
  })

  test('a logout is done once per key; a retry of one that succeeded is 401, its token revoked as asked', async () => {
    const { call } = testApp()
    const { token } = await signedIn(call)
    const key = newKey()
    const logOut = (headers: Record<string, string>) =>
      call(`${USER}/logout`, { method: 'POST', headers: keyed(key, headers) })
    expect((await logOut(bearer(token))).status).toBe(204)
    // Credentials are checked before anything else, and the token no longer authenticates.
    expect((await logOut(bearer(token))).status).toBe(401)
    // The key with another token is another request: which token a logout revokes is part of it.
    const login = { email: CARLOS.email, password: CARLOS.password }
    const second = (await call(`${USER}/login`, { method: 'POST', body: login })).json.token
    const other = await logOut(bearer(second))
    expect(other.status).toBe(422)
    expect((await call(`${USER}/me`, { headers: bearer(second) })).status).toBe(200)
  })
})

describe('Idempotency-Key on the operator routes', () => {
  test('an account added, disabled and its password reset, each retried with its key, is done once', async () => {
    const { call } = testApp()
    const added = await twice(call, '/__admin/users', CARLOS, asService)
    expect(added.first.status).toBe(201)
    expectReplayed(added.first, added.again)
    const disabled = await twice(call, '/__admin/users/disable', { email: CARLOS.email }, asService)
    expect(disabled.first.status).toBe(200)
    expectReplayed(disabled.first, disabled.again)
    const reset = await twice(
      call,
      '/__admin/users/reset-password',
      { email: CARLOS.email, password: 'new-password' },
      asService,
    )
    expect(reset.first.status).toBe(200)
    expectReplayed(reset.first, reset.again)
    expect((await call('/__admin/users', { headers: asService })).json.meta.total).toBe(1)
  })
})

describe('Idempotency-Key on the fixture controls', () => {
  test('a fault armed twice with one key is armed once, in its namespace only', async () => {
    const world = await fixtureWorld()
    const key = newKey()
    const arm = (ns: string) =>
      world.json('/__admin/faults', {
        method: 'POST',
        headers: keyed(key, operatorJson(ns)),
        body: JSON.stringify({ method: 'GET', path: '/api/v1/artists', status: 503 }),
      })
    const first = await arm('team-a')
    const again = await arm('team-a')
    expect(first.status).toBe(201)
    expect(again.status).toBe(201)
    expect(again.headers.get('idempotent-replayed')).toBe('true')
    expect(again.body).toEqual(first.body)
    expect((await world.json('/__admin/faults', { headers: operatorJson('team-a') })).body.meta.total).toBe(1)
    // Each namespace keeps its own keys, as it keeps its own catalogue.
    const elsewhere = await arm('team-b')
    expect(elsewhere.status).toBe(201)
    expect(elsewhere.headers.get('idempotent-replayed')).toBeNull()
  })

  test('a reset with a key resets, and its retry resets again: a reset forgets every key, its own included', async () => {
    const world = await fixtureWorld()
    const key = newKey()
    const reset = () => world.call('/__admin/reset', { method: 'POST', headers: keyed(key, operatorJson('team-a')) })
    expect((await reset()).status).toBe(204)
    const added = await world.json('/api/v1/artists', {
      method: 'POST',
      headers: operatorJson('team-a'),
      body: JSON.stringify({ name: 'Billy Bond' }),
    })
    expect(added.status).toBe(201)
    expect((await reset()).status).toBe(204)
    expect((await world.call(`/api/v1/artists/${added.body.id}`, { headers: operatorJson('team-a') })).status).toBe(404)
  })
})

describe('what the data file keeps of a sensitive request', () => {
  const dir = tempDir()
  afterAll(() => removeDir(dir))

  test('neither the password, nor the token or key answered, nor the Idempotency-Key itself', async () => {
    const file = join(dir, 'db.json')
    const store = await openJsonFileStore(file)
    const app = createApp({ store, apiKeys: [], passwords: cheapPasswords })
    const send = async (path: string, body: unknown, headers: Record<string, string>) => {
      const init = {
        method: 'POST',
        body: JSON.stringify(body),
        headers: { 'content-type': 'application/json', ...headers },
      }
      const first = await app.handle(new Request(`http://localhost${path}`, init))
      const again = await app.handle(new Request(`http://localhost${path}`, init))
      expect(again.headers.get('idempotent-replayed')).toBe('true')
      const text = await first.text()
      expect(await again.text()).toBe(text)
      return text ? JSON.parse(text) : undefined
    }
    const keys = [newKey(), newKey(), newKey()]
    await send(`${USER}/signup`, CARLOS, keyed(keys[0] as string))
    const { token } = await send(
      `${USER}/login`,
      { email: CARLOS.email, password: CARLOS.password },
      keyed(keys[1] as string),
    )
    const { key } = await send(`${USER}/api-keys`, { name: 'CI' }, keyed(keys[2] as string, bearer(token)))
    await store.close()
    const kept = readFileSync(file, 'utf8') + readFileSync(`${file}.journal`, { encoding: 'utf8', flag: 'a+' })
    expect(kept).toContain('idempotency')
    for (const secret of [CARLOS.password, token, key, ...keys]) expect(kept).not.toContain(secret)
    // Opened again, the store still replays the answers: the key unlocks them.
    const reopened = await openJsonFileStore(file)
    const again = createApp({ store: reopened, apiKeys: [], passwords: cheapPasswords })
    const login = await again.handle(
      new Request(`http://localhost${USER}/login`, {
        method: 'POST',
        body: JSON.stringify({ email: CARLOS.email, password: CARLOS.password }),
        headers: { 'content-type': 'application/json', 'idempotency-key': keys[1] as string },
      }),
    )
    expect(login.headers.get('idempotent-replayed')).toBe('true')
    expect(((await login.json()) as { token: string }).token).toBe(token)
    await reopened.close()
  })
})
