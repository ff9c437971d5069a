import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import ts from 'typescript'
import {
  type Client,
  createClient,
  type FetchLike,
  ProblemError,
  type RunningServer,
  startServer,
} from '../../npm/rock-legends/lib/index.js'
import type { OpenApiDocument } from '../../src/docs/shapes.ts'
import { ensureBinary } from '../support/binary.ts'
import { type Answer, expectDocumented } from '../support/openapi.ts'

// The npm package's client and startServer, from their sources under Bun (as Bun users of the package run them),
// against the compiled executable: every operation of /openapi.json is called, and every answer is checked against
// the document; the hand-written types are checked against the document's schemas.
const ROOT = resolve(import.meta.dir, '../..')

let server: RunningServer
let document: OpenApiDocument
const answers: Answer[] = []

/** The global fetch, recording every answer for the document check. */
const recording: FetchLike = async (url, init) => {
  const response = await fetch(url, init)
  const text = await response.text()
  const { pathname, search } = new URL(url)
  answers.push({
    method: init.method,
    path: pathname + search,
    status: response.status,
    headers: response.headers,
    text,
  })
  return { ok: response.ok, status: response.status, statusText: response.statusText, text: async () => text }
}

beforeAll(async () => {
  server = await startServer({ seed: true, allowReset: true, binary: await ensureBinary() })
  document = (await (await fetch(`${server.url}/openapi.json`)).json()) as OpenApiDocument
})
afterAll(() => server?.stop())

const problemOf = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (error: unknown) => {
      if (!(error instanceof ProblemError)) throw error
      return error
    },
  )

