/**
 * What one account can add is bounded. An artist holds at most `MAX_ALBUMS_PER_ARTIST` albums, whoever adds them (409,
 * checked in the store's write, so parallel requests cannot pass it together), and an account adds at most so many
 * artists and albums an hour (429 with `Retry-After`; an operator's service key is not counted). Runs over the memory
 * store and, in `bun run test:sql`, over PostgreSQL.
 */
import { describe, expect, test } from 'bun:test'
import { createApp } from '../../src/app.ts'
import { CATALOGUE_LIMITS, type CatalogueLimits } from '../../src/catalogue/service.ts'
import { MAX_ALBUMS_PER_ARTIST, type Store } from '../../src/store/store.ts'
import { bearer, CARLOS, manualClock, signedIn } from '../accounts/helpers.ts'
import { asService, SERVICE_KEY, testApp } from '../helpers.ts'
import { testStore } from '../support/backends.ts'
import { expectDocumented } from '../support/openapi.ts'

const HOUR = 3_600_000
const ARTIST_ALBUMS = '/api/v1/artists/1/albums'

/** An artist ("Prolific", id 1) loaded with `count` albums, the way an operator's catalogue is loaded. */
async function prolific(store: Store, count: number) {
  const albums = Array.from({ length: count }, (_, i) => ({ name: `Disco ${i + 1}`, year: 1970, image: null }))
  await store.load([{ name: 'Prolific', image: null, albums }])
}

const addAlbum = (call: ReturnType<typeof testApp>['call'], headers: Record<string, string>, name = 'Uno más') =>
  call(ARTIST_ALBUMS, { method: 'POST', body: { name }, headers })

describe(`at most ${MAX_ALBUMS_PER_ARTIST} albums per artist`, () => {
  test('the album past the maximum is 409 naming it, for a service key too; the artist keeps what it has', async () => {
    const { call, store } = testApp()
    await prolific(store, MAX_ALBUMS_PER_ARTIST - 1)
    expect((await addAlbum(call, asService, 'The last one')).status).toBe(201)
    const refused = await addAlbum(call, asService)
    expect(refused.status).toBe(409)
    expect(refused.headers.get('content-type')).toBe('application/problem+json')
    expect(refused.json).toMatchObject({ type: '/problems/conflict', status: 409 })
    expect(refused.json.detail).toBe(
      `Artist 1 already has ${MAX_ALBUMS_PER_ARTIST} albums, the most an artist may have: no album can be added to it.`,
    )
    const { token } = await signedIn(call)
    expect((await addAlbum(call, bearer(token))).status).toBe(409)
    const list = await call(`${ARTIST_ALBUMS}?limit=1&offset=${MAX_ALBUMS_PER_ARTIST - 1}`)
    expect(list.json.meta.total).toBe(MAX_ALBUMS_PER_ARTIST)
    expect(list.json.data[0].name).toBe('The last one')
  })

  test('concurrent additions cannot pass the maximum together', async () => {
    const { call, store } = testApp()
    await prolific(store, MAX_ALBUMS_PER_ARTIST - 5)
    await store.load([{ name: 'Other', image: null, albums: [] }])
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        i % 4 === 3
          ? call('/api/v1/artists/2/albums', { method: 'POST', body: { name: `Other ${i}` }, headers: asService })
          : addAlbum(call, asService, `Burst ${i}`),
      ),
    )
    const toFull = answers.filter((_, i) => i % 4 !== 3).map((answer) => answer.status)
    expect(toFull.filter((status) => status === 201)).toHaveLength(5)
    expect(toFull.filter((status) => status === 409)).toHaveLength(25)
    // Albums of another artist in the same batches are not held back by it.
    expect(answers.filter((_, i) => i % 4 === 3).every((answer) => answer.status === 201)).toBe(true)
    expect((await call(`${ARTIST_ALBUMS}?limit=1`)).json.meta.total).toBe(MAX_ALBUMS_PER_ARTIST)
    expect((await call('/api/v1/artists/2/albums?limit=1')).json.meta.total).toBe(10)
  })
})

/** One request, as `testApp().call` takes it. */
interface CallInit {
  method?: string
  body?: unknown
  headers?: Record<string, string>
}

/** An app over this run's backend with `limits` and a clock the test moves, called as `testApp` calls it. */
function limitedApp(limits: CatalogueLimits, store: Store = testStore()) {
  const clock = manualClock()
  const app = createApp({ store, apiKeys: [SERVICE_KEY], report: () => {}, now: clock.now, catalogueLimits: limits })
  const call = async (path: string, { method = 'GET', body, headers = {} }: CallInit = {}) => {
    const init: RequestInit = { method, headers: { ...headers } }
    if (body !== undefined) {
      init.body = JSON.stringify(body)
      ;(init.headers as Record<string, string>)['content-type'] = 'application/json'
    }
    const response = await app.handle(new Request(`http://localhost${path}`, init))
    const text = await response.text()
    await expectDocumented({ method, path, status: response.status, headers: response.headers, text })
    // biome-ignore lint/suspicious/noExplicitAny: tests read whatever JSON a response holds, field by field
    const json: any = text ? JSON.parse(text) : undefined
    return { status: response.status, headers: response.headers, text, json }
  }
  return { call, store, clock }
}

