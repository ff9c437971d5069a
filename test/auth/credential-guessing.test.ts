import { afterAll, afterEach, describe, expect, test } from 'bun:test'
import { connect } from 'node:net'
import { networkInterfaces } from 'node:os'
import { ACCOUNT_LIMITS } from '../../src/accounts/service.ts'
import { type RunningServer, startServer } from '../../src/server.ts'
import { openMemoryStore } from '../../src/store/document/memory.ts'
import { openSqlStore, type SqlStore } from '../../src/store/sql/sql-store.ts'
import { apiKey, bearer, createKey, manualClock, signedIn } from '../accounts/helpers.ts'
import { SERVICE_KEY, testApp } from '../helpers.ts'
import { skipWithoutPostgres, testPostgres } from '../support/postgres.ts'

// Wrong `X-API-Key` and bearer guesses are slowed down, or a weak operator key could be guessed at network speed:
// failed credential checks count per client address (shared by replicas over SQL); past the limit, every credential
// from that address gets 429 with Retry-After before it is checked, right or wrong, until the window lets one more.
// Valid credentials never count; requests without one are not failures.

const { limit, windowMs } = ACCOUNT_LIMITS.credentialFailuresPerClient
const ME = '/api/v1/user/me'
const OPERATOR = '/__admin/users'
const wrongKey = (i: number) => ({ 'x-api-key': `guess-${i}` })
const wrongToken = (i: number) => ({ authorization: `Bearer rl_tok_guess${i}` })

describe(`${limit} failed credential checks per ${windowMs / 60_000} minutes per address`, () => {
  test(`wrong keys and tokens: ${limit} get 401, then 429 with Retry-After, even for the right key; the window frees it`, async () => {
    const clock = manualClock()
    const { call } = testApp(openMemoryStore(), { now: clock.now })
    for (let i = 0; i < limit; i++) {
      const { status } = await call(i % 2 ? OPERATOR : ME, { headers: i % 2 ? wrongKey(i) : wrongToken(i) })
      expect(status).toBe(401)
    }
    for (const headers of [wrongKey(limit), wrongToken(limit), { 'x-api-key': SERVICE_KEY }]) {
      const refused = await call(OPERATOR, { headers })
      expect(refused.status).toBe(429)
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0)
      expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(windowMs / 1000)
      expect(refused.json.type).toBe('/problems/too-many-requests')
    }
    // A request without a credential checks nothing: public reads answer, protected routes say 401 as ever.
    expect((await call('/api/v1/artists')).status).toBe(200)
    expect((await call(ME)).status).toBe(401)
    // Once the window has passed, the right key works again, and the address has its allowance back.
    clock.advance(windowMs)
    expect((await call(OPERATOR, { headers: { 'x-api-key': SERVICE_KEY } })).status).toBe(200)
    expect((await call(OPERATOR, { headers: wrongKey(0) })).status).toBe(401)
  })

  test("a braked address's tokens and personal keys still work: none can be guessed; wrong ones stay 429", async () => {
    const { call } = testApp(openMemoryStore())
    const { token } = await signedIn(call)
    const { key } = await createKey(call, bearer(token))
    for (let i = 0; i < limit; i++) expect((await call(ME, { headers: wrongKey(i) })).status).toBe(401)
    expect((await call(ME, { headers: wrongKey(limit) })).status).toBe(429)
    // Secrets of this server's making are checked from a braked address: a flood of guesses locks nobody out.
    expect((await call(ME, { headers: bearer(token) })).status).toBe(200)
    expect((await call(ME, { headers: apiKey(key) })).status).toBe(200)
    // Guesses shaped like them are checked too, and refused as the brake says, without counting more.
    const shaped = `rl_tok_${'A'.repeat(32)}`
    const refused = await call(ME, { headers: bearer(shaped) })
    expect(refused.status).toBe(429)
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0)
    // A service key, which an operator may have chosen weak, waits for the window like any guess.
    expect((await call(OPERATOR, { headers: { 'x-api-key': SERVICE_KEY } })).status).toBe(429)
  })

  test('valid credentials never count, however many; missing and malformed ones are not failures', async () => {
    const { call } = testApp(openMemoryStore())
    for (let i = 0; i < 3 * limit; i++)
      expect((await call(OPERATOR, { headers: { 'x-api-key': SERVICE_KEY } })).status).toBe(200)
    for (let i = 0; i < 2 * limit; i++) {
      expect((await call(ME)).status).toBe(401)
      expect((await call(ME, { headers: { authorization: 'Basic dXNlcjpwdw==' } })).status).toBe(401)
    }
    for (let i = 0; i < limit; i++) expect((await call(ME, { headers: wrongKey(i) })).status).toBe(401)
    expect((await call(ME, { headers: wrongKey(limit) })).status).toBe(429)
  })
})

