import { describe, expect, test } from 'bun:test'
import { coverId } from '../../src/covers/routes.ts'
import { seedStore } from '../../src/seed/seed.ts'
import { asService, testApp } from '../helpers.ts'

/** An app over a store seeded with the built-in catalogue. */
async function seeded() {
  const context = testApp()
  await seedStore(context.store, true)
  return context
}

describe('GET /covers/…', () => {
  test.each([
    ['/covers/artists/1.svg', 'Luis Alberto Spinetta'],
    ['/covers/albums/6.svg', 'Artaud'],
  ])('%s is an SVG of the record, cacheable briefly and by ETag', async (path, shows) => {
    const { call } = await seeded()
    const { status, headers, text } = await call(path)
    expect(status).toBe(200)
    expect(headers.get('content-type')).toBe('image/svg+xml; charset=utf-8')
    expect(headers.get('cache-control')).toBe('public, max-age=60')
    expect(headers.get('etag')).toMatch(/^"[0-9a-z]+"$/)
    expect(headers.get('x-content-type-options')).toBe('nosniff')
    expect(headers.get('content-security-policy')).toBe("default-src 'none'")
    expect(text).toStartWith('<svg ')
    expect(text).toContain(shows)
  })

  test('an album cover names its artist and year', async () => {
    const { call } = await seeded()
    const { text } = await call('/covers/albums/6.svg')
    expect(text).toContain('>Artaud — Luis Alberto Spinetta, 1973</title>')
  })

  test('answers 304 without a body when the client holds the same picture', async () => {
    const { call } = await seeded()
    const first = await call('/covers/artists/2.svg')
    const etag = first.headers.get('etag') as string
    for (const ifNoneMatch of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
      const again = await call('/covers/artists/2.svg', { headers: { 'if-none-match': ifNoneMatch } })
      expect(again.status).toBe(304)
      expect(again.text).toBe('')
      expect(again.headers.get('etag')).toBe(etag)
    }
    expect((await call('/covers/artists/2.svg', { headers: { 'if-none-match': '"other"' } })).status).toBe(200)
  })

  test('answers 412 with the current ETag when If-Match names another picture, as every tagged read does', async () => {
    const { call } = await seeded()
    const etag = (await call('/covers/albums/6.svg')).headers.get('etag') as string
    const refused = await call('/covers/albums/6.svg', { headers: { 'if-match': '"another"' } })
    expect(refused.status).toBe(412)
    expect(refused.headers.get('etag')).toBe(etag)
    for (const ifMatch of [etag, '*'])
      expect((await call('/covers/albums/6.svg', { headers: { 'if-match': ifMatch } })).status).toBe(200)
  })

  test('follows the record: replacing an artist changes its picture and its ETag', async () => {
    const { call } = await seeded()
    const before = await call('/covers/artists/3.svg')
    const put = await call('/api/v1/artists/3', {
      method: 'PUT',
      body: { name: 'Gustavo Cerati & <Amigos>', band: null },
      headers: asService,
    })
    expect(put.status).toBe(200)
    const after = await call('/covers/artists/3.svg', {
      headers: { 'if-none-match': before.headers.get('etag') ?? '' },
    })
    expect(after.status).toBe(200)
    expect(after.text).toContain('Gustavo Cerati &amp; &lt;Amigos&gt;')
    expect(after.headers.get('etag')).not.toBe(before.headers.get('etag'))
  })

  test('covers records added through the API too', async () => {
    const { call } = testApp()
    const created = await call('/api/v1/artists', { method: 'POST', body: { name: 'Nueva' }, headers: asService })
    expect((await call(`/covers/artists/${created.json.id}.svg`)).status).toBe(200)
  })

  test.each([
    '/covers/artists/33.svg',
    '/covers/albums/308.svg',
    '/covers/artists/0.svg',
    '/covers/artists/01.svg',
    '/covers/artists/1.png',
    '/covers/artists/1',
    '/covers/artists/abc.svg',
    '/covers/artists/99999999999999999999.svg',
  ])('%s is a 404 problem', async (path) => {
    const { call } = await seeded()
    const { status, headers, json } = await call(path)
    expect(status).toBe(404)
    expect(headers.get('content-type')).toBe('application/problem+json')
    expect(json).toMatchObject({ type: '/problems/not-found', status: 404 })
  })

  test('is not part of the published API document', async () => {
    const { call } = await seeded()
    const { json } = await call('/openapi.json')
    expect(Object.keys(json.paths).filter((path) => path.startsWith('/covers'))).toEqual([])
  })
})

test.each([
  ['1.svg', 1],
  ['260.svg', 260],
  ['9007199254740991.svg', 9007199254740991],
  ['9007199254740992.svg', undefined],
  ['1.svg.svg', undefined],
  ['-1.svg', undefined],
])('coverId(%p) is %p', (file, id) => {
  expect(coverId(file)).toBe(id as number)
})
