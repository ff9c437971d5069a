import { describe, expect, test } from 'bun:test'
import { addArtists, asService, testApp } from '../helpers.ts'

const artaud = { name: 'Artaud', year: 1973 }
const nextYear = new Date().getUTCFullYear() + 1

/** An app with artists 1 and 2, and a helper that adds an album to artist 1. */
async function withArtists() {
  const context = testApp()
  await addArtists(context.store, 2)
  const addAlbum = (body: unknown, artistId = 1) =>
    context.call(`/api/v1/artists/${artistId}/albums`, { method: 'POST', body, headers: asService })
  return { ...context, addAlbum }
}

describe('GET /api/v1/artists/{artistId}/albums', () => {
  test('an unknown artist is 404', async () => {
    const { call } = await withArtists()
    const { status, json } = await call('/api/v1/artists/3/albums')
    expect(status).toBe(404)
    expect(json).toMatchObject({ type: '/problems/not-found', status: 404 })
  })

  test('a known artist without albums is an empty page', async () => {
    const { call } = await withArtists()
    const { status, json } = await call('/api/v1/artists/1/albums')
    expect(status).toBe(200)
    expect(json).toEqual({ data: [], meta: { limit: 10, offset: 0, total: 0, next: null } })
  })

  test('lists only that artist’s albums, in id order, with a next link', async () => {
    const { call, addAlbum } = await withArtists()
    for (let i = 1; i <= 4; i++) {
      await addAlbum({ name: `One ${i}` }, 1)
      await addAlbum({ name: `Two ${i}` }, 2)
    }
    const { json } = await call('/api/v1/artists/2/albums?limit=3')
    expect(json.data.map((album: { name: string }) => album.name)).toEqual(['Two 1', 'Two 2', 'Two 3'])
    expect(json.data.every((album: { artistId: number }) => album.artistId === 2)).toBe(true)
    expect(json.meta).toEqual({ limit: 3, offset: 0, total: 4, next: '/api/v1/artists/2/albums?limit=3&offset=3' })
    const last = await call(json.meta.next)
    expect(last.json.data.map((album: { name: string }) => album.name)).toEqual(['Two 4'])
    expect(last.json.meta.next).toBeNull()
  })

  test.each(['limit=0', 'offset=-3', 'limit=ten'])('rejects ?%s with 400', async (query) => {
    const { call } = await withArtists()
    expect((await call(`/api/v1/artists/1/albums?${query}`)).status).toBe(400)
  })
})

describe('POST /api/v1/artists/{artistId}/albums', () => {
  test('creates with 201 and a Location that can be read back', async () => {
    const { call, addAlbum } = await withArtists()
    const { status, json, headers } = await addAlbum({ ...artaud, id: 77 })
    expect(status).toBe(201)
    expect(json).toStrictEqual({ id: 1, artistId: 1, ...artaud, kind: 'studio' })
    expect(headers.get('location')).toBe('/api/v1/artists/1/albums/1')
    const read = await call(headers.get('location') as string)
    expect(read.status).toBe(200)
    expect(read.json).toStrictEqual(json)
  })

  test('leaves an unset year and image out of the answer, and makes it a studio album; null is the same as leaving them out', async () => {
    const { addAlbum } = await withArtists()
    for (const body of [{ name: 'Artaud' }, { name: 'Artaud', year: null, image: null }]) {
      const { status, json } = await addAlbum(body)
      expect(status).toBe(201)
      expect(Object.keys(json)).toEqual(['id', 'artistId', 'name', 'kind'])
      expect(json.kind).toBe('studio')
    }
  })

  test('an album is only found under its own artist', async () => {
    const { call, addAlbum } = await withArtists()
    await addAlbum(artaud)
    expect((await call('/api/v1/artists/2/albums/1')).status).toBe(404)
    expect((await call('/api/v1/artists/1/albums/2')).status).toBe(404)
  })

  test('adding to an unknown artist is 404 and changes nothing', async () => {
    const { addAlbum, store } = await withArtists()
    const { status } = await addAlbum(artaud, 9)
    expect(status).toBe(404)
    expect(await store.albums.get(1)).toBeUndefined()
  })

  test.each([
    ['year 1900', { name: 'A', year: 1900 }, 201],
    ['next year', { name: 'A', year: nextYear }, 201],
    ['a null year', { name: 'A', year: null }, 201],
    ['no year', { name: 'A' }, 201],
    ['year 1899', { name: 'A', year: 1899 }, 400],
    ['the year after next', { name: 'A', year: nextYear + 1 }, 400],
    ['a fractional year', { name: 'A', year: 1973.5 }, 400],
    ['a year as a string', { name: 'A', year: '1973' }, 400],
    ['no name', { year: 1973 }, 400],
    ['a blank name', { name: ' ' }, 400],
    ['an unknown property', { name: 'A', tracks: 9 }, 400],
    ['a bad image', { name: 'A', image: 'javascript:alert(1)' }, 400],
  ])('%s → %d', async (_, body, status) => {
    const { addAlbum } = await withArtists()
    const response = await addAlbum(body)
    expect(response.status).toBe(status)
    if (status === 400) expect(response.json.errors[0].pointer).toMatch(/^\/\w+$/)
  })
})
