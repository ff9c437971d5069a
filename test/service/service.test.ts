import { afterEach, describe, expect, test } from 'bun:test'
import { createClient } from '../../npm/rock-legends/lib/index.js'
import { createService, type Service } from '../../src/service.ts'
import { expectDocumented } from '../support/openapi.ts'

const services: Service[] = []
afterEach(async () => {
  for (const service of services.splice(0)) await service.close()
})

async function made(options: Parameters<typeof createService>[0] = {}) {
  const service = await createService(options)
  services.push(service)
  return service
}

/** The answer to `input`, checked against the OpenAPI document as every in-process test's is. */
async function answer(service: Service, input: Request | string, init?: RequestInit) {
  const response = await service.fetch(input, init)
  const text = await response.text()
  const request = input instanceof Request ? input : new Request(new URL(input, service.url).href, init)
  await expectDocumented({
    method: request.method,
    path: new URL(request.url).pathname + new URL(request.url).search,
    status: response.status,
    headers: response.headers,
    text,
  })
  return { status: response.status, headers: response.headers, text, json: text ? JSON.parse(text) : undefined }
}

const json = (body: unknown, headers: Record<string, string> = {}): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': 'application/json', ...headers },
  body: JSON.stringify(body),
})

describe('createService', () => {
  test('answers as the executable: the seeded catalogue, pages, entity tags, problems', async () => {
    const service = await made({ seed: true })
    const list = await answer(service, '/api/v1/artists?limit=2')
    expect(list.status).toBe(200)
    expect(list.json.meta).toEqual({ limit: 2, offset: 0, total: 32, next: '/api/v1/artists?limit=2&offset=2' })
    expect(list.json.data[0].name).toBe('Luis Alberto Spinetta')
    const one = await answer(service, '/api/v1/artists/1')
    expect(one.headers.get('etag')).toMatch(/^"[A-Za-z0-9_-]{22}"$/)
    const again = await service.fetch('/api/v1/artists/1', {
      headers: { 'if-none-match': one.headers.get('etag') ?? '' },
    })
    expect(again.status).toBe(304)
    const missing = await answer(service, '/api/v1/artists/999')
    expect(missing.status).toBe(404)
    expect(missing.headers.get('content-type')).toBe('application/problem+json')
    expect(missing.json).toMatchObject({ type: '/problems/not-found', status: 404, detail: 'There is no artist 999.' })
  })

  test('answers a request for any origin, https and short hosts included, as the same resource', async () => {
    const service = await made({ seed: true })
    for (const origin of [
      'https://api.example.com',
      'http://localhost:5173',
      'http://api',
      'https://a.b',
      'http://x',
    ]) {
      const response = await service.fetch(new Request(`${origin}/api/v1/artists/2?fields=name`))
      expect({ origin, status: response.status, name: ((await response.json()) as { name: string }).name }).toEqual({
        origin,
        status: 200,
        name: 'Charly García',
      })
    }
  })

  test('never answers compressed: nothing between the service and the caller would decode it', async () => {
    const service = await made({ seed: true })
    const response = await service.fetch(
      new Request('http://localhost/api/v1/artists?limit=100', { headers: { 'accept-encoding': 'gzip, br, zstd' } }),
    )
    expect(response.headers.get('content-encoding')).toBeNull()
    expect(((await response.json()) as { data: unknown[] }).data).toHaveLength(32)
    // A body goes along with the rest of the request.
    const created = await service.fetch(
      new Request('http://localhost/api/v1/artists', {
        ...json({ name: 'Moris' }, { 'x-api-key': service.apiKey, 'accept-encoding': 'gzip' }),
      }),
    )
    expect(created.status).toBe(201)
    expect(((await created.json()) as { name: string }).name).toBe('Moris')
  })

  test('writes need a key; the service key writes; reset() puts the data back', async () => {
    const service = await made({ seed: true })
    expect((await answer(service, '/api/v1/artists', json({ name: 'Moris' }))).status).toBe(401)
    const created = await answer(service, '/api/v1/artists', json({ name: 'Moris' }, { 'x-api-key': service.apiKey }))
    expect(created.status).toBe(201)
    expect(created.headers.get('location')).toBe(`/api/v1/artists/${created.json.id}`)
    expect((await answer(service, `/api/v1/artists/${created.json.id}`)).json.name).toBe('Moris')
    await service.reset()
    expect((await answer(service, `/api/v1/artists/${created.json.id}`)).status).toBe(404)
    expect((await answer(service, '/api/v1/artists?limit=1')).json.meta.total).toBe(32)
  })

  test('the given service keys are the keys; apiKey is the first', async () => {
    const service = await made({ apiKeys: ['first-key', 'second-key'] })
    expect(service.apiKey).toBe('first-key')
    const second = await answer(service, '/api/v1/artists', json({ name: 'Pappo' }, { 'x-api-key': 'second-key' }))
    expect(second.status).toBe(201)
    expect((await answer(service, '/api/v1/artists', json({ name: 'Pappo' }, { 'x-api-key': 'other' }))).status).toBe(
      401,
    )
  })

  test('fast-for-tests passwords are argon2id at its lowest cost: a real check, a wrong password refused', async () => {
    const service = await made({ passwords: 'fast-for-tests' })
    const user = { name: 'Nito', email: 'nito@example.com', password: 'almendra-1969' }
    expect((await answer(service, '/api/v1/user/signup', json(user))).status).toBe(201)
    const login = await answer(service, '/api/v1/user/login', json({ email: user.email, password: user.password }))
    expect(login.status).toBe(200)
    const wrong = await answer(service, '/api/v1/user/login', json({ email: user.email, password: 'almendra-1970' }))
    expect(wrong.status).toBe(401)
    const state = await service.fetch('/__admin/users?limit=1', { headers: { 'x-api-key': service.apiKey } })
    expect(state.status).toBeLessThan(500)
  })

  test('the typed client runs over it, through its fetch', async () => {
    const service = await made({ seed: true })
    const api = createClient(service.url, { apiKey: service.apiKey, fetch: service.fetch })
    const page = await api.artists.list({ limit: 3 })
    expect(page.data.map((artist) => artist.name)).toEqual(['Luis Alberto Spinetta', 'Charly García', 'Gustavo Cerati'])
    const created = await api.artists.create({ name: 'Litto Nebbia' })
    expect((await api.artists.get(created.id)).name).toBe('Litto Nebbia')
  })

  test('state() and load(): the catalogue out and in, in the format of a catalogue file', async () => {
    const service = await made({ seed: true })
    const state = await service.state()
    expect(state.artists).toHaveLength(32)
    expect(await service.load({ artists: state.artists.slice(0, 2) })).toEqual({
      artists: 2,
      albums: (state.artists[0]?.albums.length ?? 0) + (state.artists[1]?.albums.length ?? 0),
    })
    expect((await answer(service, '/api/v1/artists?limit=5')).json.meta.total).toBe(2)
    await expect(service.load({ artists: [{ name: '' }] } as never)).rejects.toThrow(/state to load/)
  })

  test('a seed catalogue of its own', async () => {
    const service = await made({
      seed: { artists: [{ name: 'Sumo', albums: [{ name: 'Llegando los monos', year: 1986 }] }] },
    })
    const list = await answer(service, '/api/v1/artists')
    expect(list.json.data.map((artist: { name: string }) => artist.name)).toEqual(['Sumo'])
    expect((await answer(service, '/api/v1/artists/1/albums')).json.data[0].name).toBe('Llegando los monos')
  })

  test('services are apart: a write in one is not seen in another', async () => {
    const [one, two] = [await made({ seed: true }), await made({ seed: true })]
    await one.fetch('/api/v1/artists', json({ name: 'Moris' }, { 'x-api-key': one.apiKey }))
    expect((await answer(one, '/api/v1/artists?limit=1')).json.meta.total).toBe(33)
    expect((await answer(two, '/api/v1/artists?limit=1')).json.meta.total).toBe(32)
  })

  test('services made alike share their app, yet their brakes, keys and feeds are their own', async () => {
    const [one, two] = [await made({ passwords: 'fast-for-tests' }), await made({ passwords: 'fast-for-tests' })]
    expect(one.apiKey).toBe(two.apiKey)
    const signUp = (service: Service, n: number) =>
      service.fetch(
        '/api/v1/user/signup',
        json({ name: `U${n}`, email: `u${n}@example.com`, password: 'i-love-rock-1' }),
      )
    // One client may sign up 20 times in 10 minutes: the first service's 21st is refused, the second's first is not.
    for (let n = 0; n < 20; n++) expect((await signUp(one, n)).status).toBe(201)
    expect((await signUp(one, 20)).status).toBe(429)
    expect((await signUp(two, 0)).status).toBe(201)
    // An Idempotency-Key is the first service's alone.
    const keyed = json({ name: 'Moris' }, { 'x-api-key': one.apiKey, 'idempotency-key': 'the-same-key-for-both-1' })
    expect((await one.fetch('/api/v1/artists', keyed)).headers.get('idempotent-replayed')).toBeNull()
    expect((await two.fetch('/api/v1/artists', keyed)).headers.get('idempotent-replayed')).toBeNull()
    expect((await one.fetch('/api/v1/artists', keyed)).headers.get('idempotent-replayed')).toBe('true')
    // A change is announced on its own service's feed only.
    const feed = async (service: Service) => {
      const reader = ((await service.fetch('/api/v1/events')).body as ReadableStream<Uint8Array>).getReader()
      let text = ''
      while (!text.includes('event: ready')) text += new TextDecoder().decode((await reader.read()).value)
      return { reader, more: async () => new TextDecoder().decode((await reader.read()).value) }
    }
    const [feedOne, feedTwo] = [await feed(one), await feed(two)]
    await two.fetch('/api/v1/artists', json({ name: 'Pappo' }, { 'x-api-key': two.apiKey }))
    await one.fetch('/api/v1/artists', json({ name: 'Spinetta' }, { 'x-api-key': one.apiKey }))
    expect(await feedOne.more()).toContain('Spinetta')
    expect(await feedTwo.more()).toContain('Pappo')
    await feedOne.reader.cancel()
    await feedTwo.reader.cancel()
  })

  test('a service with its own clock answers by it', async () => {
    const service = await made({ now: () => new Date('2001-12-20T00:00:00Z'), passwords: 'fast-for-tests' })
    const user = { name: 'Charly', email: 'charly@example.com', password: 'say-no-more-1' }
    await service.fetch('/api/v1/user/signup', json(user))
    const login = await service.fetch('/api/v1/user/login', json({ email: user.email, password: user.password }))
    // A token lasts 24 hours from the service's now.
    expect(((await login.json()) as { expires_at: string }).expires_at).toBe('2001-12-21T00:00:00.000Z')
  })

  test('passwords other than the two modes are refused', async () => {
    await expect(createService({ passwords: 'plain' as never })).rejects.toThrow(
      "passwords is 'argon2id' or 'fast-for-tests'",
    )
  })

  test('with fixtures: namespaces apart from the default, their journal, faults and reset', async () => {
    const service = await made({ seed: true, fixtures: true })
    const a = service.namespace('worker-a')
    const created = await a.fetch('/api/v1/artists', {
      method: 'POST',
      headers: { 'x-api-key': service.apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Moris' }),
    })
    expect(created.status).toBe(201)
    expect((await answer(service, '/api/v1/artists?limit=1')).json.meta.total).toBe(32)
    expect(((await (await a.fetch('/api/v1/artists?limit=1')).json()) as { meta: { total: number } }).meta.total).toBe(
      33,
    )
    expect((await a.requests({ method: 'POST' })).map((entry) => [entry.path, entry.status])).toEqual([
      ['/api/v1/artists', 201],
    ])
    await a.fault({ path: '/api/v1/artists/1', status: 503 })
    expect((await a.fetch('/api/v1/artists/1')).status).toBe(503)
    await a.reset()
    expect(((await (await a.fetch('/api/v1/artists?limit=1')).json()) as { meta: { total: number } }).meta.total).toBe(
      32,
    )
  })

  test('without fixtures, namespaces are refused with what to do', async () => {
    const service = await made()
    expect(() => service.namespace('a')).toThrow('createService({ fixtures: true })')
  })

  test('/docs needs Scalar, which the repository has; /openapi.json describes the origin asked', async () => {
    const service = await made()
    expect((await service.fetch('/docs')).status).toBe(200)
    const document = (await (await service.fetch('https://api.example.com/openapi.json')).json()) as {
      servers: { url: string }[]
    }
    expect(document.servers[0]?.url).toBe('https://api.example.com')
  })

  test('the event feed streams in-process', async () => {
    const service = await made({ seed: true })
    const response = await service.fetch('/api/v1/events')
    expect(response.headers.get('content-type')).toStartWith('text/event-stream')
    const reader = (response.body as ReadableStream<Uint8Array>).getReader()
    let text = ''
    while (!text.includes('event: ready')) text += new TextDecoder().decode((await reader.read()).value)
    await service.fetch('/api/v1/artists', json({ name: 'Moris' }, { 'x-api-key': service.apiKey }))
    while (!text.includes('Moris')) text += new TextDecoder().decode((await reader.read()).value)
    expect(text).toContain('"name":"Moris"')
    await reader.cancel()
  })

  test('a closed service refuses, and says what to do', async () => {
    const service = await createService()
    await service.close()
    await expect(service.fetch('/api/v1/artists')).rejects.toThrow('createService()')
  })
})
