import { describe, expect, test } from 'bun:test'
import { pageLinks, paginator } from '../../src/http/pagination.ts'
import { bearer, signedIn } from '../accounts/helpers.ts'
import { fixtureWorld, operator } from '../fixtures/support.ts'
import { addArtists, asService, testApp } from '../helpers.ts'

/** The targets of a `Link` header by relation. */
function links(header: string | null): Record<string, string> {
  const found: Record<string, string> = {}
  for (const match of (header ?? '').matchAll(/<([^>]*)>; rel="([a-z]+)"/g))
    found[match[2] as string] = match[1] as string
  return found
}

describe('Link headers on lists (RFC 8288)', () => {
  test('a middle page links the first, previous, next and last pages, the next one being meta.next', async () => {
    const { store, call } = testApp()
    await addArtists(store, 25)
    const answer = await call('/api/v1/artists?limit=10&offset=10')
    expect(answer.status).toBe(200)
    expect(links(answer.headers.get('link'))).toEqual({
      first: '/api/v1/artists?limit=10&offset=0',
      prev: '/api/v1/artists?limit=10&offset=0',
      next: '/api/v1/artists?limit=10&offset=20',
      last: '/api/v1/artists?limit=10&offset=20',
    })
    expect(links(answer.headers.get('link')).next).toBe(answer.json.meta.next)
  })

  test('the first page has no prev, the last no next, and every link keeps q and sort', async () => {
    const { store, call } = testApp()
    await addArtists(store, 25)
    const first = await call('/api/v1/artists?limit=10&q=artist&sort=-name')
    expect(links(first.headers.get('link'))).toEqual({
      first: '/api/v1/artists?limit=10&offset=0&q=artist&sort=-name',
      next: '/api/v1/artists?limit=10&offset=10&q=artist&sort=-name',
      last: '/api/v1/artists?limit=10&offset=20&q=artist&sort=-name',
    })
    const last = await call('/api/v1/artists?limit=10&offset=23')
    expect(links(last.headers.get('link'))).toEqual({
      first: '/api/v1/artists?limit=10&offset=0',
      prev: '/api/v1/artists?limit=10&offset=13',
      last: '/api/v1/artists?limit=10&offset=20',
    })
    expect(last.json.meta.next).toBeNull()
  })

  test('an empty list links its one page as first and last', () => {
    expect(pageLinks('/x', { limit: 10, offset: 0 }, 0)).toBe(
      '</x?limit=10&offset=0>; rel="first", </x?limit=10&offset=0>; rel="last"',
    )
    expect(links(pageLinks('/x', { limit: 5, offset: 3 }, 2))).toEqual({
      first: '/x?limit=5&offset=0',
      prev: '/x?limit=5&offset=0',
      last: '/x?limit=5&offset=0',
    })
  })

  test('a compressed page and a page answered again from the byte cache carry the same links', async () => {
    const { store, app } = testApp()
    await addArtists(store, 60)
    const get = (headers: Record<string, string> = {}) =>
      app.handle(new Request('http://localhost/api/v1/artists?limit=50', { headers }))
    const plain = await get()
    const compressed = await get({ 'accept-encoding': 'gzip' })
    expect(compressed.headers.get('content-encoding')).toBe('gzip')
    expect(compressed.headers.get('link')).toBe(plain.headers.get('link'))
    expect(compressed.headers.get('etag')).toBe(plain.headers.get('etag'))
    expect((await get()).headers.get('link')).toBe(plain.headers.get('link'))
    const paginate = paginator()
    const slice = { items: [{ id: 1 }], total: 30 }
    const once = paginate('/p', { limit: 1, offset: 0 }, slice)
    const twice = paginate('/p', { limit: 1, offset: 0 }, slice)
    expect(paginate.cache.size).toBe(1)
    expect(twice.headers.get('link')).toBe(once.headers.get('link'))
    expect(links(once.headers.get('link')).last).toBe('/p?limit=1&offset=29')
  })

  test('on every other list: albums, personal keys, the operator’s users, the fixture controls', async () => {
    const { call } = testApp()
    await call('/api/v1/artists', { method: 'POST', body: { name: 'Sumo' }, headers: asService })
    const { token } = await signedIn(call)
    for (const [path, headers] of [
      ['/api/v1/artists/1/albums?limit=2', {}],
      ['/api/v1/user/api-keys?limit=2', bearer(token)],
      ['/__admin/users?limit=2', asService],
    ] as const) {
      const answer = await call(path, { headers })
      expect({ path, status: answer.status }).toEqual({ path, status: 200 })
      const base = path.slice(0, path.indexOf('?'))
      expect(links(answer.headers.get('link'))).toEqual({
        first: `${base}?limit=2&offset=0`,
        last: `${base}?limit=2&offset=0`,
      })
    }
    const world = await fixtureWorld()
    for (const path of ['/__admin/namespaces', '/__admin/requests?method=GET', '/__admin/faults']) {
      const answer = await world.call(path, { headers: operator() })
      expect({ path, status: answer.status }).toEqual({ path, status: 200 })
      expect(links(answer.headers.get('link')).first).toStartWith(`${path.replace(/\?.*/, '')}?limit=10&offset=0`)
    }
  })
})
