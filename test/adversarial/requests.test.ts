import { beforeAll, describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import type { OpenApiDocument, Schema } from '../../src/docs/shapes.ts'
import { SMALL_BODY_BYTES } from '../../src/http/body.ts'
import { servedDocument } from '../support/openapi.ts'
import {
  anonymousPlan,
  asJson,
  duplicatedKeys,
  ID_IN_PATH,
  invalidPlan,
  type Plan,
  validBody,
  validParam,
  validPlan,
} from './arbitraries.ts'
import { isWrite, type OperationSpec, operationsOf } from './operations.ts'
import { type Answer, buildTemplate, dump, type Template, USER, World } from './world.ts'

// Property-based tests driven by the served OpenAPI document: random valid and invalid requests to every operation,
// each checked against what the document promises. A fixed seed and bounded runs keep `bun test` reproducible and
// quick; FC_SEED and FC_SCALE (a multiplier of the runs) explore further, e.g. `FC_SCALE=20 bun test adversarial`.
const SEED = Number(process.env.FC_SEED ?? 20251122)
const SCALE = Number(process.env.FC_SCALE ?? 1)
const runs = (count: number) => ({ seed: SEED, numRuns: Math.max(1, Math.round(count * SCALE)), endOnFailure: true })

let document: OpenApiDocument
let operations: OperationSpec[]
let template: Template
beforeAll(async () => {
  document = await servedDocument()
  operations = operationsOf(document)
  template = await buildTemplate()
})

const byId = (id: string) => operations.find((operation) => operation.operationId === id) as OperationSpec
const protectedWrites = () => operations.filter((operation) => isWrite(operation) && operation.schemes.length > 0)

/** Requests the parser refuses before anything else: not JSON, malformed, too large, not an object, `__proto__`. */
const PARSE_STATUS = { 'too-large': 413, 'not-json': 415, malformed: 400, 'not-an-object': 400, 'forbidden-key': 400 }
// Sign-up and login read at most 16 KiB of body (src/http/body.ts): a larger one is 413 however well-formed.
const SMALL_BODY_OPERATIONS = new Set(['createUser', 'loginUser'])
const bodySize = (text: string | Uint8Array) => (typeof text === 'string' ? Buffer.byteLength(text) : text.byteLength)
const parseStatus = (plan: Plan) => {
  if (!plan.body) return undefined
  if (plan.body.parse !== 'ok') return PARSE_STATUS[plan.body.parse]
  const small = SMALL_BODY_OPERATIONS.has(plan.operation.operationId)
  return small && bodySize(plan.body.text) > SMALL_BODY_BYTES ? 413 : undefined
}

/** Operations for users only: a service key belongs to no one, so they answer it 403. */
const forUsers = (operation: OperationSpec) => operation.tag === 'Authentication' && operation.schemes.length > 0

const SUCCESS: Record<string, number> = {
  createArtist: 201,
  createAlbum: 201,
  createUser: 201,
  createApiKey: 201,
  logoutUser: 204,
  revokeApiKey: 204,
  deleteAlbum: 204,
}

/** Checks one list page against its query: the limit applied, the slice's size, the order and the next link. */
function checkPage(answer: Answer, plan: Plan, context: string) {
  const query = Object.fromEntries(plan.query)
  const limit = Math.min(Number(query.limit ?? 10), 100)
  const offset = Number(query.offset ?? 0)
  const { data, meta } = answer.json as { data: { id: number }[]; meta: Record<string, unknown> }
  expect(meta.limit, context).toBe(limit)
  expect(meta.offset, context).toBe(offset)
  const total = meta.total as number
  expect(data.length, context).toBe(Math.max(0, Math.min(limit, total - offset)))
  const ids = data.map((item) => item.id)
  // In id order unless another order was asked for; the next page keeps the search and the order.
  if ((query.sort ?? 'id') === 'id') expect(ids, context).toEqual([...ids].sort((a, b) => a - b))
  const kept = `${query.q ? `&q=${encodeURIComponent(query.q)}` : ''}${query.sort && query.sort !== 'id' ? `&sort=${query.sort}` : ''}`
  const path = plan.operation.template.replace('{artistId}', String(Number(plan.path.artistId)))
  expect(meta.next, context).toBe(
    offset + limit < total ? `${path}?limit=${limit}&offset=${offset + limit}${kept}` : null,
  )
}

/** Walks a list page by page through `meta.next`: every item once, in id order, as many as `total` says. */
async function walk(world: World, path: string, limit: number) {
  return follow(world, `${path}?limit=${limit}`)
}

/** The ids of the pages from `start` to the last one, each page agreeing on the total; checks they are in order. */
async function follow(world: World, start: string) {
  const ids: number[] = []
  let next: string | null = start
  let total: number | undefined
  while (next) {
    const page = await world.get(next)
    expect(page.status).toBe(200)
    total ??= page.json.meta.total as number
    expect(page.json.meta.total).toBe(total)
    ids.push(...(page.json.data as { id: number }[]).map((item) => item.id))
    next = page.json.meta.next
  }
  const offset = Number(/[?&]offset=(\d+)/.exec(start)?.[1] ?? 0)
  expect(ids.length).toBe(Math.max(0, (total as number) - offset))
  expect(ids).toEqual([...new Set(ids)].sort((a, b) => a - b))
  return ids
}

/** The lists agree with the store: every artist once, in order, and the albums of each artist likewise. */
async function checkLists(world: World) {
  const ids = await walk(world, '/api/v1/artists', 7)
  expect(ids.length).toBe((await world.store.artists.list({ limit: 0, offset: 0 })).total)
  for (const id of ids.slice(0, 6)) {
    const albums = await walk(world, `/api/v1/artists/${id}/albums`, 5)
    expect(albums.length).toBe((await world.store.albums.listByArtist(id, { limit: 0, offset: 0 }))?.total as number)
  }
}

/** What the answer to a request the document calls valid may be, and what a success must have done. */
async function checkValid(world: World, plan: Plan, answer: Answer & { context?: string }) {
  const context = answer.context ?? ''
  const { operationId } = plan.operation
  const status = answer.status
  expect([413, 415], context).not.toContain(status)
  if (status === 400) expect(answer.json.type, context).toBe('/problems/deprecated-operation')
  if (status === 401) expect(operationId, context).toBe('loginUser')
  if (status === 403) expect([plan.credential, forUsers(plan.operation)], context).toEqual(['service', true])
  if (status === 404)
    expect(
      plan.operation.params.some((param) => param.in === 'path'),
      context,
    ).toBe(true)
  if (status === 409) expect(operationId, context).toBe('createUser')
  if (status === 429) expect(['createUser', 'loginUser'], context).toContain(operationId)
  if (status >= 300) return
  expect(status, context).toBe(SUCCESS[operationId] ?? 200)
  const body = plan.body ? JSON.parse(plan.body.text as string) : undefined
  if (operationId === 'getAllArtists' || operationId === 'getAllAlbums') checkPage(answer, plan, context)
  if (operationId === 'createArtist' || operationId === 'createAlbum' || operationId === 'updateArtist') {
    const location = answer.headers.get('location') ?? `/api/v1/artists/${answer.json.id}`
    const stored = await world.get(location)
    expect(stored.json, context).toEqual(answer.json)
    expect(answer.json.name, context).toBe(body.name.trim())
    if (operationId === 'createAlbum') expect(answer.json.artistId, context).toBe(Number(plan.path.artistId))
    // A field left out or null is unset, and an unset field is left out of the answer: never null.
    if (operationId === 'updateArtist') expect(answer.json.description, context).toBe(body.description ?? undefined)
    expect(Object.values(answer.json), context).not.toContain(null)
  }
  if (operationId === 'createUser') expect(answer.json.email, context).toBe(body.email.trim().toLowerCase())
}

/** Sends a plan and checks it: the answer its kind calls for, and no change at all unless it succeeded. */
async function run(world: World, plan: Plan) {
  const before = await dump(world.store)
  const answer = (await world.send(plan)) as Answer & { context: string }
  const { context } = answer
  const changed = (await dump(world.store)) !== before
  if (answer.status >= 400 || plan.operation.method === 'GET') expect(changed, `changed: ${context}`).toBe(false)
  const parse = parseStatus(plan)
  // A run may have logged out or revoked every token or key of its kind: the request then has no valid credential.
  const anonymous = plan.kind === 'anonymous' || (plan.operation.schemes.length > 0 && !world.isLive(plan.credential))
  if (anonymous) {
    // Credentials are checked before the body is read (src/http/credentials-first.ts): 401 whatever the body.
    expect(answer.status, context).toBe(401)
    expect(answer.headers.get('www-authenticate'), context).toBe('Bearer realm="rock-legends"')
  } else if (plan.kind === 'invalid') {
    // A credential of the wrong kind is refused before the body is read, too.
    const refusedCaller = plan.credential === 'service' && forUsers(plan.operation)
    expect(answer.status, context).toBe(refusedCaller ? 403 : (parse ?? 400))
  } else await checkValid(world, plan, answer)
  world.forget(plan, answer)
  if (answer.status < 300 && isWrite(plan.operation)) await checkLists(world)
}

/** Plans of every kind for every operation; ids favour the ones that exist. */
const anyPlan = () =>
  fc.oneof(
    ...operations.flatMap((operation) => {
      const plans = [validPlan(operation), invalidPlan(operation)]
      if (isWrite(operation) && operation.schemes.length > 0) plans.push(anonymousPlan(operation))
      if (operation.operationId === 'loginUser')
        plans.push(
          validPlan(operation).map((plan) => ({
            ...plan,
            body: asJson({ email: ` ${USER.email.toUpperCase()} `, password: USER.password }),
          })),
        )
      if (operation.operationId === 'createUser')
        plans.push(validPlan(operation).map((plan) => ({ ...plan, body: asJson(USER) })))
      return plans
    }),
  )

describe('requests generated from the OpenAPI document', () => {
  test('sequences of valid, invalid and anonymous requests: documented answers, no 5xx, refusals change nothing', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(anyPlan(), { minLength: 1, maxLength: 10 }), async (plans) => {
        const world = await World.from(template)
        for (const plan of plans) {
          // Ids of personal keys in a path come from the live ones (and another user's) half the time.
          const id = Number(plan.path.id)
          const onKey = plan.operation.template.endsWith('{id}') && plan.kind === 'valid' && id % 2 === 0
          await run(world, onKey ? { ...plan, path: { id: String(world.keyIds[id % world.keyIds.length]) } } : plan)
        }
        await checkLists(world)
      }),
      runs(300),
    )
  }, 120_000)

  test('no write succeeds without a valid credential: 401 whatever the body, and an unchanged store', async () => {
    const world = await World.from(template)
    const before = await dump(world.store)
    await fc.assert(
      fc.asyncProperty(fc.oneof(...protectedWrites().map(anonymousPlan)), async (plan) => {
        await run(world, plan)
      }),
      runs(1000),
    )
    expect(await dump(world.store)).toBe(before)
  }, 120_000)

  test('duplicated keys: the last one wins, and the verdict is the document’s on the parsed body', async () => {
    const withBody = operations.filter((operation) => operation.body && !ID_IN_PATH[operation.operationId])
    const world = await World.from(template)
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          ...withBody.map((operation) =>
            fc.tuple(
              validPlan(operation),
              duplicatedKeys(validBody(operation.body as Schema), operation.body as Schema),
            ),
          ),
        ),
        async ([plan, [body, parsed]]) => {
          const before = await dump(world.store)
          const answer = (await world.send({ ...plan, body })) as Answer & { context: string }
          const valid = (plan.operation.bodyValid as (value: unknown) => boolean)(parsed)
          if (valid) expect(answer.status, answer.context).not.toBe(400)
          else {
            expect(answer.status, answer.context).toBe(
              plan.credential === 'service' && forUsers(plan.operation) ? 403 : 400,
            )
            expect(await dump(world.store), answer.context).toBe(before)
          }
          world.forget({ ...plan, body }, answer)
        },
      ),
      runs(400),
    )
  }, 120_000)

  test('pagination: any valid limit and offset over lists of any length', async () => {
    const list = byId('getAllArtists')
    const [limitParam, offsetParam] = [
      list.params.find((p) => p.name === 'limit'),
      list.params.find((p) => p.name === 'offset'),
    ]
    // Offsets anywhere, and often right at the edges: where the page ends exactly at the last item, one before or
    // after it, and at or just past the end of the list.
    const cases = fc
      .tuple(fc.integer({ min: 0, max: 230 }), fc.option(validParam(limitParam as never), { nil: undefined }))
      .chain(([extra, limit]) => {
        const total = 5 + extra
        const applied = Math.min(Number(limit ?? 10), 100)
        const edge = fc
          .tuple(fc.constantFrom(total - applied, total), fc.integer({ min: -1, max: 1 }))
          .map(([base, delta]) => String(Math.max(0, base + delta)))
        const offset = fc.option(
          fc.oneof(edge, fc.integer({ min: 0, max: 260 }).map(String), validParam(offsetParam as never)),
          { nil: undefined },
        )
        return offset.map((chosen) => [extra, limit, chosen] as const)
      })
    await fc.assert(
      fc.asyncProperty(cases, async ([extra, limit, offset]) => {
        const world = await World.from(template)
        await world.store.load(
          Array.from({ length: extra }, (_, i) => ({
            name: `Extra ${i}`,
            image: null,
            albums: [],
          })),
        )
        const query: [string, string][] = []
        if (limit !== undefined) query.push(['limit', limit])
        if (offset !== undefined) query.push(['offset', offset])
        const plan: Plan = { operation: list, path: {}, query, credential: 'none', headers: [], kind: 'valid' }
        const answer = (await world.send(plan)) as Answer & { context: string }
        expect(answer.status, answer.context).toBe(200)
        checkPage(answer, plan, answer.context)
        expect(answer.json.meta.total).toBe(5 + extra)
        // From this page to the last one: exactly the items after the offset, each once, in order.
        const all = await walk(world, '/api/v1/artists', 100)
        const rest = answer.json.meta.next ? await follow(world, answer.json.meta.next) : []
        const offsetApplied = answer.json.meta.offset as number
        expect([...answer.json.data.map((artist: { id: number }) => artist.id), ...rest]).toEqual(
          all.slice(offsetApplied),
        )
      }),
      runs(300),
    )
  }, 120_000)

  test('concurrent valid writes: every acknowledged one is there, with unique ids, and the counts agree', async () => {
    const writes = ['createArtist', 'createAlbum', 'updateArtist'].map(byId)
    await fc.assert(
      fc.asyncProperty(fc.array(fc.oneof(...writes.map(validPlan)), { minLength: 5, maxLength: 40 }), async (plans) => {
        // Replacements go to the template's artists, so each new record can be compared with its answer.
        const sent = plans.map((plan) => {
          if (plan.operation.operationId !== 'updateArtist') return plan
          const id = 1 + (Number(plan.path.artistId) % 5)
          const body = { ...JSON.parse(plan.body?.text as string), id }
          return { ...plan, path: { artistId: String(id) }, body: asJson(body) }
        })
        const world = await World.from(template)
        const answers = await Promise.all(sent.map((plan) => world.send(plan)))
        const created = answers.filter((answer) => answer.status === 201)
        const ids = created.map(
          (answer) => `${answer.json.artistId === undefined ? 'artist' : 'album'} ${answer.json.id}`,
        )
        expect(new Set(ids).size).toBe(ids.length)
        for (const answer of created) {
          const stored = await world.get(answer.headers.get('location') as string)
          expect(stored.json).toEqual(answer.json)
        }
        const artists = created.filter((answer) => answer.json.artistId === undefined).length
        expect((await world.store.artists.list({ limit: 0, offset: 0 })).total).toBe(5 + artists)
        await checkLists(world)
      }),
      runs(60),
    )
  }, 120_000)
})