describe('createClient', () => {
  let api: Client
  beforeAll(() => {
    api = createClient(server.url, { apiKey: server.apiKey, fetch: recording })
  })

  test('the catalogue: list, read, create, replace, patch, the deprecated delete, albums', async () => {
    expect(await api.health()).toEqual({ status: 'ok' })
    const page = await api.artists.list({ limit: 2, offset: 1 })
    expect(page.meta).toMatchObject({ limit: 2, offset: 1, total: 32 })
    const spinetta = await api.artists.get(1)
    expect(spinetta.name).toBe('Luis Alberto Spinetta')
    const moris = await api.artists.create({ name: 'Moris', band: 'Los Beatniks' })
    expect(await api.artists.update(moris.id, { name: 'Moris', description: 'Pioneer.' })).toMatchObject({
      id: moris.id,
      description: 'Pioneer.',
    })
    expect((await problemOf(api.artists.delete(moris.id)))?.status).toBe(400)
    const album = await api.albums.create(moris.id, { name: '30 minutos de vida', year: 1970 })
    expect(await api.albums.get(moris.id, album.id)).toEqual(album)
    expect((await api.albums.list(moris.id)).data).toEqual([album])
    expect(await api.artists.patch(moris.id, { description: null, band: 'Los Beatniks' })).toEqual({
      id: moris.id,
      name: 'Moris',
      band: 'Los Beatniks',
    })
    const replaced = await api.albums.update(moris.id, album.id, { name: '30 minutos de vida' })
    expect(replaced).toEqual({ id: album.id, artistId: moris.id, name: '30 minutos de vida', kind: 'studio' })
    expect(await api.albums.patch(moris.id, album.id, { year: 1970 })).toEqual({ ...replaced, year: 1970 })
    expect(await api.albums.delete(moris.id, album.id)).toBeUndefined()
    expect((await problemOf(api.albums.get(moris.id, album.id)))?.status).toBe(404)
    const history = await api.artists.history(moris.id, { limit: 2 })
    expect(history.data.map((change) => [change.kind, change.by])).toEqual([
      ['album-deleted', 'service'],
      ['album-updated', 'service'],
    ])
    expect(history.meta).toMatchObject({ limit: 2, offset: 0, total: 7 })
  })

  test('a create sent twice with one idempotencyKey is made once; another body with it is a 422 problem', async () => {
    const key = crypto.randomUUID()
    const first = await api.artists.create({ name: 'Pappo' }, { idempotencyKey: key })
    expect(await api.artists.create({ name: 'Pappo' }, { idempotencyKey: key })).toEqual(first)
    expect((await problemOf(api.artists.create({ name: 'Riff' }, { idempotencyKey: key })))?.status).toBe(422)
    const albumKey = { idempotencyKey: crypto.randomUUID() }
    const album = await api.albums.create(first.id, { name: 'Pappo’s Blues' }, albumKey)
    expect(await api.albums.create(first.id, { name: 'Pappo’s Blues' }, albumKey)).toEqual(album)
    expect((await api.albums.list(first.id)).meta.total).toBe(1)
  })

  test('a sign-up, a login and a new key sent twice with one idempotencyKey are answered once', async () => {
    const user = { name: 'Luca', email: 'luca@rock-legends.com', password: 'i-love-sumo' }
    const signupKey = { idempotencyKey: crypto.randomUUID() }
    const signedUp = await api.user.signup(user, signupKey)
    expect(await api.user.signup(user, signupKey)).toEqual(signedUp)
    const loginKey = { idempotencyKey: crypto.randomUUID() }
    const session = await api.user.login({ email: user.email, password: user.password }, loginKey)
    expect((await api.user.login({ email: user.email, password: user.password }, loginKey)).token).toBe(session.token)
    const asUser = api.with({ token: session.token })
    const keyKey = { idempotencyKey: crypto.randomUUID() }
    const key = await asUser.user.apiKeys.create({ name: 'ci' }, keyKey)
    expect((await asUser.user.apiKeys.create({ name: 'ci' }, keyKey)).key).toBe(key.key)
    expect((await asUser.user.apiKeys.list()).meta.total).toBe(1)
    // A key too short to guard a secret is refused, saying so.
    const refused = await problemOf(
      api.user.login({ email: user.email, password: user.password }, { idempotencyKey: 'k1' }),
    )
    expect(refused?.status).toBe(400)
    await asUser.user.logout({ idempotencyKey: crypto.randomUUID() })
  })

  test('accounts: sign up, log in, who am I, personal keys, log out', async () => {
    const user = await api.user.signup({ name: 'Carlos', email: 'carlos@rock-legends.com', password: 'i-love-rock' })
    const session = await api.user.login({ email: user.email, password: 'i-love-rock' })
    const asUser = api.with({ token: session.token })
    expect(await asUser.user.me()).toEqual(user)
    const key = await asUser.user.apiKeys.create({ name: 'ci' })
    expect(await asUser.user.apiKeys.list()).toEqual({
      data: [expect.objectContaining({ id: key.id, name: 'ci' })],
      meta: { limit: 10, offset: 0, total: 1, next: null },
    })
    expect((await asUser.user.apiKeys.list({ limit: 1, offset: 1 })).data).toEqual([])
    expect(await asUser.user.apiKeys.get(key.id)).toMatchObject({ id: key.id, name: 'ci' })
    expect(await api.with({ apiKey: key.key }).user.me()).toEqual(user)
    expect(await asUser.user.apiKeys.revoke(key.id)).toBeUndefined()
    expect(await asUser.user.logout()).toBeUndefined()
    expect((await problemOf(asUser.user.me()))?.status).toBe(401)
  })

  test('errors are thrown as problems: status, detail and the invalid fields', async () => {
    const missing = await problemOf(api.artists.get(999_999))
    expect(missing).toMatchObject({ status: 404, problem: { status: 404, type: '/problems/not-found' } })
    const invalid = await problemOf(api.albums.create(1, { name: '', year: 1800 }))
    expect(invalid?.problem.errors?.map((error) => error.pointer).sort()).toEqual(['/name', '/year'])
    expect(invalid?.message).toStartWith('POST /api/v1/artists/1/albums: 400 ')
    const anonymous = createClient(server.url, { fetch: recording })
    expect((await problemOf(anonymous.artists.create({ name: 'Moris' })))?.status).toBe(401)
  })

  test('every operation of /openapi.json was called, and every answer is as the document says', async () => {
    const called = new Set<string>()
    for (const [template, operations] of Object.entries(document.paths)) {
      const pattern = new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}(\\?|$)`)
      for (const method of Object.keys(operations))
        if (answers.some((answer) => answer.method.toLowerCase() === method && pattern.test(answer.path)))
          called.add(`${method} ${template}`)
    }
    const operations = Object.entries(document.paths).flatMap(([template, operations]) =>
      Object.keys(operations)
        .filter((method) => ['get', 'post', 'put', 'delete', 'patch'].includes(method))
        .map((method) => `${method} ${template}`),
    )
    // The fixture reset is the server handle's (`server.reset()`), not the client's; the event stream is for an
    // EventSource (test/events/), not a request-and-answer client.
    const notTheClients = (operation: string) => operation.includes('/__admin/') || operation === 'get /api/v1/events'
    expect(operations.filter((operation) => !called.has(operation) && !notTheClients(operation))).toEqual([])
    for (const answer of answers) await expectDocumented(answer)
  })
})

describe('the types in index.d.ts', () => {
  const source = ts.createSourceFile(
    'index.d.ts',
    readFileSync(join(ROOT, 'npm/rock-legends/lib/index.d.ts'), 'utf8'),
    ts.ScriptTarget.Latest,
  )
  const interfaces = new Map<string, ts.InterfaceDeclaration>()
  source.forEachChild((node) => {
    if (ts.isInterfaceDeclaration(node)) interfaces.set(node.name.text, node)
  })
  /** Each property of an interface, with whether it is optional, its base interfaces' included. */
  function members(name: string): Map<string, boolean> {
    const declaration = interfaces.get(name)
    if (!declaration) throw new Error(`no interface ${name}`)
    const found = new Map<string, boolean>()
    for (const clause of declaration.heritageClauses ?? [])
      for (const type of clause.types)
        for (const [key, optional] of members(type.expression.getText(source))) found.set(key, optional)
    for (const member of declaration.members)
      if (ts.isPropertySignature(member)) found.set(member.name.getText(source), member.questionToken !== undefined)
    return found
  }
  interface Schema {
    properties: Record<string, unknown>
    required?: string[]
  }
  const schemaOf = (name: string): Schema => document.components?.schemas?.[name] as unknown as Schema

  test.each([
    'Artist',
    'ArtistInput',
    'ArtistPatch',
    'Album',
    'AlbumInput',
    'AlbumPatch',
    'User',
    'Session',
    'ApiKey',
    'NewApiKey',
    'Problem',
  ])('%s has the properties of the document’s schema, and requires only what it requires', (name) => {
    const schema = schemaOf(name)
    const typed = members(name)
    expect([...typed.keys()].sort()).toEqual(Object.keys(schema.properties).sort())
    const required = [...typed].filter(([, optional]) => !optional).map(([key]) => key)
    expect(required.filter((key) => !schema.required?.includes(key))).toEqual([])
  })
})
