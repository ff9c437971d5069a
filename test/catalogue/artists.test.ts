import { describe, expect, test } from 'bun:test'
import { addArtists, asService, SERVICE_KEY, testApp } from '../helpers.ts'

const spinetta = {
  name: 'Luis Alberto Spinetta',
  description: 'Poet of Argentine rock.',
  band: 'Almendra',
}

describe('GET /api/v1/artists', () => {
  test('an empty catalogue is an empty first page', async () => {
    const { call } = testApp()
    const { status, json } = await call('/api/v1/artists')
    expect(status).toBe(200)
    expect(json).toEqual({ data: [], meta: { limit: 10, offset: 0, total: 0, next: null } })
  })

  test.each([
    ['', { limit: 10, offset: 0, next: '/api/v1/artists?limit=10&offset=10' }, 1, 10],
    ['?limit=5&offset=5', { limit: 5, offset: 5, next: '/api/v1/artists?limit=5&offset=10' }, 6, 5],
    ['?limit=10&offset=20', { limit: 10, offset: 20, next: null }, 21, 5],
    ['?limit=1000', { limit: 100, offset: 0, next: null }, 1, 25],
    ['?offset=25', { limit: 10, offset: 25, next: null }, undefined, 0],
    ['?offset=9007199254740991', { limit: 10, offset: Number.MAX_SAFE_INTEGER, next: null }, undefined, 0],
  ])('pages in id order: %s', async (query, meta, firstId, count) => {
    const { call, store } = testApp()
    await addArtists(store, 25)
    const { status, json } = await call(`/api/v1/artists${query}`)
    expect(status).toBe(200)
    expect(json.meta).toEqual({ ...meta, total: 25 })
    expect(json.data).toHaveLength(count)
    expect(json.data[0]?.id).toBe(firstId)
    const ids = json.data.map((artist: { id: number }) => artist.id)
    expect(ids).toEqual([...ids].sort((a, b) => a - b))
  })

  test.each([
    ['limit=0', 'limit'],
    ['limit=-1', 'limit'],
    ['limit=abc', 'limit'],
    ['limit=1.5', 'limit'],
    ['limit=1e3', 'limit'],
    ['limit=', 'limit'],
    ['offset=-1', 'offset'],
    ['offset=0x10', 'offset'],
    ['offset=9007199254740992', 'offset'],
    ['offset=9223372036854775808', 'offset'],
  ])('rejects ?%s with 400 naming the parameter', async (query, parameter) => {
    const { call } = testApp()
    const { status, json, headers } = await call(`/api/v1/artists?${query}`)
    expect(status).toBe(400)
    expect(headers.get('content-type')).toBe('application/problem+json')
    expect(json).toMatchObject({ type: '/problems/validation-error', status: 400 })
    expect(json.errors).toEqual([{ parameter, detail: expect.any(String) }])
  })
})

describe('the bounds a refused limit or offset names', () => {
  test.each([
    ['limit=0', 'limit: must be a whole number of at least 1, written in digits only (above 100 counts as 100)'],
    ['limit=abc', 'limit: must be a whole number of at least 1, written in digits only (above 100 counts as 100)'],
    ['offset=-1', 'offset: must be an integer from 0 to 9007199254740991, written in digits only'],
  ])('?%s: %s', async (query, detail) => {
    const { call } = testApp()
    const { json } = await call(`/api/v1/artists?${query}`)
    expect(json.detail).toBe(detail)
    expect(json.detail).not.toContain('9223372036854775807')
  })
})

describe('GET /api/v1/artists/{artistId}', () => {
  test('returns the artist with every field', async () => {
    const { call } = testApp()
    const created = await call('/api/v1/artists', { method: 'POST', body: spinetta, headers: asService })
    const { status, json } = await call(`/api/v1/artists/${created.json.id}`)
    expect(status).toBe(200)
    expect(json).toStrictEqual({ id: created.json.id, ...spinetta })
  })

  test.each([
    ['0', 400],
    ['-1', 400],
    ['abc', 400],
    ['1.5', 400],
    ['1e3', 400],
    ['9223372036854775808', 400],
    ['99999999999999999999999', 400],
    ['9223372036854775807', 404],
    ['9007199254740993', 404],
    ['42', 404],
  ])('/%s → %i', async (id, status) => {
    const { call } = testApp()
    const response = await call(`/api/v1/artists/${id}`)
    expect(response.status).toBe(status)
    expect(response.json.status).toBe(status)
    expect(response.headers.get('content-type')).toBe('application/problem+json')
    if (status === 400) expect(response.json.errors).toEqual([{ parameter: 'artistId', detail: expect.any(String) }])
    if (status === 404) expect(response.json.detail).not.toMatch(/\d{17}/)
  })
})

