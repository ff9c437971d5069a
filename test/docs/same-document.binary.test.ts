/**
 * Replicas of one build publish one document: two executables started alike, one asked for `/openapi.json` first, the
 * other after answering writes, reads, errors and (with --fixtures) the fixture controls, serve the same bytes under
 * the same `ETag` to clients that reached them by the same name, and each answers 304 to the other's tag.
 */
import { afterEach, beforeAll, describe, expect, test } from 'bun:test'
import { ensureBinary, type RunningBinary, startBinary } from '../support/binary.ts'

const KEY = 'same-document-key'
// Both are reached by the same name, as replicas behind one load balancer are: the document names that origin.
const HOST = { host: 'api.example.com' }
const running: RunningBinary[] = []

beforeAll(() => ensureBinary(), 120_000)
afterEach(async () => {
  await Promise.all(running.splice(0).map((server) => server.stop('SIGKILL')))
})

async function start(flags: string[]) {
  const server = await startBinary([
    '--port',
    '0',
    '--data',
    ':memory:',
    '--seed',
    '--log',
    'off',
    '--api-key',
    KEY,
    ...flags,
  ])
  running.push(server)
  return server
}

/** The requests one replica answers before anyone asks it for the document. */
const FIRST: [string, string, unknown?][] = [
  ['GET', '/api/v1/artists/1'],
  ['GET', '/api/v1/artists?limit=2'],
  ['GET', '/api/v1/artists?limit=0'],
  ['POST', '/api/v1/artists', { name: 'Pappo' }],
  ['PUT', '/api/v1/artists/1', { name: 'Luis Alberto Spinetta' }],
  ['POST', '/api/v1/artists/1/albums', { name: 'Artaud', year: 1973 }],
  ['GET', '/api/v1/artists/1/albums'],
  ['GET', '/api/v1/user/me'],
  ['POST', '/api/v1/user/signup', { name: 'Carlos', email: 'carlos@example.com', password: 'correct horse battery' }],
  ['DELETE', '/api/v1/artists/2'],
  ['GET', '/no/such/path'],
]

const FIXTURE_CONTROLS: [string, string, unknown?][] = [
  ['POST', '/__admin/faults', { path: '/api/v1/artists/*', method: 'GET', status: 503, times: 1 }],
  ['GET', '/__admin/faults'],
  ['GET', '/__admin/namespaces'],
  ['GET', '/__admin/requests'],
  ['GET', '/__admin/state'],
  ['POST', '/__admin/reset'],
]

async function answerFirst(server: RunningBinary, requests: [string, string, unknown?][]) {
  for (const [method, path, body] of requests) {
    const headers: Record<string, string> = {
      'x-api-key': KEY,
      ...(body ? { 'content-type': 'application/json' } : {}),
    }
    const answer = await fetch(`${server.url}${path}`, {
      method,
      headers,
      body: body ? JSON.stringify(body) : undefined,
    })
    await answer.arrayBuffer()
  }
}

const documentOf = async (server: RunningBinary, headers: Record<string, string> = {}) => {
  const answer = await fetch(`${server.url}/openapi.json`, { headers: { ...HOST, ...headers } })
  return { status: answer.status, etag: answer.headers.get('etag'), text: await answer.text() }
}

describe.each([
  ['without flags', [], FIRST],
  ['with --fixtures', ['--fixtures'], [...FIXTURE_CONTROLS, ...FIRST]],
] as const)('two executables started alike %s', (_, flags, requests) => {
  test('publish the same bytes and tag, whatever each answered first', async () => {
    const [asked, busy] = await Promise.all([start([...flags]), start([...flags])])
    await answerFirst(busy, [...requests])
    const [one, other] = [await documentOf(asked), await documentOf(busy)]
    expect(one.status).toBe(200)
    expect(JSON.parse(one.text).servers[0].url).toBe('http://api.example.com')
    expect(other.text).toBe(one.text)
    expect(other.etag).toBe(one.etag as string)
    // A client that fetched it from one replica revalidates it against the other.
    expect((await documentOf(busy, { 'if-none-match': one.etag as string })).status).toBe(304)
    expect((await documentOf(asked, { 'if-none-match': other.etag as string })).status).toBe(304)
  }, 30_000)
})
