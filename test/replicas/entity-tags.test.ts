/**
 * Conditional requests across compiled replicas over one PostgreSQL database: the tags are the store's, so every
 * replica gives the same one for the same record, before and after a restart; `If-Match` is checked in the database's
 * transaction, so two replicas that get PUTs naming the same tag at once save exactly one of them; and a reset, which
 * brings ids back, never lets a tag of a record it removed match the record that takes its id.
 */
import { afterAll, afterEach, describe, expect, test } from 'bun:test'
import { type RunningBinary, startBinary } from '../support/binary.ts'
import { skipWithoutPostgres, type TestPostgres, testPostgres } from '../support/postgres.ts'

const skip = skipWithoutPostgres()
const KEY = 'replica-test-key'
const asService = { 'x-api-key': KEY, 'content-type': 'application/json' }

let postgres: TestPostgres
const running: RunningBinary[] = []

afterEach(async () => {
  await Promise.all(running.splice(0).map((replica) => replica.stop().catch(() => 0)))
})

/**
 * The URL (over the unix socket) of a database of the test's own, with the schema and no rows, as a replica that
 * migrated an empty database leaves it (`emptyDatabase`: one an earlier test emptied, else a copy of a migrated
 * template): the tags, not the migrations, are under test here, and a new copy its replicas then migrate costs
 * PostgreSQL far more. Emptied again once the test's replicas have stopped.
 */
async function database() {
  postgres ??= await testPostgres()
  return postgres.url(await postgres.emptyDatabase())
}

/**
 * Two seeded replicas over one database, started once for the tests that need nothing fresher: each of them works on
 * records of its own choosing and checks what the replicas answer about them, whatever the others changed before; the
 * reset test, last, brings back the seeded state anyway. Started on first use, stopped (and the database emptied)
 * after the file: four starts and two seedings fewer than a pair per test.
 */
let pair: Promise<[RunningBinary, RunningBinary]> | undefined
let pairDatabase: string | undefined
function sharedPair(): Promise<[RunningBinary, RunningBinary]> {
  pair ??= (async () => {
    postgres ??= await testPostgres()
    pairDatabase = await postgres.reusedDatabase()
    const url = postgres.url(pairDatabase)
    return (await Promise.all(
      Array.from({ length: 2 }, () =>
        startBinary(['--data', url, '--port', '0', '--api-key', KEY, '--log', 'off', '--seed', '--allow-reset']),
      ),
    )) as [RunningBinary, RunningBinary]
  })()
  return pair
}
afterAll(async () => {
  if (!pair) return
  await Promise.all((await pair).map((replica) => replica.stop().catch(() => 0)))
  if (pairDatabase) await postgres.recycle(pairDatabase)
})

/** Starts `count` executables at once over `url`, each with `args`, on free ports. */
async function replicas(url: string, count: number, args: string[] = []) {
  const started = await Promise.all(
    Array.from({ length: count }, () =>
      startBinary(['--data', url, '--port', '0', '--api-key', KEY, '--log', 'off', ...args]),
    ),
  )
  running.push(...started)
  return started
}

const read = (replica: RunningBinary, path: string, headers: Record<string, string> = {}) =>
  fetch(`${replica.url}${path}`, { headers })

const tagOf = async (replica: RunningBinary, path: string) => (await read(replica, path)).headers.get('etag') as string

const put = (replica: RunningBinary, id: number, body: object, ifMatch?: string) =>
  fetch(`${replica.url}/api/v1/artists/${id}`, {
    method: 'PUT',
    headers: { ...asService, ...(ifMatch ? { 'if-match': ifMatch } : {}) },
    body: JSON.stringify(body),
  })

const create = (replica: RunningBinary, name: string) =>
  fetch(`${replica.url}/api/v1/artists`, { method: 'POST', headers: asService, body: JSON.stringify({ name }) })