describe('POST /api/v1/artists', () => {
  test('creates with 201, a Location, and an id assigned by the service', async () => {
    const { call } = testApp()
    const { status, json, headers } = await call('/api/v1/artists', {
      method: 'POST',
      body: { ...spinetta, id: 999 },
      headers: asService,
    })
    expect(status).toBe(201)
    expect(json).toEqual({ id: 1, ...spinetta })
    expect(headers.get('location')).toBe('/api/v1/artists/1')
    expect((await call('/api/v1/artists/1')).json).toEqual(json)
  })

  test('trims the name and leaves unset fields out of the answer, never null', async () => {
    const { call } = testApp()
    const { json } = await call('/api/v1/artists', { method: 'POST', body: { name: '  Pappo ' }, headers: asService })
    expect(json).toStrictEqual({ id: 1, name: 'Pappo' })
  })

  test.each([
    ['null fields', { name: 'Pappo', description: null, image: null, band: null }],
    ['a blank band', { name: 'Pappo', band: '   ' }],
  ])('treats %s as left out', async (_, body) => {
    const { call } = testApp()
    const { status, json } = await call('/api/v1/artists', { method: 'POST', body, headers: asService })
    expect(status).toBe(201)
    expect(json).toStrictEqual({ id: 1, name: 'Pappo' })
    expect((await call('/api/v1/artists/1')).text).toBe('{"id":1,"name":"Pappo"}')
  })

  test('ids increase and are never reused', async () => {
    const { call } = testApp()
    const ids = []
    for (const name of ['A', 'B', 'C'])
      ids.push((await call('/api/v1/artists', { method: 'POST', body: { name }, headers: asService })).json.id)
    expect(ids).toEqual([1, 2, 3])
  })

  test.each([
    ['a missing name', {}, '/name'],
    ['an empty name', { name: '' }, '/name'],
    ['a blank name', { name: '   ' }, '/name'],
    ['a name of 201 characters', { name: 'x'.repeat(201) }, '/name'],
    ['a number as name', { name: 7 }, '/name'],
    ['a description over 10,000 characters', { name: 'A', description: 'x'.repeat(10_001) }, '/description'],
    ['a band over 200 characters', { name: 'A', band: 'x'.repeat(201) }, '/band'],
    ['an image that is not a URL', { name: 'A', image: 'not a url' }, '/image'],
    ['an ftp image', { name: 'A', image: 'ftp://example.com/a.png' }, '/image'],
    ['a protocol-relative image', { name: 'A', image: '//evil.example/a.png' }, '/image'],
    ['an image over 2,048 characters', { name: 'A', image: `https://e.com/${'x'.repeat(2048)}` }, '/image'],
    ['an unknown property', { name: 'A', genre: 'rock' }, '/genre'],
    ['a __proto__ property', JSON.parse('{"name":"A","__proto__":{"admin":true}}'), '/__proto__'],
  ])('rejects %s with 400 pointing at the field', async (_, body, pointer) => {
    const { call, store } = testApp()
    const { status, json } = await call('/api/v1/artists', { method: 'POST', body, headers: asService })
    expect(status).toBe(400)
    expect(json.type).toBe('/problems/validation-error')
    expect(json.errors.map((error: { pointer: string }) => error.pointer)).toContain(pointer)
    expect((await store.artists.list({ limit: 10, offset: 0 })).total).toBe(0)
  })

  test('names every unknown property', async () => {
    const { call } = testApp()
    const { json } = await call('/api/v1/artists', {
      method: 'POST',
      body: { name: 'A', genre: 'rock', label: 'EMI' },
      headers: asService,
    })
    expect(json.errors.map((error: { pointer: string }) => error.pointer)).toEqual(['/genre', '/label'])
    expect(json.errors[0].detail).toContain('not a known property')
  })

  test.each([
    ['an http URL', 'http://example.com/a.png'],
    ['an https URL', 'https://example.com/a.png?size=2'],
    ['a path on this server', '/covers/artists/1.svg'],
    ['null, which leaves it unset', null],
  ])('accepts an image that is %s', async (_, image) => {
    const { call } = testApp()
    const { status, json } = await call('/api/v1/artists', {
      method: 'POST',
      body: { name: 'A', image },
      headers: asService,
    })
    expect(status).toBe(201)
    expect(json.image).toBe(image ?? undefined)
    expect('image' in json).toBe(image !== null)
  })
})

describe('an id of null in a body', () => {
  test('is accepted as no id, on create and on replace, like any optional field', async () => {
    const { call } = testApp()
    const created = await call('/api/v1/artists', { method: 'POST', body: { id: null, name: 'A' }, headers: asService })
    expect(created.status).toBe(201)
    const replaced = await call('/api/v1/artists/1', {
      method: 'PUT',
      body: { id: null, name: 'B' },
      headers: asService,
    })
    expect(replaced.json).toStrictEqual({ id: 1, name: 'B' })
  })
})

