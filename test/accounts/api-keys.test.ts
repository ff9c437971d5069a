import { describe, expect, test } from 'bun:test'
import { asService, testApp } from '../helpers.ts'
import { apiKey, bearer, CARLOS, createKey, manualClock, signedIn } from './helpers.ts'

const KEYS = '/api/v1/user/api-keys'
const MARIA = { name: 'Maria', email: 'maria@rock-legends.com', password: 'rock-n-roll' }

describe('personal API keys', () => {
  test('create shows the key once, with a recognisable prefix and a Location', async () => {
    const clock = manualClock('2025-06-01T12:00:00Z')
    const { call } = testApp(undefined, { now: clock.now })
    const { token } = await signedIn(call)
    const { status, json, headers } = await call(KEYS, {
      method: 'POST',
      body: { name: '  CI pipeline ' },
      headers: bearer(token),
    })
    expect(status).toBe(201)
    expect(json).toEqual({
      id: expect.any(Number),
      name: 'CI pipeline',
      prefix: json.key.slice(0, 11),
      key: expect.stringMatching(/^rl_key_[0-9A-Za-z]{32}$/),
      created_at: '2025-06-01T12:00:00.000Z',
    })
    expect(json).not.toHaveProperty('last_used_at')
    expect(json.prefix).toMatch(/^rl_key_.{4}$/)
    expect(headers.get('location')).toBe(`${KEYS}/${json.id}`)
    const read = await call(`${KEYS}/${json.id}`, { headers: bearer(token) })
    expect(read.status).toBe(200)
    expect(read.json).not.toHaveProperty('key')
  })

  test('list shows id, name, prefix and times, never the key or its hash; tokens and revoked keys are left out', async () => {
    const clock = manualClock('2025-06-01T12:00:00Z')
    const { call } = testApp(undefined, { now: clock.now })
    const { token } = await signedIn(call)
    const first = await createKey(call, bearer(token), 'laptop')
    const second = await createKey(call, bearer(token), 'ci')
    const third = await createKey(call, bearer(token), 'old')
    await call(`${KEYS}/${third.id}`, { method: 'DELETE', headers: bearer(token) })
    clock.advance(60_000)
    await call('/api/v1/user/me', { headers: apiKey(second.key) })
    const { status, json, text } = await call(KEYS, { headers: bearer(token) })
    expect(status).toBe(200)
    expect(json.meta).toEqual({ limit: 10, offset: 0, total: 2, next: null })
    expect(json.data).toEqual([
      {
        id: first.id,
        name: 'laptop',
        prefix: first.prefix,
        created_at: '2025-06-01T12:00:00.000Z',
      },
      {
        id: second.id,
        name: 'ci',
        prefix: second.prefix,
        created_at: '2025-06-01T12:00:00.000Z',
        last_used_at: '2025-06-01T12:01:00.000Z',
      },
    ])
    for (const secret of [first.key, second.key, token]) expect(text).not.toContain(secret.slice(11))
    expect(text).not.toContain('hash')
  })

  test('the list is paginated like the artists: limit, offset, total and a link to the next page', async () => {
    const { call } = testApp()
    const { token } = await signedIn(call)
    const created = []
    for (let i = 1; i <= 5; i++) created.push(await createKey(call, bearer(token), `key ${i}`))
    const names = (json: { data: { name: string }[] }) => json.data.map((key) => key.name)
    const first = await call(`${KEYS}?limit=2`, { headers: bearer(token) })
    expect(first.status).toBe(200)
    expect(names(first.json)).toEqual(['key 1', 'key 2'])
    expect(first.json.meta).toEqual({ limit: 2, offset: 0, total: 5, next: `${KEYS}?limit=2&offset=2` })
    const last = await call(`${KEYS}?limit=2&offset=4`, { headers: bearer(token) })
    expect(names(last.json)).toEqual(['key 5'])
    expect(last.json.meta).toEqual({ limit: 2, offset: 4, total: 5, next: null })
    expect((await call(`${KEYS}?limit=1000`, { headers: bearer(token) })).json.meta.limit).toBe(100)
    expect((await call(`${KEYS}?offset=9`, { headers: bearer(token) })).json).toEqual({
      data: [],
      meta: { limit: 10, offset: 9, total: 5, next: null },
    })
    // Following `next` walks the whole list once.
    const walked: string[] = []
    let next: string | null = `${KEYS}?limit=2`
    while (next) {
      const page: { json: { data: { name: string }[]; meta: { next: string | null } } } = await call(next, {
        headers: bearer(token),
      })
      walked.push(...names(page.json))
      next = page.json.meta.next
    }
    expect(walked).toEqual(created.map((key) => key.name))
  })

  test.each(['limit=0', 'limit=-1', 'offset=-1', 'limit=abc', 'offset=1.5'])(
    'the list rejects %s with 400 naming the parameter',
    async (query) => {
      const { call } = testApp()
      const { token } = await signedIn(call)
      const { status, json } = await call(`${KEYS}?${query}`, { headers: bearer(token) })
      expect(status).toBe(400)
      expect(json.errors).toEqual([{ parameter: query.split('=')[0], detail: expect.any(String) }])
    },
  )

  test('a personal key works for the account routes too', async () => {
    const { call } = testApp()
    const { token } = await signedIn(call)
    const { key } = await createKey(call, bearer(token))
    expect((await call('/api/v1/user/me', { headers: apiKey(key) })).json.email).toBe(CARLOS.email)
    expect((await call(KEYS, { method: 'POST', body: { name: 'made by a key' }, headers: apiKey(key) })).status).toBe(
      201,
    )
  })

  test('revoke answers 204 and the key stops working; revoking again is 404', async () => {
    const { call } = testApp()
    const { token } = await signedIn(call)
    const { id, key } = await createKey(call, bearer(token))
    const revoked = await call(`${KEYS}/${id}`, { method: 'DELETE', headers: bearer(token) })
    expect(revoked.status).toBe(204)
    expect(revoked.text).toBe('')
    expect((await call('/api/v1/user/me', { headers: apiKey(key) })).status).toBe(401)
    expect((await call(`${KEYS}/${id}`, { method: 'DELETE', headers: bearer(token) })).status).toBe(404)
  })

  test("only the owner sees or revokes a key: another user's key id is 404", async () => {
    const { call } = testApp()
    const carlos = await signedIn(call)
    const maria = await signedIn(call, MARIA)
    const carlosKey = await createKey(call, bearer(carlos.token), 'carlos')
    await createKey(call, bearer(maria.token), 'maria')
    const asMaria = bearer(maria.token)
    expect((await call(`${KEYS}/${carlosKey.id}`, { headers: asMaria })).status).toBe(404)
    const denied = await call(`${KEYS}/${carlosKey.id}`, { method: 'DELETE', headers: asMaria })
    expect(denied.status).toBe(404)
    expect(denied.json.type).toBe('/problems/not-found')
    expect((await call(KEYS, { headers: asMaria })).json.data.map((key: { name: string }) => key.name)).toEqual([
      'maria',
    ])
    expect((await call('/api/v1/user/me', { headers: apiKey(carlosKey.key) })).status).toBe(200)
  })

  test('a login token id is not a key id', async () => {
    const { call, store } = testApp()
    const { token, user } = await signedIn(call)
    const [tokenRecord] = await store.credentials.listByUser(user.id)
    const answer = await call(`${KEYS}/${tokenRecord?.id}`, { method: 'DELETE', headers: bearer(token) })
    expect(answer.status).toBe(404)
    expect((await call('/api/v1/user/me', { headers: bearer(token) })).status).toBe(200)
  })

  test.each([
    ['an empty name', { name: '' }, '/name'],
    ['a blank name', { name: '   ' }, '/name'],
    ['a name over 100 characters', { name: 'k'.repeat(101) }, '/name'],
    ['a missing name', {}, '/name'],
    ['an unknown property', { name: 'ci', expires: 'never' }, '/expires'],
  ])('create rejects %s with 400', async (_, body, pointer) => {
    const { call } = testApp()
    const { token } = await signedIn(call)
    const { status, json } = await call(KEYS, { method: 'POST', body, headers: bearer(token) })
    expect(status).toBe(400)
    expect(json.errors).toContainEqual({ pointer, detail: expect.any(String) })
  })

  test.each(['0', 'abc', '1.5', '99999999999999999999'])('rejects the key id %s with 400', async (id) => {
    const { call } = testApp()
    const { token } = await signedIn(call)
    const { status, json } = await call(`${KEYS}/${id}`, { method: 'DELETE', headers: bearer(token) })
    expect(status).toBe(400)
    expect(json.errors).toEqual([{ parameter: 'id', detail: expect.any(String) }])
  })

  test.each([
    ['GET', KEYS, undefined],
    ['POST', KEYS, { name: 'ci' }],
    ['GET', `${KEYS}/1`, undefined],
    ['DELETE', `${KEYS}/1`, undefined],
    ['GET', '/api/v1/user/me', undefined],
    ['POST', '/api/v1/user/logout', undefined],
  ])('%s %s needs a user: 401 without credentials, 403 for a service key', async (method, path, body) => {
    const { call } = testApp()
    expect((await call(path, { method, body })).status).toBe(401)
    const { status, json, headers } = await call(path, { method, body, headers: asService })
    expect(status).toBe(403)
    expect(headers.get('content-type')).toBe('application/problem+json')
    expect(json).toMatchObject({ type: '/problems/credential-not-allowed', status: 403 })
  })

  test('logout with a personal key is refused (403) and revokes nothing', async () => {
    const { call } = testApp()
    const { token } = await signedIn(call)
    const { key } = await createKey(call, bearer(token))
    const { status, json } = await call('/api/v1/user/logout', { method: 'POST', headers: apiKey(key) })
    expect(status).toBe(403)
    expect(json.detail).toContain('DELETE /api/v1/user/api-keys/{id}')
    expect((await call('/api/v1/user/me', { headers: apiKey(key) })).status).toBe(200)
  })
})
