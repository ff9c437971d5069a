/**
 * The published OpenAPI document (`argentine-rock-legends.openapi.json`, a copy of the one other teams generate
 * their clients from) read strictly: every answer whose status it lists must match its schema, and every other
 * answer must be in our own `/openapi.json`. Across the seeded catalogue, and again after every write.
 */
import { beforeAll, describe, expect, test } from 'bun:test'
import { createApp } from '../../src/app.ts'
import { seedStore } from '../../src/seed/seed.ts'
import { openMemoryStore } from '../../src/store/document/memory.ts'
import { expectDocumented, servedDocument } from '../support/openapi.ts'
import published from './argentine-rock-legends.openapi.json' with { type: 'json' }
import { type CallInput, publishedClient, publishedOperations } from './published-client.ts'

const KEY = 'contract-key'

interface Artist {
  id: number
  name: string
  description?: string
  image?: string
  band?: string
}

/** The places in `value` that hold null, as JSON Pointers, but `meta.next`, which the document declares nullable. */
function nulls(value: unknown, at = ''): string[] {
  if (value === null) return at === '/meta/next' ? [] : [at || '/']
  if (typeof value !== 'object') return []
  return Object.entries(value as object).flatMap(([key, nested]) => nulls(nested, `${at}/${key}`))
}

/** A seeded app, and the client a team would generate from the published document, pointed at it. */
async function world() {
  const store = openMemoryStore()
  await seedStore(store, true)
  const app = createApp({ store, apiKeys: [KEY], report: () => {} })
  const send = async (request: Request) => {
    const response = await app.handle(request)
    const text = await response.text()
    // Whatever the published document leaves out must be in ours.
    const url = new URL(request.url)
    const { status, headers } = response
    await expectDocumented({ method: request.method, path: url.pathname + url.search, status, headers, text })
    return new Response(text, { status, headers })
  }
  const client = publishedClient(send, KEY)
  const call = async (operationId: string, input?: CallInput) => {
    const answer = await client(operationId, input)
    expect(nulls(answer.json), `${operationId} ${JSON.stringify(input)}`).toEqual([])
    return answer
  }
  return { call }
}

type Call = Awaited<ReturnType<typeof world>>['call']

/** Every artist, following `meta.next` from the first page of `limit` items, each page checked on the way. */
async function allArtists(call: Call, limit?: number): Promise<Artist[]> {
  const artists: Artist[] = []
  let query: Record<string, string> | undefined = limit === undefined ? {} : { limit: String(limit) }
  while (query) {
    const { status, json } = (await call('getAllArtists', { query })) as {
      status: number
      json: { data: Artist[]; meta: { next: string | null } }
    }
    expect(status).toBe(200)
    artists.push(...json.data)
    query = json.meta.next ? Object.fromEntries(new URL(json.meta.next, 'http://x').searchParams) : undefined
  }
  return artists
}

/** Reads everything a client can read (every page, artist and album list), each answer checked. */
async function readEverything(call: Call): Promise<Artist[]> {
  const artists = await allArtists(call)
  for (const artist of artists) {
    expect((await call('getArtist', { path: { artistId: artist.id } })).json).toEqual(artist)
    const albums = await call('getAllAlbums', { path: { artistId: artist.id }, query: { limit: 100 } })
    expect(albums.status).toBe(200)
  }
  return artists
}

