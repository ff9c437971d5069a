import { describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import type { Artist } from '../../src/model/artist.ts'
import { type ArtistSort, compareNames, fold } from '../../src/model/search.ts'
import { seedStore } from '../../src/seed/seed.ts'
import { openMemoryStore } from '../../src/store/document/memory.ts'
import { asService, testApp } from '../helpers.ts'
import { servedDocument } from '../support/openapi.ts'

const names = (json: { data: { name: string }[] }) => json.data.map((each) => each.name)

async function seeded() {
  const context = testApp()
  await seedStore(context.store, true)
  return context
}

describe('GET /api/v1/artists?q=', () => {
  test.each([
    ['garcia', ['Charly García']],
    ['GARCÍA', ['Charly García']],
    ['SPINETTA', ['Luis Alberto Spinetta']],
    ['serú', ['Charly García']],
    ['seru', ['Charly García']],
    ['Serú Girán', ['Charly García']],
    ['intoxicados', ['Pity Álvarez']],
    ['soda stereo', ['Gustavo Cerati']],
    ['nobody at all', []],
  ])('q=%s finds %p, by name or band, ignoring case and accents', async (q, expected) => {
    const { call } = await seeded()
    const { status, json } = await call(`/api/v1/artists?q=${encodeURIComponent(q)}&limit=100`)
    expect(status).toBe(200)
    expect(names(json)).toEqual(expected)
    expect(json.meta.total).toBe(expected.length)
  })

  test('an empty q is no filter', async () => {
    const { call } = await seeded()
    const { json } = await call('/api/v1/artists?q=')
    expect(json.meta).toEqual({ limit: 10, offset: 0, total: 32, next: '/api/v1/artists?limit=10&offset=10' })
  })

  test('meta.total counts the matches and meta.next keeps q, encoded, up to the last page', async () => {
    const { call } = await seeded()
    const seen: string[] = []
    let next: string | null = '/api/v1/artists?q=g%C3%BA&limit=2'
    const pages: unknown[] = []
    while (next) {
      const { json } = (await call(next)) as { json: { data: { name: string }[]; meta: { next: string | null } } }
      pages.push(json.meta)
      seen.push(...names(json))
      next = json.meta.next
    }
    // "gú" finds Gustavo, Miguel and Los Rodríguez, Andrés Calamaro's band.
    expect(seen).toEqual(['Gustavo Cerati', 'Andrés Calamaro', 'Miguel Mateos', 'Gustavo Santaolalla', 'Miguel Abuelo'])
    expect(pages[0]).toEqual({ limit: 2, offset: 0, total: 5, next: '/api/v1/artists?limit=2&offset=2&q=g%C3%BA' })
  })

  test('a q over 200 characters is a 400 problem naming it', async () => {
    const { call } = testApp()
    const { status, json } = await call(`/api/v1/artists?q=${'x'.repeat(201)}`)
    expect(status).toBe(400)
    expect(json.errors).toEqual([{ parameter: 'q', detail: 'must be a text of at most 200 characters' }])
  })
})

describe('GET /api/v1/artists?sort=', () => {
  async function withNames(...list: string[]) {
    const context = testApp()
    for (const name of list)
      await context.call('/api/v1/artists', { method: 'POST', body: { name }, headers: asService })
    return context
  }

  test('names sort as a Spanish reader expects: accents do not push Ávila after Zeta, ñ comes after n', async () => {
    const { call } = await withNames('Zeta', 'Ávila', 'ñandú', 'Nube', 'avila', 'Obrero')
    expect(names((await call('/api/v1/artists?sort=name')).json)).toEqual([
      'Ávila',
      'avila',
      'Nube',
      'ñandú',
      'Obrero',
      'Zeta',
    ])
    expect(names((await call('/api/v1/artists?sort=-name')).json)).toEqual([
      'Zeta',
      'Obrero',
      'ñandú',
      'Nube',
      'avila',
      'Ávila',
    ])
    expect(names((await call('/api/v1/artists?sort=id')).json)).toEqual([
      'Zeta',
      'Ávila',
      'ñandú',
      'Nube',
      'avila',
      'Obrero',
    ])
  })

  test('pages of a sorted search link to the next page with q and sort', async () => {
    const { call } = await seeded()
    const first = await call('/api/v1/artists?q=a&sort=-name&limit=3')
    expect(first.json.meta.next).toBe('/api/v1/artists?limit=3&offset=3&q=a&sort=-name')
    const second = await call(first.json.meta.next)
    const all = await call('/api/v1/artists?q=a&sort=-name&limit=100')
    expect([...names(first.json), ...names(second.json)]).toEqual(names(all.json).slice(0, 6))
  })

  test.each(['ID', 'name,id', '+name', 'year', ''])(
    'sort=%p is a 400 problem naming the allowed values',
    async (sort) => {
      const { call } = testApp()
      const { status, json } = await call(`/api/v1/artists?sort=${encodeURIComponent(sort)}`)
      expect(status).toBe(400)
      expect(json.errors).toEqual([{ parameter: 'sort', detail: 'must be one of id, -id, name, -name' }])
    },
  )

  test('the search and the name order follow every write: create, rename', async () => {
    const { call } = await withNames('Pappo', 'Nebbia')
    expect(names((await call('/api/v1/artists?q=pappo&sort=name')).json)).toEqual(['Pappo'])
    await call('/api/v1/artists', { method: 'POST', body: { name: 'Pappo’s Blues' }, headers: asService })
    await call('/api/v1/artists/1', {
      method: 'PUT',
      body: { name: 'Norberto Napolitano', band: 'Pappo’s Blues' },
      headers: asService,
    })
    expect(names((await call('/api/v1/artists?q=pappo&sort=name')).json)).toEqual([
      'Norberto Napolitano',
      'Pappo’s Blues',
    ])
    expect(names((await call('/api/v1/artists?sort=name')).json)).toEqual([
      'Nebbia',
      'Norberto Napolitano',
      'Pappo’s Blues',
    ])
    expect(names((await call('/api/v1/artists?q=napolitano')).json)).toEqual(['Norberto Napolitano'])
  })
})

describe('GET /api/v1/artists/{artistId}/albums?q=&sort=', () => {
  async function withAlbums() {
    const context = testApp()
    await context.call('/api/v1/artists', { method: 'POST', body: { name: 'Spinetta' }, headers: asService })
    for (const body of [
      { name: 'Artaud', year: 1973 },
      { name: 'Kamikaze', year: 1982 },
      { name: 'Sin fecha' },
      { name: 'Almendra', year: 1969 },
      { name: 'Ártico', year: 1982 },
    ])
      await context.call('/api/v1/artists/1/albums', { method: 'POST', body, headers: asService })
    return context
  }

  test.each([
    ['sort=year', ['Almendra', 'Artaud', 'Kamikaze', 'Ártico', 'Sin fecha']],
    ['sort=-year', ['Kamikaze', 'Ártico', 'Artaud', 'Almendra', 'Sin fecha']],
    ['sort=name', ['Almendra', 'Artaud', 'Ártico', 'Kamikaze', 'Sin fecha']],
    ['sort=id', ['Artaud', 'Kamikaze', 'Sin fecha', 'Almendra', 'Ártico']],
    ['sort=-id', ['Ártico', 'Almendra', 'Sin fecha', 'Kamikaze', 'Artaud']],
    ['sort=-name', ['Sin fecha', 'Kamikaze', 'Ártico', 'Artaud', 'Almendra']],
    ['year_from=1973&year_to=1982', ['Artaud', 'Kamikaze', 'Ártico']],
    ['year_from=1973', ['Artaud', 'Kamikaze', 'Ártico']],
    ['year_to=1973&sort=-year', ['Artaud', 'Almendra']],
    ['year_from=1982&year_to=1982&sort=name', ['Ártico', 'Kamikaze']],
    ['year_from=1990&year_to=1970', []],
    ['q=a&year_to=1980&sort=-id', ['Almendra', 'Artaud']],
    ['q=ART', ['Artaud', 'Ártico']],
    ['q=artico&sort=-year', ['Ártico']],
    ['q=a&sort=name&limit=2', ['Almendra', 'Artaud']],
  ])('%s → %p', async (query, expected) => {
    const { call } = await withAlbums()
    const { status, json } = await call(`/api/v1/artists/1/albums?${query}`)
    expect(status).toBe(200)
    expect(names(json)).toEqual(expected)
  })

  test('meta.next keeps the range of years, and the totals count within it', async () => {
    const { call } = await withAlbums()
    const first = await call('/api/v1/artists/1/albums?year_from=1970&year_to=1990&sort=-id&limit=2')
    expect(first.json.meta).toEqual({
      limit: 2,
      offset: 0,
      total: 3,
      next: '/api/v1/artists/1/albums?limit=2&offset=2&sort=-id&year_from=1970&year_to=1990',
    })
    expect(names((await call(first.json.meta.next)).json)).toEqual(['Artaud'])
  })

  test.each(['1970.5', '-1', '10000', 'abc', ''])('year_from=%p is a 400 problem naming it', async (year) => {
    const { call } = await withAlbums()
    const { status, json } = await call(`/api/v1/artists/1/albums?year_from=${year}`)
    expect(status).toBe(400)
    expect(json.errors).toEqual([{ parameter: 'year_from', detail: expect.stringContaining('a year from 0 to 9999') }])
  })

  test('meta.next keeps q and sort', async () => {
    const { call } = await withAlbums()
    const { json } = await call('/api/v1/artists/1/albums?q=a&sort=-year&limit=2')
    expect(json.meta).toEqual({
      limit: 2,
      offset: 0,
      total: 5,
      next: '/api/v1/artists/1/albums?limit=2&offset=2&q=a&sort=-year',
    })
  })

  test('an unknown sort is a 400 problem naming the allowed values; an unknown artist stays 404', async () => {
    const { call } = await withAlbums()
    expect((await call('/api/v1/artists/1/albums?sort=genre')).json.errors).toEqual([
      { parameter: 'sort', detail: 'must be one of id, -id, year, -year, name, -name' },
    ])
    expect((await call('/api/v1/artists/9/albums?q=x')).status).toBe(404)
  })
})

describe('the store’s search and name order, against a plain filter and sort', () => {
  const letters = fc.constantFrom('a', 'á', 'A', 'e', 'é', 'n', 'ñ', 'Ñ', 'o', ' ', 'z', 'Z', '1', '2', '\u0000')
  const text = fc.string({ unit: letters, minLength: 1, maxLength: 6 })
  const artistFields = fc.record({ name: text, band: fc.option(text, { nil: undefined }) })
  const write = fc.oneof(
    artistFields.map((fields) => ({ kind: 'insert' as const, fields })),
    fc.tuple(fc.nat(), artistFields).map(([at, fields]) => ({ kind: 'replace' as const, at, fields })),
    fc.constantFrom<ArtistSort>('id', '-id', 'name', '-name').map((sort) => ({ kind: 'read' as const, sort })),
  )

  test('any writes, reads between them, then any search in any order: the same artists in the same order', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(write, { maxLength: 40 }),
        fc.string({ unit: letters, maxLength: 3 }),
        fc.constantFrom<ArtistSort>('id', '-id', 'name', '-name'),
        fc.nat(5),
        fc.integer({ min: 1, max: 8 }),
        async (writes, q, sort, offset, limit) => {
          const store = openMemoryStore()
          for (const step of writes) {
            const count = (await store.artists.list({ limit: 1, offset: 0 })).total
            if (step.kind === 'insert') await store.artists.insert(step.fields)
            else if (step.kind === 'replace' && count > 0)
              await store.artists.replace({ id: (step.at % count) + 1, ...step.fields })
            // Reads build the search text and the name order, which the writes after them must keep up to date.
            else if (step.kind === 'read')
              await store.artists.list({ limit: 1, offset: 0 }, { q: 'a', sort: step.sort })
          }
          const all = (await store.artists.list({ limit: 1000, offset: 0 })).items as Artist[]
          const needle = fold(q).replaceAll('\u0000', '')
          const matches = all.filter(
            (artist) =>
              fold(artist.name).replaceAll('\u0000', '').includes(needle) ||
              fold(artist.band ?? '')
                .replaceAll('\u0000', '')
                .includes(needle),
          )
          const byName = (a: Artist, b: Artist) => compareNames(a.name, b.name) || a.id - b.id
          const ordered =
            sort === 'id'
              ? matches
              : sort === '-id'
                ? matches.toReversed()
                : sort === 'name'
                  ? matches.toSorted(byName)
                  : matches.toSorted(byName).reverse()
          const page = await store.artists.list({ limit, offset }, { q, sort })
          expect(page.total).toBe(ordered.length)
          expect(page.items.map((artist) => artist.id)).toEqual(
            ordered.slice(offset, offset + limit).map((artist) => artist.id),
          )
        },
      ),
      { numRuns: 300, seed: 20251125 },
    )
  })
})

describe('/openapi.json', () => {
  test.each([
    ['/api/v1/artists', ['id', '-id', 'name', '-name'], ['limit', 'offset', 'q', 'sort']],
    [
      '/api/v1/artists/{artistId}/albums',
      ['id', '-id', 'year', '-year', 'name', '-name'],
      ['limit', 'offset', 'q', 'year_from', 'year_to', 'kind', 'sort'],
    ],
  ])('documents q and sort on %s as extensions of the published contract', async (path, sorts, names) => {
    const parameters = (await servedDocument()).paths[path]?.get?.parameters ?? []
    const query = parameters.filter((parameter) => parameter.in === 'query')
    const byName = Object.fromEntries(query.map((parameter) => [parameter.name, parameter]))
    expect(Object.keys(byName)).toEqual(names)
    expect(byName.q?.schema).toMatchObject({ type: 'string', maxLength: 200 })
    expect(byName.sort?.schema).toMatchObject({ type: 'string', enum: sorts, default: 'id' })
    for (const name of ['q', 'sort']) expect(byName[name]?.description).toContain('extension of the published contract')
  })
})