describe('PUT /api/v1/artists/{artistId}', () => {
  test('replaces the whole artist; left-out fields become unset and leave the answer', async () => {
    const { call } = testApp()
    await call('/api/v1/artists', { method: 'POST', body: spinetta, headers: asService })
    const { status, json } = await call('/api/v1/artists/1', {
      method: 'PUT',
      body: { name: 'Flaco Spinetta' },
      headers: asService,
    })
    expect(status).toBe(200)
    expect(json).toStrictEqual({ id: 1, name: 'Flaco Spinetta' })
    expect((await call('/api/v1/artists/1')).json).toStrictEqual(json)
  })

  test.each([
    [undefined, 200],
    [1, 200],
    [2, 400],
  ])('an id of %p in the body → %i', async (id, status) => {
    const { call } = testApp()
    await call('/api/v1/artists', { method: 'POST', body: spinetta, headers: asService })
    const response = await call('/api/v1/artists/1', { method: 'PUT', body: { id, name: 'X' }, headers: asService })
    expect(response.status).toBe(status)
    if (status === 400) expect(response.json.errors).toEqual([{ pointer: '/id', detail: expect.any(String) }])
  })

  test('an unknown artist is 404, not an upsert', async () => {
    const { call, store } = testApp()
    const { status } = await call('/api/v1/artists/7', { method: 'PUT', body: { name: 'X' }, headers: asService })
    expect(status).toBe(404)
    expect((await store.artists.list({ limit: 10, offset: 0 })).total).toBe(0)
    const created = await call('/api/v1/artists', { method: 'POST', body: { name: 'Y' }, headers: asService })
    expect(created.json.id).toBe(1)
  })
})

describe('DELETE /api/v1/artists/{artistId} (deprecated)', () => {
  test('checks credentials first', async () => {
    const { call } = testApp()
    for (const path of ['/api/v1/artists/1', '/api/v1/artists/abc']) {
      const { status, headers } = await call(path, { method: 'DELETE' })
      expect(status).toBe(401)
      expect(headers.get('www-authenticate')).toBe('Bearer realm="rock-legends"')
    }
  })

  test('answers 400 with a Deprecation header and deletes nothing', async () => {
    const { call } = testApp()
    await call('/api/v1/artists', { method: 'POST', body: spinetta, headers: asService })
    const { status, json, headers } = await call('/api/v1/artists/1', { method: 'DELETE', headers: asService })
    expect(status).toBe(400)
    expect(json).toMatchObject({ type: '/problems/deprecated-operation', status: 400 })
    expect(json.detail).toContain('PUT /api/v1/artists/1')
    expect(headers.get('deprecation')).toMatch(/^@\d+$/)
    expect((await call('/api/v1/artists/1')).status).toBe(200)
  })
})

describe('write authentication', () => {
  const writes = [
    ['POST', '/api/v1/artists', { name: 'A' }],
    ['PUT', '/api/v1/artists/1', { name: 'A' }],
    ['DELETE', '/api/v1/artists/1', undefined],
    ['POST', '/api/v1/artists/1/albums', { name: 'A' }],
  ] as const
  const credentials: [string, Record<string, string>][] = [
    ['no credentials', {}],
    ['a wrong key', { 'x-api-key': 'nope' }],
    ['an empty key', { 'x-api-key': '' }],
    ['a near miss of the key as a bearer token', { authorization: `Bearer ${SERVICE_KEY}x` }],
    ['a malformed Authorization header', { authorization: 'Basic dXNlcjpwYXNz' }],
    ['a bearer without token', { authorization: 'Bearer' }],
    ['a bad bearer beside a good key', { authorization: 'Bearer nope', 'x-api-key': SERVICE_KEY }],
  ]
  for (const [method, path, body] of writes)
    test.each(credentials)(`${method} ${path} with %s → 401`, async (_, headers) => {
      const { call, store } = testApp()
      await addArtists(store, 1)
      const { status, json, headers: response } = await call(path, { method, body, headers })
      expect(status).toBe(401)
      expect(json).toMatchObject({ type: '/problems/unauthorized', status: 401 })
      expect(response.get('www-authenticate')).toBe('Bearer realm="rock-legends"')
      expect((await store.artists.get(1))?.name).toBe('Artist 1')
      expect((await store.albums.listByArtist(1, { limit: 1, offset: 0 }))?.total).toBe(0)
    })

  test('the service key may also be sent as a bearer token (DESIGN.md)', async () => {
    const { call } = testApp()
    const { status } = await call('/api/v1/artists', {
      method: 'POST',
      body: { name: 'A' },
      headers: { authorization: `Bearer ${SERVICE_KEY}` },
    })
    expect(status).toBe(201)
  })

  test('an unauthenticated write learns nothing about validation rules', async () => {
    const { call } = testApp()
    const { status } = await call('/api/v1/artists', { method: 'POST', body: { bogus: true } })
    expect(status).toBe(401)
  })
})
