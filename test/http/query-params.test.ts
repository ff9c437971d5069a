import { describe, expect, test } from 'bun:test'
import { repeatedParameter } from '../../src/http/query-params.ts'
import { bearer, signedIn } from '../accounts/helpers.ts'
import { fixtureWorld, operator } from '../fixtures/support.ts'
import { asService, testApp } from '../helpers.ts'

/** An app with an artist, an album and a signed-in user; `token` is the user's bearer token. */
async function world() {
  const app = testApp()
  const { call } = app
  await call('/api/v1/artists', { method: 'POST', body: { name: 'Charly García' }, headers: asService })
  await call('/api/v1/artists/1/albums', { method: 'POST', body: { name: 'Clics modernos' }, headers: asService })
  const { token } = await signedIn(call)
  return { ...app, token }
}

const CACHE_BUSTERS = ['_=1732870000000', 'utm_source=newsletter&utm_medium=email', 'foo=bar', 'LIMIT=x', 'limit[]=3']

describe('unknown query parameters', () => {
  test('are ignored on every route, lists, single resources, accounts, covers and pages alike', async () => {
    const { app, token } = await world()
    const routes: [string, Record<string, string>?][] = [
      ['/api/v1/artists'],
      ['/api/v1/artists?limit=1'],
      ['/api/v1/artists/1'],
      ['/api/v1/artists/1/albums'],
      ['/api/v1/artists/1/albums/1'],
      ['/api/v1/user/me', bearer(token)],
      ['/api/v1/user/api-keys', bearer(token)],
      ['/__admin/users', asService],
      ['/covers/artists/1.svg'],
      ['/openapi.json'],
      ['/healthz'],
      ['/'],
      ['/artists/1'],
    ]
    for (const [path, headers] of routes) {
      const plain = await app.handle(new Request(`http://localhost${path}`, { headers }))
      const expected = await plain.text()
      expect({ path, status: plain.status }).toEqual({ path, status: 200 })
      for (const extra of CACHE_BUSTERS) {
        const url = `http://localhost${path}${path.includes('?') ? '&' : '?'}${extra}`
        const answer = await app.handle(new Request(url, { headers }))
        const text = await answer.text()
        expect({ url, status: answer.status }).toEqual({ url, status: 200 })
        // The same answer: a JSON one byte for byte (the list's `meta.next` does not carry them either).
        if (answer.headers.get('content-type') === 'application/json') expect(text).toBe(expected)
      }
    }
  })

  test('a known parameter that is malformed is still refused, naming it', async () => {
    const { call } = await world()
    const answer = await call('/api/v1/artists?_=1&limit=abc')
    expect(answer.status).toBe(400)
    expect(answer.json.errors).toEqual([expect.objectContaining({ parameter: 'limit' })])
  })
})

describe('a repeated query parameter', () => {
  test.each([
    ['/api/v1/artists?limit=10&limit=20', 'limit'],
    ['/api/v1/artists?offset=0&q=a&offset=1', 'offset'],
    ['/api/v1/artists?sort=name&sort=name', 'sort'],
    ['/api/v1/artists?q=a&q=b', 'q'],
    ['/api/v1/artists?li%6Dit=1&limit=2', 'limit'],
    ['/api/v1/artists/1/albums?limit=1&limit=1', 'limit'],
    ['/__admin/users?offset=1&offset=2', 'offset'],
  ])('%s → 400 naming %s', async (path, name) => {
    const { call } = await world()
    const answer = await call(path, { headers: asService })
    expect(answer.status).toBe(400)
    expect(answer.json).toMatchObject({
      type: '/problems/validation-error',
      detail: `${name}: must be given at most once`,
      errors: [{ parameter: name, detail: 'must be given at most once' }],
    })
  })

  test("on a user's own list, and on HEAD as on GET", async () => {
    const { app, call, token } = await world()
    const answer = await call('/api/v1/user/api-keys?limit=1&limit=2', { headers: bearer(token) })
    expect(answer.status).toBe(400)
    expect(answer.json.errors).toEqual([{ parameter: 'limit', detail: 'must be given at most once' }])
    const head = await app.handle(new Request('http://localhost/api/v1/artists?limit=1&limit=2', { method: 'HEAD' }))
    expect(head.status).toBe(400)
  })

  test('on the fixture controls’ lists', async () => {
    const world = await fixtureWorld()
    for (const path of ['/__admin/namespaces?limit=1&limit=2', '/__admin/requests?method=GET&method=POST']) {
      const answer = await world.json(path, { headers: operator() })
      expect({ path, status: answer.status }).toEqual({ path, status: 400 })
      expect(answer.body.errors[0].detail).toBe('must be given at most once')
    }
  })

  test('an unknown one given twice is ignored like any unknown one', async () => {
    const { call } = await world()
    expect((await call('/api/v1/artists?_=1&_=2&utm_source=a&utm_source=b')).status).toBe(200)
    expect((await call('/api/v1/artists/1?limit=1&limit=2')).status).toBe(200)
  })

  test('is found by its decoded name, and a name that does not decode is none', () => {
    const names = new Set(['limit', 'q'])
    expect(repeatedParameter('limit=1&offset=2', names)).toBeUndefined()
    expect(repeatedParameter('q=a&%71=b', names)).toBe('q')
    expect(repeatedParameter('%E0%A4%A=1&%E0%A4%A=2&limit', names)).toBeUndefined()
    expect(repeatedParameter('limit&limit=', names)).toBe('limit')
  })

  test('is found among thousands of names, before, after and between repeats of unknown ones', async () => {
    const names = new Set(['limit', 'q'])
    const distinct = Array.from({ length: 4000 }, (_, i) => `p${i}=1`).join('&')
    expect(repeatedParameter(distinct, names)).toBeUndefined()
    expect(repeatedParameter(`limit=1&${distinct}&limit=2`, names)).toBe('limit')
    expect(repeatedParameter(`${distinct}&p7=2&q=a&q=b`, names)).toBe('q')
    expect(repeatedParameter(`${distinct}&p7=2`, names)).toBeUndefined()
    // Through the app: the URL stays under the 8 KiB a request target may have.
    const { call } = await world()
    const many = Array.from({ length: 900 }, (_, i) => `u${i}`).join('&')
    expect((await call(`/api/v1/artists?${many}`)).status).toBe(200)
    const refused = await call(`/api/v1/artists?limit=1&${many}&limit=2`)
    expect(refused.status).toBe(400)
    expect(refused.json.errors[0].parameter).toBe('limit')
  })
})