const THREE_AN_HOUR: CatalogueLimits = {
  artistsPerAccount: { limit: 3, windowMs: HOUR },
  albumsPerAccount: { limit: 3, windowMs: HOUR },
}

describe('artists and albums per account per hour', () => {
  test('the server runs with 1,000 artists and 1,000 albums per account per hour', () => {
    expect(CATALOGUE_LIMITS).toEqual({
      artistsPerAccount: { limit: 1000, windowMs: HOUR },
      albumsPerAccount: { limit: 1000, windowMs: HOUR },
    })
  })

  test("an account past its artists' rate gets 429 with Retry-After, for an hour; service keys are not counted", async () => {
    const { call, clock } = limitedApp(THREE_AN_HOUR)
    const { token } = await signedIn(call)
    const create = (headers: Record<string, string>) =>
      call('/api/v1/artists', { method: 'POST', body: { name: 'Nuevo' }, headers })
    for (let i = 0; i < 3; i++) expect((await create(bearer(token))).status).toBe(201)
    const refused = await create(bearer(token))
    expect(refused.status).toBe(429)
    expect(refused.headers.get('content-type')).toBe('application/problem+json')
    expect(refused.headers.get('retry-after')).toBe('3600')
    expect(refused.json).toMatchObject({ type: '/problems/too-many-requests', status: 429 })
    expect(refused.json.detail).toBe(
      'Your account has added 3 artists in the last hour, the most it may add in that time. Try again in 3600 seconds.',
    )
    // The operator is not counted; another account has its own count; albums have their own.
    for (let i = 0; i < 5; i++) expect((await create(asService)).status).toBe(201)
    const maria = await signedIn(call, { ...CARLOS, email: 'maria@rock-legends.com' })
    expect((await create(bearer(maria.token))).status).toBe(201)
    expect((await addAlbum(call, bearer(token))).status).toBe(201)
    clock.advance(HOUR - 1000)
    expect((await create(bearer(token))).headers.get('retry-after')).toBe('1')
    clock.advance(1000)
    expect((await create(bearer(token))).status).toBe(201)
  })

  test("an account's parallel additions cannot pass its rate together; refused additions do not count", async () => {
    const { call, store } = limitedApp(THREE_AN_HOUR)
    await prolific(store, MAX_ALBUMS_PER_ARTIST)
    await store.load([{ name: 'Room', image: null, albums: [] }])
    const { token } = await signedIn(call)
    // Refused by the store (unknown artist, full artist): taken back, so they count nothing.
    expect(
      (await call('/api/v1/artists/99/albums', { method: 'POST', body: { name: 'X' }, headers: bearer(token) })).status,
    ).toBe(404)
    for (let i = 0; i < 4; i++) expect((await addAlbum(call, bearer(token))).status).toBe(409)
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        call('/api/v1/artists/2/albums', { method: 'POST', body: { name: `Burst ${i}` }, headers: bearer(token) }),
      ),
    )
    const statuses = answers.map((answer) => answer.status)
    expect(statuses.filter((status) => status === 201)).toHaveLength(3)
    expect(statuses.filter((status) => status === 429)).toHaveLength(9)
    expect((await call('/api/v1/artists/2/albums?limit=1')).json.meta.total).toBe(3)
  })
})

describe('after an album is removed', () => {
  test('a full artist takes one album again, and only one', async () => {
    const { call, store } = testApp()
    await prolific(store, MAX_ALBUMS_PER_ARTIST)
    expect((await addAlbum(call, asService)).status).toBe(409)
    expect((await call(`${ARTIST_ALBUMS}/3`, { method: 'DELETE', headers: asService })).status).toBe(204)
    expect((await addAlbum(call, asService, 'In its place')).status).toBe(201)
    expect((await addAlbum(call, asService)).status).toBe(409)
    expect((await call(`${ARTIST_ALBUMS}?limit=1`)).json.meta.total).toBe(MAX_ALBUMS_PER_ARTIST)
  })

  test("an account's rate of new albums counts additions: a removal gives none back", async () => {
    const { call, store } = limitedApp(THREE_AN_HOUR)
    await prolific(store, 0)
    const { token } = await signedIn(call)
    const added = []
    for (const name of ['A', 'B', 'C']) added.push(await addAlbum(call, bearer(token), name))
    expect(added.map((answer) => answer.status)).toEqual([201, 201, 201])
    const removed = await call(`${ARTIST_ALBUMS}/${added[0]?.json.id}`, { method: 'DELETE', headers: bearer(token) })
    expect(removed.status).toBe(204)
    const refused = await addAlbum(call, bearer(token), 'D')
    expect(refused.status).toBe(429)
    expect(refused.headers.get('retry-after')).toBeTruthy()
  })
})