// An address of this machine other than loopback, to play a second client; absent on a loopback-only sandbox.
const lan = Object.values(networkInterfaces())
  .flat()
  .find((info) => info?.family === 'IPv4' && !info.internal)?.address

/** GETs `path` with `headers` from the local address `from` over a fresh connection; the status and Retry-After. */
function getFrom(from: string, url: string, path: string, headers: Record<string, string>) {
  const { hostname, port } = new URL(url)
  const request = [
    `GET ${path} HTTP/1.1`,
    `Host: ${hostname}:${port}`,
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
    'Connection: close',
    '',
    '',
  ].join('\r\n')
  return new Promise<{ status: number; retryAfter: number }>((resolve, reject) => {
    const chunks: Buffer[] = []
    const socket = connect({ host: hostname, port: Number(port), localAddress: from }, () => socket.write(request))
    socket.on('data', (chunk: Buffer) => chunks.push(chunk))
    socket.on('error', reject)
    socket.on('close', () => {
      const head = Buffer.concat(chunks).toString('latin1').split('\r\n\r\n')[0] ?? ''
      resolve({
        status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]),
        retryAfter: Number(/^retry-after: *(\d+)/im.exec(head)?.[1] ?? 0),
      })
    })
  })
}

describe.skipIf(!lan)('over real sockets, by the address that connects', () => {
  let server: RunningServer | undefined
  afterAll(() => server?.stop())

  test(`${limit} parallel wrong keys from one address, then more: the guesser gets 429; another address is unaffected`, async () => {
    server = await startServer({ host: '0.0.0.0', apiKeys: ['a-weak-key'] })
    const url = `http://${lan}:${new URL(server.url).port}`
    const guesses = await Promise.all(
      Array.from({ length: limit + 20 }, (_, i) => getFrom('127.0.0.1', url, OPERATOR, wrongKey(i))),
    )
    const statuses = guesses.map((guess) => guess.status)
    // Over a data file the check, and the read and count around it, run without a pause: exactly `limit` are checked.
    expect(statuses.filter((status) => status === 401)).toHaveLength(limit)
    expect(statuses.filter((status) => status === 429)).toHaveLength(20)
    const after = await getFrom('127.0.0.2', url, OPERATOR, { 'x-api-key': 'a-weak-key' })
    expect(after.status).toBe(429)
    expect(after.retryAfter).toBeGreaterThan(0)
    // The machine's other address is another client: its right key works, its wrong one is merely wrong.
    expect((await getFrom(lan as string, url, OPERATOR, { 'x-api-key': 'a-weak-key' })).status).toBe(200)
    expect((await getFrom(lan as string, url, OPERATOR, wrongKey(0))).status).toBe(401)
  })
})

const skipSql = skipWithoutPostgres()

describe.skipIf(skipSql)('over PostgreSQL, two replicas count the failures together', () => {
  const stores: SqlStore[] = []
  afterEach(async () => {
    await Promise.all(stores.splice(0).map((store) => store.close()))
  })

  test(`${limit} failures split over two replicas refuse the address on both`, async () => {
    const pg = await testPostgres()
    // With the schema and no rows (`emptyDatabase`), the same start as a new copy migrated, for less of PostgreSQL's
    // work; emptied again once the stores over it are closed.
    const url = pg.url(await pg.emptyDatabase())
    const replicas = await Promise.all(
      ['a', 'b'].map(async (owner) => {
        const store = await openSqlStore(url, { pool: 4, waitMs: 5000, owner })
        stores.push(store)
        return testApp(store).call
      }),
    )
    const [a, b] = replicas as [(typeof replicas)[0], (typeof replicas)[0]]
    for (let i = 0; i < limit; i++)
      expect((await (i % 2 ? a : b)(OPERATOR, { headers: i % 3 ? wrongKey(i) : wrongToken(i) })).status).toBe(401)
    for (const call of [a, b]) {
      const refused = await call(OPERATOR, { headers: { 'x-api-key': SERVICE_KEY } })
      expect(refused.status).toBe(429)
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0)
    }
  }, 60_000)
})
