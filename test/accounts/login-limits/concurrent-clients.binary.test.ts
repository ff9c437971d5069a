import { afterEach, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { connect } from 'node:net'
import { networkInterfaces } from 'node:os'
import { ACCOUNT_LIMITS } from '../../../src/accounts/service.ts'
import { ensureBinary, type RunningBinary, startBinary } from '../../support/binary.ts'

// The brakes on guessing passwords and on sign-ups, under real concurrency: parallel requests over real sockets to
// the executable, so that no check and its count can be interleaved into letting more through; and from real client
// addresses, so that changing address within what one client gets for free does not open a new allowance.

const { loginFailuresPerEmail, loginFailuresPerClient, signupsPerClient } = ACCOUNT_LIMITS
const USER = { name: 'Carlos', email: 'carlos@rock-legends.com', password: 'i-love-rock' }

const ARGS = ['--port', '0', '--data', ':memory:', '--log', 'off']

let server: RunningBinary
beforeAll(() => ensureBinary(), 120_000)
/**
 * A new server for each test of the describe that calls it: the counts of one test must not spill into the next. The
 * tests of two clients start the servers they need (on other addresses) and use none of these.
 */
function newServerEachTest() {
  beforeEach(async () => {
    server = await startBinary(ARGS)
  })
  afterEach(() => server.stop())
}

const post = (path: string, body: unknown) =>
  fetch(`${server.url}/api/v1/user/${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })

/** The statuses of `size` requests sent all at once, with the Retry-After of each 429. */
async function burst(size: number, request: (i: number) => Promise<Response>) {
  const answers = await Promise.all(Array.from({ length: size }, (_, i) => request(i)))
  for (const answer of answers) {
    if (answer.status === 429) expect(Number(answer.headers.get('retry-after'))).toBeGreaterThan(0)
    await answer.arrayBuffer()
  }
  const count = (status: number) => answers.filter((answer) => answer.status === status).length
  return { count, statuses: new Set(answers.map((answer) => answer.status)) }
}

describe('under 50 parallel requests', () => {
  newServerEachTest()

  test(`wrong passwords for one email: at most ${loginFailuresPerEmail.limit} are checked, the rest 429; then even the right one waits`, async () => {
    expect((await post('signup', USER)).status).toBe(201)
    const { count, statuses } = await burst(50, () => post('login', { email: USER.email, password: 'wrong-password' }))
    expect([...statuses].sort()).toEqual([401, 429])
    expect(count(401)).toBeLessThanOrEqual(loginFailuresPerEmail.limit)
    expect(count(429)).toBeGreaterThanOrEqual(50 - loginFailuresPerEmail.limit)
    expect((await post('login', { email: USER.email, password: USER.password })).status).toBe(429)
  })

  test(`wrong logins over 50 emails from one address: at most ${loginFailuresPerClient.limit} are checked, the rest 429`, async () => {
    const { count } = await burst(50, (i) => post('login', { email: `user${i}@example.com`, password: 'guess-guess' }))
    expect(count(401)).toBeLessThanOrEqual(loginFailuresPerClient.limit)
    expect(count(401) + count(429)).toBe(50)
  })

  test(`sign-ups from one address: at most ${signupsPerClient.limit} go through, the rest 429`, async () => {
    const { count } = await burst(50, (i) => post('signup', { ...USER, email: `user${i}@example.com` }))
    expect(count(201)).toBeLessThanOrEqual(signupsPerClient.limit)
    expect(count(201) + count(429)).toBe(50)
  })
})

/**
 * POSTs `body` as JSON to `path` of `url` from the local address `from`, over a fresh connection (fetch cannot choose
 * its source address); resolves with the status and `Retry-After`.
 */
function postFrom(from: string, url: string, path: string, body: unknown) {
  const { hostname, port } = new URL(url)
  const json = JSON.stringify(body)
  const request = [
    `POST /api/v1/user/${path} HTTP/1.1`,
    `Host: ${hostname}:${port}`,
    'Content-Type: application/json',
    `Content-Length: ${Buffer.byteLength(json)}`,
    'Connection: close',
    '',
    json,
  ].join('\r\n')
  return new Promise<{ status: number; retryAfter: string | undefined }>((resolve, reject) => {
    const chunks: Buffer[] = []
    // Written without ending the socket: a half-closed connection may be taken for an abandoned request.
    const socket = connect({ host: hostname.replace(/^\[|\]$/g, ''), port: Number(port), localAddress: from }, () =>
      socket.write(request),
    )
    socket.on('data', (chunk: Buffer) => chunks.push(chunk))
    socket.on('error', reject)
    socket.on('close', () => {
      const head = Buffer.concat(chunks).toString('latin1').split('\r\n\r\n')[0] ?? ''
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1])
      const retryAfter = /^retry-after: *(\d+)/im.exec(head)?.[1]
      if (status === 429) expect(Number(retryAfter)).toBeGreaterThan(0)
      resolve({ status, retryAfter })
    })
  })
}

const tally = (statuses: number[]) => (status: number) => statuses.filter((each) => each === status).length

describe('one client, many of its own addresses', () => {
  newServerEachTest()

  test(`wrong logins over 50 emails from 50 addresses in 127.0.0.0/8: at most ${loginFailuresPerClient.limit} are checked`, async () => {
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        postFrom(`127.0.0.${i + 2}`, server.url, 'login', { email: `user${i}@example.com`, password: 'guess-guess' }),
      ),
    )
    const count = tally(answers.map((answer) => answer.status))
    expect(count(401)).toBeLessThanOrEqual(loginFailuresPerClient.limit)
    expect(count(401) + count(429)).toBe(50)
  })

  test(`wrong passwords for one email from 50 loopback addresses: at most ${loginFailuresPerEmail.limit} are checked`, async () => {
    expect((await post('signup', USER)).status).toBe(201)
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        postFrom(`127.${i}.0.1`, server.url, 'login', { email: USER.email, password: 'wrong-password' }),
      ),
    )
    const count = tally(answers.map((answer) => answer.status))
    expect(count(401)).toBeLessThanOrEqual(loginFailuresPerEmail.limit)
    expect(count(401) + count(429)).toBe(50)
  })
})

// An address of this machine other than loopback, to play a second client; absent on a loopback-only sandbox.
const otherAddress = (family: 'IPv4' | 'IPv6') =>
  Object.values(networkInterfaces())
    .flat()
    .find((info) => info?.family === family && !info.internal && !info.address.startsWith('fe80'))?.address
const lan = otherAddress('IPv4')
const hasIpv6Loopback = Object.values(networkInterfaces())
  .flat()
  .some((info) => info?.address === '::1')

describe('two clients', () => {
  test.skipIf(!lan)(
    'failures from one address refuse that address only: the owner logs in from another, the guesser stays refused',
    async () => {
      const guesser = '127.0.0.1'
      const owner = lan as string
      const other = await startBinary([...ARGS, '--host', owner])
      try {
        expect((await postFrom(owner, other.url, 'signup', USER)).status).toBe(201)
        const login = (from: string, password: string) =>
          postFrom(from, other.url, 'login', { email: USER.email, password })
        for (let i = 0; i < loginFailuresPerEmail.limit; i++)
          expect((await login(guesser, `wrong-${i}-pw`)).status).toBe(401)
        expect((await login(guesser, USER.password)).status).toBe(429)
        expect((await login(owner, USER.password)).status).toBe(200)
        expect((await login(guesser, 'wrong-again')).status).toBe(429)
      } finally {
        await other.stop()
      }
    },
  )

  test.skipIf(!hasIpv6Loopback)(
    'on a dual-stack socket, IPv4 clients (seen as ::ffff:127.0.0.x) and ::1 are the same loopback client',
    async () => {
      const dual = await startBinary([...ARGS, '--host', '::'])
      try {
        const port = new URL(dual.url).port
        const answers: number[] = []
        for (let i = 0; i < loginFailuresPerClient.limit + 2; i++) {
          const [from, url] = i % 2 ? ['::1', `http://[::1]:${port}`] : [`127.0.0.${i + 1}`, `http://127.0.0.1:${port}`]
          const body = { email: `user${i}@example.com`, password: 'wrong-password' }
          answers.push((await postFrom(from, url, 'login', body)).status)
        }
        expect(answers).toEqual([...Array(loginFailuresPerClient.limit).fill(401), 429, 429])
      } finally {
        await dual.stop()
      }
    },
  )
})
