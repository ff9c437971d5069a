import { describe, expect, test } from 'bun:test'
import { createApp } from '../../src/app.ts'
import { captureStartState } from '../../src/fixtures/reset.ts'
import { seedStore } from '../../src/seed/seed.ts'
import { openMemoryStore } from '../../src/store/document/memory.ts'
import { bearer, CARLOS, signedIn } from '../accounts/helpers.ts'
import { asService, SERVICE_KEY, testApp } from '../helpers.ts'
import { countingStore } from '../support/stores.ts'

interface Call {
  method?: string
  body?: unknown
  headers?: Record<string, string>
}

/** Sends requests to `app` in-process, as testApp's `call` does for the app it builds. */
function caller(app: ReturnType<typeof createApp>) {
  return async (path: string, { method = 'GET', body, headers = {} }: Call = {}) => {
    const init: RequestInit = { method, headers: { ...headers } }
    if (body !== undefined) {
      init.body = JSON.stringify(body)
      ;(init.headers as Record<string, string>)['content-type'] = 'application/json'
    }
    const response = await app.handle(new Request(`http://localhost${path}`, init))
    const text = await response.text()
    const isJson = response.headers.get('content-type')?.includes('json') && text !== ''
    // biome-ignore lint/suspicious/noExplicitAny: tests read whatever JSON a response holds, field by field
    const json: any = isJson ? JSON.parse(text) : undefined
    return { status: response.status, headers: response.headers, text, json }
  }
}

/** A seeded store that counts its durable writes. */
async function seededStore() {
  const { store, state } = countingStore()
  await seedStore(store, true)
  return { store, state }
}

/** An in-process app with `--allow-reset`, over a seeded store. */
async function resettableApp() {
  const { store, state } = await seededStore()
  const reset = await captureStartState(store)
  const app = createApp({ store, apiKeys: [SERVICE_KEY], reset, report: () => {} })
  return { store, state, call: caller(app) }
}

const reset = (headers: Record<string, string> = asService) => ({ method: 'POST', headers })

describe('POST /__admin/reset (--allow-reset)', () => {
  test('restores the seeded start-up state exactly, counters included, in one durable write', async () => {
    const { store, state, call } = await resettableApp()
    const before = await store.snapshot()
    const artistsBefore = (await call('/api/v1/artists?limit=100')).json
    // Change everything a test might change: artists, albums, users, credentials.
    expect(
      (await call('/api/v1/artists', { method: 'POST', body: { name: 'Moris' }, headers: asService })).status,
    ).toBe(201)
    expect(
      (await call('/api/v1/artists/1', { method: 'PUT', body: { name: 'Renamed' }, headers: asService })).status,
    ).toBe(200)
    expect(
      (
        await call('/api/v1/artists/2/albums', {
          method: 'POST',
          body: { name: 'New', year: 2000 },
          headers: asService,
        })
      ).status,
    ).toBe(201)
    const { token } = await signedIn(call)
    expect(await store.snapshot()).not.toEqual(before)

    const writes = state.writes
    const answer = await call('/__admin/reset', reset())
    expect(answer.status).toBe(204)
    expect(answer.text).toBe('')
    expect(state.writes - writes).toBe(1)
    expect(await store.snapshot()).toEqual(before)
    expect((await call('/api/v1/artists?limit=100')).json).toEqual(artistsBefore)
    // Ids start again where the seed left them, and what was created after start-up is gone.
    const again = await call('/api/v1/artists', { method: 'POST', body: { name: 'Moris' }, headers: asService })
    expect(again.json.id).toBe(33)
    expect((await call('/api/v1/user/me', { headers: bearer(token) })).status).toBe(401)
    const login = { email: CARLOS.email, password: CARLOS.password }
    expect((await call('/api/v1/user/login', { method: 'POST', body: login })).status).toBe(401)
  })

  test('can be repeated: each reset goes back to the same state', async () => {
    const { store, call } = await resettableApp()
    const start = await store.snapshot()
    for (const name of ['One', 'Two']) {
      await call('/api/v1/artists', { method: 'POST', body: { name }, headers: asService })
      expect((await call('/__admin/reset', reset())).status).toBe(204)
      expect(await store.snapshot()).toEqual(start)
    }
  })

  test.each([
    ['no credentials', {}, 401, '/problems/unauthorized'],
    ['an unknown key', { 'x-api-key': 'nope' }, 401, '/problems/unauthorized'],
  ])('%s → %d', async (_, headers, status, type) => {
    const { call } = await resettableApp()
    const answer = await call('/__admin/reset', reset(headers))
    expect(answer.status).toBe(status)
    expect(answer.json.type).toBe(type)
  })

  test("a user's token or personal key → 403: only the operator's service key may reset", async () => {
    const { call, store } = await resettableApp()
    const { token } = await signedIn(call)
    const key = (await call('/api/v1/user/api-keys', { method: 'POST', body: { name: 'ci' }, headers: bearer(token) }))
      .json.key as string
    await call('/api/v1/artists', { method: 'POST', body: { name: 'Kept' }, headers: asService })
    for (const headers of [bearer(token), { 'x-api-key': key }]) {
      const answer = await call('/__admin/reset', reset(headers))
      expect(answer.status).toBe(403)
      expect(answer.json).toMatchObject({ type: '/problems/credential-not-allowed', status: 403 })
      expect(answer.json.detail).toContain('service key')
    }
    expect((await store.artists.get(33))?.name).toBe('Kept')
  })

  test('does not exist without --allow-reset: 404, nothing changes', async () => {
    const { call } = testApp()
    expect((await call('/__admin/reset', reset())).status).toBe(404)
  })

  test('only POST: GET → 405 with Allow', async () => {
    const { call } = await resettableApp()
    const answer = await call('/__admin/reset', { headers: asService })
    expect(answer.status).toBe(405)
    expect(answer.headers.get('allow')).toBe('OPTIONS, POST')
  })

  test('is left out of the OpenAPI document', async () => {
    const { call } = await resettableApp()
    expect((await call('/openapi.json')).text).not.toContain('__admin')
  })
})