describe.skipIf(skip)('conditional requests across replicas over one PostgreSQL database', () => {
  test('both replicas give the same tags; a tag read on A is honoured on B, for 304 and for If-Match', async () => {
    const [a, b] = await sharedPair()
    for (const path of ['/api/v1/artists/3', '/api/v1/artists?limit=20', '/api/v1/artists/3/albums'])
      expect(await tagOf(b, path)).toBe(await tagOf(a, path))
    const tag = await tagOf(a, '/api/v1/artists/3')
    expect((await read(b, '/api/v1/artists/3', { 'if-none-match': tag })).status).toBe(304)
    const saved = await put(b, 3, { name: 'Charly García', band: 'Serú Girán' }, tag)
    expect(saved.status).toBe(200)
    const now = saved.headers.get('etag') as string
    expect(now).not.toBe(tag)
    // What B wrote, A serves with B's tag at once, and refuses the tag it gave before.
    expect(await tagOf(a, '/api/v1/artists/3')).toBe(now)
    expect((await read(a, '/api/v1/artists/3', { 'if-none-match': tag })).status).toBe(200)
    const stale = await put(a, 3, { name: 'Charly García' }, tag)
    expect(stale.status).toBe(412)
    expect(stale.headers.get('etag')).toBe(now)
  })

  test('PUTs naming the same tag on two replicas at once: exactly one 200 and one 412, round after round', async () => {
    const [a, b] = await sharedPair()
    for (let round = 0; round < 8; round++) {
      const tag = await tagOf(round % 2 === 0 ? a : b, '/api/v1/artists/1')
      const answers = await Promise.all([
        put(a, 1, { name: 'Luis Alberto Spinetta', band: `A ${round}` }, tag),
        put(b, 1, { name: 'Luis Alberto Spinetta', band: `B ${round}` }, tag),
      ])
      expect(answers.map((answer) => answer.status).sort()).toEqual([200, 412])
      const winner = answers.find((answer) => answer.status === 200) as Response
      const loser = answers.find((answer) => answer.status === 412) as Response
      expect(loser.headers.get('etag')).toBe(winner.headers.get('etag'))
      const { band } = (await winner.json()) as { band: string }
      expect(((await (await read(a, '/api/v1/artists/1')).json()) as { band: string }).band).toBe(band)
    }
  })

  test('a restart keeps every tag', async () => {
    const url = await database()
    const [first] = (await replicas(url, 1, ['--seed'])) as [RunningBinary]
    const paths = ['/api/v1/artists/5', '/api/v1/artists?limit=7&offset=3', '/api/v1/artists/5/albums?sort=year']
    const before = await Promise.all(paths.map((path) => tagOf(first, path)))
    expect(before).toEqual([
      expect.stringMatching(/^"[\w-]{22}"$/),
      expect.stringMatching(/^W\/"[\w-]{22}"$/),
      expect.stringMatching(/^W\/"[\w-]{22}"$/),
    ])
    await first.stop()
    const [again] = (await replicas(url, 1)) as [RunningBinary]
    expect(await Promise.all(paths.map((path) => tagOf(again, path)))).toEqual(before)
    expect((await put(again, 5, { name: 'Fito Páez' }, before[0])).status).toBe(200)
  })

  test('a reset on one replica never lets an old tag match the record that reuses its id on the other', async () => {
    const [a, b] = await sharedPair()
    const gone = await create(a, 'Gone after the reset')
    const { id } = (await gone.json()) as { id: number }
    const old = gone.headers.get('etag') as string
    expect((await fetch(`${b.url}/__admin/reset`, { method: 'POST', headers: { 'x-api-key': KEY } })).status).toBe(204)
    const reused = await create(b, 'First after the reset')
    expect(((await reused.json()) as { id: number }).id).toBe(id)
    expect(reused.headers.get('etag')).not.toBe(old)
    expect((await read(a, `/api/v1/artists/${id}`, { 'if-none-match': old })).status).toBe(200)
    expect((await put(a, id, { name: 'Overwritten' }, old)).status).toBe(412)
  })
})
