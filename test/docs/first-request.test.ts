/**
 * `/openapi.json` is the same bytes whatever a server answered before it: a fresh app answers one request first (every
 * route the app has, each method, with a service key and a body; the usual errors; with --fixtures, every control),
 * then the document, which must equal, byte for byte, that of a fresh app asked for the document first. The routes are
 * read from the app, so a route added later is in the table with no work of its own.
 */
import { describe, expect, test } from 'bun:test'
import { createApp } from '../../src/app.ts'
import { openMemoryStore } from '../../src/store/document/memory.ts'
import { KEY as FIXTURES_KEY, fixtureWorld } from '../fixtures/support.ts'
import { cheapPasswords } from '../support/passwords.ts'

const KEY = 'first-request-key'

/** One kind of first request: what it is called, and the request (made fresh for each app). */
interface FirstRequest {
  name: string
  request: (key: string) => Request
}

/** A request to `path` with `method`; writes carry the service key and a small JSON body, as a client's would. */
const ask =
  (method: string, path: string, init: { headers?: Record<string, string>; body?: string } = {}) =>
  (key: string) => {
    const write = method !== 'GET' && method !== 'HEAD'
    const headers = { 'x-api-key': key, ...(write ? { 'content-type': 'application/json' } : {}), ...init.headers }
    const body = init.body ?? (write ? JSON.stringify({ name: 'First request', year: 1975 }) : undefined)
    return new Request(`http://localhost${path}`, { method, headers, body })
  }

/** `/api/v1/artists/:artistId` with its parameters filled in: 1 for each, `x` for a wildcard. */
const concrete = (path: string) => path.replace(/:[A-Za-z]+/g, '1').replace('*', 'x')

/** A request to each route of `routes`, by its method. */
const everyRoute = (routes: readonly { method: string; path: string }[]): FirstRequest[] =>
  routes.map(({ method, path }) => ({ name: `${method} ${path}`, request: ask(method, concrete(path)) }))

/** The answers that come from no route's handler, or from a refusal before it. */
const ERRORS: FirstRequest[] = [
  { name: 'an unknown path (404)', request: ask('GET', '/no/such/path') },
  { name: 'a method the path has not (405)', request: ask('PATCH', '/api/v1/artists') },
  { name: 'a list with a limit refused (400)', request: ask('GET', '/api/v1/artists?limit=0') },
  { name: 'an artist id refused (400)', request: ask('GET', '/api/v1/artists/abc') },
  { name: 'an unknown artist (404)', request: ask('GET', '/api/v1/artists/99999') },
  {
    name: 'a write without credentials (401)',
    request: ask('POST', '/api/v1/artists', { headers: { 'x-api-key': '' } }),
  },
  { name: 'malformed JSON (400)', request: ask('POST', '/api/v1/artists', { body: '{"name":' }) },
  {
    name: 'a body that is not JSON (415)',
    request: ask('POST', '/api/v1/artists', { headers: { 'content-type': 'text/plain' } }),
  },
  {
    name: 'a body with an unknown field (400)',
    request: ask('PUT', '/api/v1/artists/1', { body: '{"name":"A","x":1}' }),
  },
  {
    name: 'an album refused (400)',
    request: ask('POST', '/api/v1/artists/1/albums', { body: '{"name":"A","year":1800}' }),
  },
  {
    name: 'the user of no token (401)',
    request: ask('GET', '/api/v1/user/me', { headers: { authorization: 'Bearer rl_tok_x' } }),
  },
  { name: 'HEAD of an artist', request: ask('HEAD', '/api/v1/artists/1') },
  { name: 'OPTIONS of the artists', request: ask('OPTIONS', '/api/v1/artists') },
]

/** The body of `/openapi.json` after `first` (none: the document first). */
async function documentAfter(
  handle: (request: Request) => Response | Promise<Response>,
  key: string,
  first?: FirstRequest,
) {
  if (first) {
    const answer = await handle(first.request(key))
    // Some answers are streams (the events, a backup): their route has run, and their body is not needed.
    await answer.body?.cancel()
  }
  const document = await handle(new Request('http://localhost/openapi.json'))
  expect(document.status).toBe(200)
  return document.text()
}

const plainApp = () => {
  const app = createApp({
    store: openMemoryStore(),
    apiKeys: [KEY],
    passwords: cheapPasswords,
    report: () => {},
  })
  return (request: Request) => app.handle(request)
}

const fixturesApp = async () => {
  const world = await fixtureWorld()
  return (request: Request) => world.front.fetch(request, (inner) => world.app.handle(inner))
}

// Asked before any test: the document of a fresh app that has answered nothing.
const expected = {
  plain: await documentAfter(plainApp(), KEY),
  fixtures: await documentAfter(await fixturesApp(), FIXTURES_KEY),
}

const plainRoutes = createApp({ store: openMemoryStore() }).routes
const fixtureRoutes = (await fixtureWorld()).app.routes

describe('/openapi.json after a first request of another kind', () => {
  test.each([...everyRoute(plainRoutes), ...ERRORS].map((first) => [first.name, first] as const))(
    'is the same bytes after %s',
    async (_, first) => {
      expect(await documentAfter(plainApp(), KEY, first)).toBe(expected.plain)
    },
  )
})

describe('/openapi.json of a --fixtures server after a first request of another kind', () => {
  const armFault: FirstRequest = {
    name: 'a fault armed with every field (POST /__admin/faults)',
    request: ask('POST', '/__admin/faults', {
      body: JSON.stringify({ method: 'get', path: '/api/v1/*', status: 503, delay_ms: 1, times: 2, after: 1 }),
    }),
  }
  const controls = everyRoute(fixtureRoutes.filter(({ path }) => path.startsWith('/__admin')))
  const namespaced: FirstRequest = {
    name: 'a read in a namespace of its own',
    request: ask('GET', '/api/v1/artists/1', { headers: { 'rock-legends-namespace': 'first' } }),
  }
  test.each([armFault, namespaced, ...controls, ...ERRORS].map((first) => [first.name, first] as const))(
    'is the same bytes after %s',
    async (_, first) => {
      expect(await documentAfter(await fixturesApp(), FIXTURES_KEY, first)).toBe(expected.fixtures)
    },
  )

  test('the fault of the table is armed (201): its route ran to the end', async () => {
    const handle = await fixturesApp()
    expect((await handle(armFault.request(FIXTURES_KEY))).status).toBe(201)
    expect(await documentAfter(handle, FIXTURES_KEY)).toBe(expected.fixtures)
  })
})