describe('the published OpenAPI document, read strictly', () => {
  test('knows the operations the server serves', () => {
    expect([...publishedOperations.keys()].sort()).toEqual(
      [
        'createAlbum',
        'createArtist',
        'createUser',
        'deleteArtist',
        'getAllAlbums',
        'getAllArtists',
        'getArtist',
        'loginUser',
        'updateArtist',
      ].sort(),
    )
  })

  test('the seeded catalogue: every page, artist and album list matches it', async () => {
    const { call } = await world()
    const artists = await readEverything(call)
    expect(artists).toHaveLength(32)
    // Some seeded artists have no band: their answers leave it out rather than saying null.
    expect(artists.some((artist) => !('band' in artist))).toBe(true)
  })

  // The document's own examples for `limit` and `offset`, and a limit above the page size, which it does not bound.
  test.each([
    [{ limit: 10 }, 10],
    [{ limit: 20 }, 20],
    [{ limit: 50 }, 32],
    [{ offset: 1 }, 10],
    [{ offset: 23 }, 9],
    [{ offset: 456 }, 0],
    [{ limit: 150 }, 32],
    [{ limit: 9_223_372_036_854_775_807n.toString() }, 32],
  ])('a list with %o is an answer it accepts', async (query, length) => {
    const { call } = await world()
    const { status, json } = (await call('getAllArtists', { query })) as {
      status: number
      json: { data: unknown[]; meta: { limit: number } }
    }
    expect(status).toBe(200)
    expect(json.data).toHaveLength(length)
    expect(json.meta.limit).toBeLessThanOrEqual(100)
  })

  test('after every write it offers, the answers and everything read back still match it', async () => {
    const { call } = await world()
    const requestExamples = (operationId: string) => {
      const { template, method } = publishedOperations.get(operationId) as { template: string; method: string }
      const operation = (published.paths as Record<string, Record<string, { requestBody?: unknown }>>)[template]?.[
        method.toLowerCase()
      ] as { requestBody?: { content: { 'application/json': { examples?: Record<string, { value: unknown }> } } } }
      return Object.values(operation.requestBody?.content['application/json'].examples ?? {}).map(({ value }) => value)
    }

    // Create: the document's examples, then the least a client may send.
    const created: Artist[] = []
    for (const body of [...requestExamples('createArtist'), { name: 'Moris' }]) {
      const answer = await call('createArtist', { body })
      expect(answer.status).toBe(201)
      created.push(answer.json as Artist)
      await readEverything(call)
    }
    expect(created[2]).toStrictEqual({ id: 35, name: 'Moris' })

    // Update: what a generated client does, read an artist, change it, send the whole object back.
    const moris = (await call('getArtist', { path: { artistId: 35 } })).json as Artist
    const updated = await call('updateArtist', {
      path: { artistId: 35 },
      body: { ...moris, band: 'Los Beatniks' },
    })
    expect(updated.json).toStrictEqual({ id: 35, name: 'Moris', band: 'Los Beatniks' })
    await readEverything(call)
    // A PUT that leaves a field out unsets it: the answer leaves it out too.
    const replaced = await call('updateArtist', { path: { artistId: 35 }, body: { name: 'Moris' } })
    expect(replaced.json).toStrictEqual({ id: 35, name: 'Moris' })
    await readEverything(call)

    // Albums: with a year, without one, and with the nulls an older client may still send.
    for (const body of [
      { name: '30 minutos de vida', year: 1970 },
      { name: 'Ropa sucia' },
      { name: 'X', year: null },
    ]) {
      const answer = await call('createAlbum', { path: { artistId: 35 }, body })
      expect(answer.status).toBe(201)
      await call('getAllAlbums', { path: { artistId: 35 } })
    }
    await readEverything(call)

    // The deprecated delete, and refusals the document lists.
    expect((await call('deleteArtist', { path: { artistId: 1 } })).status).toBe(400)
    expect((await call('createArtist', { body: { name: '' } })).status).toBe(400)
    expect((await call('updateArtist', { path: { artistId: 1 }, body: { id: 2, name: 'X' } })).status).toBe(400)
    expect((await call('getArtist', { path: { artistId: 999 } })).status).toBe(404)

    // Accounts.
    for (const body of requestExamples('createUser')) expect((await call('createUser', { body })).status).toBe(201)
    const [login] = requestExamples('loginUser')
    expect((await call('loginUser', { body: login })).status).toBe(200)
    const refused = await call('loginUser', { body: { ...(login as object), password: 'wrong-password' } })
    expect(refused.status).toBe(401)
    // Statuses the published document does not list are answered all the same, and documented in ours.
    const duplicate = await call('createUser', { body: requestExamples('createUser')[0] })
    expect([duplicate.status, duplicate.listed]).toEqual([409, false])
    await readEverything(call)
  })
})

describe('our own /openapi.json', () => {
  let document: Awaited<ReturnType<typeof servedDocument>>
  beforeAll(async () => {
    document = await servedDocument()
  })

  test('declares no optional response field nullable: unset fields are left out', () => {
    for (const name of ['Artist', 'Album', 'User', 'Session', 'ApiKey', 'NewApiKey']) {
      const schema = document.components.schemas[name] as { properties: Record<string, unknown> }
      expect(nulls(JSON.parse(JSON.stringify(schema).replaceAll('"null"', 'null')), name)).toEqual([])
    }
  })

  test('documents the statuses the published document leaves out, each with its problem type', () => {
    const statuses = (path: string, method: string) => Object.keys(document.paths[path]?.[method]?.responses ?? {})
    expect(statuses('/api/v1/artists', 'post')).toEqual(expect.arrayContaining(['401', '413', '415', '503']))
    expect(statuses('/api/v1/artists/{artistId}', 'put')).toEqual(expect.arrayContaining(['401', '404']))
    expect(statuses('/api/v1/user/signup', 'post')).toEqual(expect.arrayContaining(['409', '429']))
    expect(statuses('/api/v1/user/login', 'post')).toEqual(expect.arrayContaining(['429']))
  })
})