describe('--read-only', () => {
  const app = async () => {
    const store = openMemoryStore()
    await seedStore(store, true)
    const built = createApp({ store, apiKeys: [SERVICE_KEY], readOnly: true, report: () => {} })
    return { store, call: caller(built) }
  }

  test.each([
    ['POST', '/api/v1/artists', { name: 'Moris' }],
    ['PUT', '/api/v1/artists/1', { name: 'Renamed' }],
    ['DELETE', '/api/v1/artists/1', undefined],
    ['POST', '/api/v1/artists/1/albums', { name: 'New' }],
    ['POST', '/api/v1/user/signup', CARLOS],
    ['POST', '/api/v1/user/login', { email: CARLOS.email, password: CARLOS.password }],
    ['PATCH', '/api/v1/artists/1', { name: 'Renamed' }],
    ['POST', '/no/such/route', undefined],
  ])('%s %s → 403 forbidden, nothing stored', async (method, path, body) => {
    const { store, call } = await app()
    const before = await store.snapshot()
    const answer = await call(path, { method, body, headers: asService })
    expect(answer.status).toBe(403)
    expect(answer.headers.get('content-type')).toBe('application/problem+json')
    expect(answer.json).toMatchObject({ type: '/problems/forbidden', status: 403 })
    expect(answer.json.detail).toContain('read-only')
    expect(await store.snapshot()).toEqual(before)
  })

  test.each([
    ['/api/v1/artists?limit=3', 200],
    ['/api/v1/artists/1', 200],
    ['/api/v1/artists/1/albums', 200],
    ['/api/v1/artists/999', 404],
    ['/healthz', 200],
    ['/openapi.json', 200],
    ['/covers/artists/1.svg', 200],
  ])('GET %s still answers %d', async (path, status) => {
    const { call } = await app()
    expect((await call(path)).status).toBe(status)
  })
})

describe('--delay', () => {
  test.each([
    ['an answer', '/api/v1/artists', 200],
    ['a problem', '/api/v1/artists/999', 404],
  ])('waits before %s of the API', async (_, path, status) => {
    const app = createApp({ store: openMemoryStore(), delay: 150, report: () => {} })
    const started = performance.now()
    const response = await app.handle(new Request(`http://localhost${path}`))
    // Timers may fire a hair early; the bound only has to show the wait happened.
    expect(performance.now() - started).toBeGreaterThanOrEqual(140)
    expect(response.status).toBe(status)
  })

  test('leaves /healthz fast, so readiness checks are not slowed', async () => {
    const app = createApp({ store: openMemoryStore(), delay: 60_000, report: () => {} })
    const answer = await Promise.race([
      app.handle(new Request('http://localhost/healthz')).then((response) => response.status),
      Bun.sleep(10_000).then(() => 'still waiting'),
    ])
    expect(answer).toBe(200)
  })
})
