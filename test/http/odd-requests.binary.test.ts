import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { connect } from 'node:net'
import { ensureBinary, type RunningBinary, startBinary } from '../support/binary.ts'

// Odd requests over a real socket to the executable, with the JSON log on: each one the app sees gets a problem and
// exactly one well-formed access line, and nothing else reaches the log (no stack trace of a crashed error handler).
// What Bun's HTTP parser refuses never reaches the app: it answers a bare 400 or closes the connection, logs nothing,
// and the server goes on serving (SECURITY.md, Known limits).

let server: RunningBinary
let port: number
let log: string[] = []
const answers: Answer[] = []

interface Answer {
  line: string
  status: number
  headers: Record<string, string>
  body: string
  closed: boolean
}

/** Sends `head` (a request line and headers) on a fresh connection; resolves once the server closes it. */
const send = (head: string) =>
  new Promise<Answer>((resolve) => {
    const socket = connect(port, '127.0.0.1')
    let raw = ''
    const done = (closed: boolean) => {
      clearTimeout(timer)
      socket.destroy()
      const [top = '', body = ''] = raw.split('\r\n\r\n', 2)
      const [statusLine = '', ...fields] = top.split('\r\n')
      const headers = Object.fromEntries(
        fields.map((field) => [
          field.slice(0, field.indexOf(':')).toLowerCase(),
          field.slice(field.indexOf(':') + 1).trim(),
        ]),
      )
      resolve({ line: head.split('\r\n')[0] ?? '', status: Number(statusLine.split(' ')[1]), headers, body, closed })
    }
    const timer = setTimeout(() => done(false), 3000)
    socket.on('data', (chunk) => {
      raw += chunk
    })
    socket.on('close', () => done(true))
    socket.on('error', () => {})
    socket.write(`${head}\r\nConnection: close\r\n\r\n`)
  })

const withHost = (line: string, host = 'localhost') => `${line} HTTP/1.1\r\nHost: ${host}`

/** Requests the app answers: the request line, the Host header, the status. */
const ODD: [string, string, number][] = [
  ['CONNECT example.com:443', 'example.com:443', 404],
  ['CONNECT foo', 'localhost', 404],
  ['CONNECT [::1]:80', 'localhost', 404],
  ['CONNECT /', 'localhost', 405],
  ['CONNECT http://example.com/api/v1/artists', 'localhost', 405],
  ['GET http://example.com/nowhere', 'localhost', 404],
  ['POST https://example.com/healthz', 'localhost', 405],
  ['GET /api/v1/artists/1', 'exa mple', 400],
  ['TRACE /', 'localhost', 405],
  ['PROPFIND /api/v1/artists', 'localhost', 405],
  ['QUERY /api/v1/artists/1', 'localhost', 405],
  ['PURGE /nowhere', 'localhost', 404],
  ['GET /problems/constructor', 'localhost', 404],
  ['GET /problems/__proto__', 'localhost', 404],
  ['GET /%zz', 'localhost', 404],
]

/**
 * HTTP/1.0 requests without a Host header, as HAProxy's `option httpchk` and other load balancers' checks send them:
 * the health checks are served, everything else gets its 400 problem.
 */
const HTTP_1_0: [string, number][] = [
  ['GET /healthz', 200],
  ['GET /readyz', 200],
  ['GET /livez', 200],
  // Elsewhere HTTP/1.1's rule holds: a target is read from an absolute URL, which needs a Host.
  ['GET /api/v1/artists/1/albums', 400],
  ['GET /nowhere', 400],
]
const http10: Answer[] = []

/** Requests Bun's parser refuses before the app: a bare 400, or the connection closed without an answer. */
const REFUSED_BY_BUN = [
  withHost('OPTIONS *'),
  withHost('GET *'),
  withHost('M-SEARCH *'),
  withHost('BREW /healthz'),
  withHost('get /healthz'),
  withHost('GET ftp://example.com/healthz'),
  'GET /healthz HTTP/1.1',
]

beforeAll(async () => {
  await ensureBinary()
  server = await startBinary(['--port', '0', '--data', ':memory:', '--log', 'json'])
  port = Number(new URL(server.url).port)
  for (const [line, host] of ODD) answers.push(await send(withHost(line, host)))
  for (const [line] of HTTP_1_0) http10.push(await send(`${line} HTTP/1.0`))
  for (const head of REFUSED_BY_BUN) {
    const answer = await send(head)
    expect(answer.closed, head).toBe(true)
    expect([0, 400], head).toContain(Number.isNaN(answer.status) ? 0 : answer.status)
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200)
  }
  expect(await server.stop()).toBe(0)
  log = (await server.stderr()).trim().split('\n')
}, 120_000)
afterAll(() => server.stop())

/** The access lines of the log, parsed; every line must parse. */
const accessLines = () =>
  log.map((line) => JSON.parse(line) as Record<string, unknown>).filter((entry) => entry.message === 'request')

describe('odd requests to the executable', () => {
  test.each(ODD.map(([line, host, status], i) => [line, host, status, i] as const))(
    '%s (Host: %s) → %d problem',
    (_, __, status, i) => {
      const answer = answers[i] as Answer
      expect(answer.status).toBe(status)
      expect(answer.headers['content-type']).toBe('application/problem+json')
      expect(JSON.parse(answer.body)).toMatchObject({ type: expect.stringMatching(/^\/problems\//), status })
      expect(answer.headers['x-request-id']).toBeTruthy()
      if (status === 405) expect(answer.headers.allow).toBeTruthy()
    },
  )

  test.each(HTTP_1_0.map(([line, status], i) => [line, status, i] as const))(
    '%s HTTP/1.0 without Host → %d',
    (_, status, i) => {
      const answer = http10[i] as Answer
      expect(answer.status).toBe(status)
      if (status === 200) expect(answer.headers['content-type']).toStartWith('application/json')
    },
  )

  test('the load balancer check of /healthz gets its usual body', () => {
    expect(JSON.parse((http10[0] as Answer).body)).toEqual({ status: 'ok' })
  })

  test('the log is JSON lines only: no stack trace, no error, no line for what Bun refused or a passing check', () => {
    for (const line of log) expect(() => JSON.parse(line), line).not.toThrow()
    expect(log.filter((line) => !line.includes('"level":"info"'))).toEqual([])
    // Health checks (the one after each refused request among them) write no line at the default level.
    const failing = HTTP_1_0.filter(([, status]) => status >= 400).length
    expect(accessLines()).toHaveLength(ODD.length + failing)
  })

  test('each answer has exactly one access line, with its method, status and request id', () => {
    const lines = accessLines()
    for (const answer of [...answers, ...http10.filter((answer) => answer.status >= 400)]) {
      const mine = lines.filter((entry) => entry.requestId === answer.headers['x-request-id'])
      expect(mine, answer.line).toEqual([
        expect.objectContaining({ method: answer.line.split(' ')[0], status: answer.status }),
      ])
    }
  })
})
