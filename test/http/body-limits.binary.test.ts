import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createApp } from '../../src/app.ts'
import { openMemoryStore } from '../../src/store/document/memory.ts'
import { asService, SERVICE_KEY } from '../helpers.ts'
import { answerHead, ensureBinary, type RunningBinary, startBinary, statusOf } from '../support/binary.ts'

// Sign-up and login are open to anyone and take small bodies, so they read at most 16 KiB of one: a larger body is
// refused with 413 before it is read (by its Content-Length) or as soon as it passes 16 KiB (a chunked body),
// never parsed. About 1 MiB there costs 80 to 220 ms of CPU each. Writes with credentials keep the 1 MiB limit.

const SMALL = 16 * 1024
const MiB = 1024 * 1024
const PUBLIC_ROUTES = ['/api/v1/user/signup', '/api/v1/user/login']
const json = { 'content-type': 'application/json' }
// The length of the body of `countedBody`.
const ABOUT_1_MIB = 11 + 15 * 64 * 1024 + 1

const app = () => createApp({ store: openMemoryStore(), apiKeys: [SERVICE_KEY], report: () => {} })

/** A JSON body of about 1 MiB (`{"name":"x","k":0,…}`: 15 chunks of 64 KiB, under the 1 MiB limit of other routes); counts the chunks read. */
function countedBody() {
  const head = new TextEncoder().encode('{"name":"x"')
  const keys = new TextEncoder().encode(',"k":0'.repeat(Math.floor((64 * 1024) / 6)).padEnd(64 * 1024, ' '))
  const read = { chunks: 0 }
  const stream = new ReadableStream({
    pull(controller) {
      read.chunks++
      controller.enqueue(read.chunks === 1 ? head : keys)
      if (read.chunks > 15) {
        controller.enqueue(new TextEncoder().encode('}'))
        controller.close()
      }
    },
  })
  return { stream, read }
}

/** `text` with every character written as a `\uXXXX` escape: the longest JSON of a string. */
const escaped = (text: string) => [...text].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('')

// The longest valid fields: a 100-character name, a 254-character address, a 1,024-character password.
const NAME = `Ana ${'é'.repeat(96)}`
const EMAIL = `${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(57)}.com`
const PASSWORD = 'p'.repeat(1024)

describe('sign-up and login read at most 16 KiB of body (in-process)', () => {
  for (const path of PUBLIC_ROUTES) {
    test(`${path}: a declared ~1 MiB → 413 naming the limit, the body unread`, async () => {
      const { stream, read } = countedBody()
      const response = await app().handle(
        new Request(`http://localhost${path}`, {
          method: 'POST',
          headers: { ...json, 'content-length': String(ABOUT_1_MIB) },
          body: stream,
        }),
      )
      expect(response.status).toBe(413)
      expect(response.headers.get('content-type')).toBe('application/problem+json')
      const problem = (await response.json()) as { type: string; detail: string }
      expect(problem.type).toBe('/problems/payload-too-large')
      expect(problem.detail).toBe(`The request body is larger than ${SMALL} bytes (16 KiB).`)
      // A ReadableStream asks for its first chunk as it is made; none after that.
      expect(read.chunks).toBeLessThanOrEqual(1)
    })

    test(`${path}: ~1 MiB without a Content-Length (chunked) → 413 once 16 KiB have come, the rest unread`, async () => {
      const { stream, read } = countedBody()
      const response = await app().handle(
        new Request(`http://localhost${path}`, { method: 'POST', headers: json, body: stream }),
      )
      expect(response.status).toBe(413)
      expect(((await response.json()) as { detail: string }).detail).toContain(`${SMALL} bytes (16 KiB)`)
      expect(read.chunks).toBeLessThanOrEqual(3)
    })
  }

  test('the largest valid bodies, every character escaped (about 8 KB), are accepted', async () => {
    const server = app()
    const send = (path: string, body: string) =>
      server.handle(new Request(`http://localhost${path}`, { method: 'POST', headers: json, body }))
    const signup = `{"name":"${escaped(NAME)}","email":"${escaped(EMAIL)}","password":"${escaped(PASSWORD)}"}`
    expect(signup.length).toBeGreaterThan(8000)
    const created = await send('/api/v1/user/signup', signup)
    expect(created.status, await created.clone().text()).toBe(201)
    const login = await send('/api/v1/user/login', `{"email":"${escaped(EMAIL)}","password":"${escaped(PASSWORD)}"}`)
    expect(login.status).toBe(200)
  })

  test('a body just over 16 KiB of spaces around a valid login is refused; writes with credentials keep 1 MiB', async () => {
    const server = app()
    const padded = `${' '.repeat(SMALL)}{"email":"a@b.co","password":"x"}`
    const refused = await server.handle(
      new Request('http://localhost/api/v1/user/login', { method: 'POST', headers: json, body: padded }),
    )
    expect(refused.status).toBe(413)
    // An artist of about 60 KB (its description escaped) goes in with a service key.
    const artist = `{"name":"Moris","description":"${escaped('é'.repeat(10_000))}"}`
    expect(artist.length).toBeGreaterThan(3 * SMALL)
    const created = await server.handle(
      new Request('http://localhost/api/v1/artists', {
        method: 'POST',
        headers: { ...json, ...asService },
        body: artist,
      }),
    )
    expect(created.status).toBe(201)
  })

  test('a closed sign-up still says so first, whatever the body', async () => {
    const server = createApp({ store: openMemoryStore(), signup: false, report: () => {} })
    const { stream, read } = countedBody()
    const response = await server.handle(
      new Request('http://localhost/api/v1/user/signup', {
        method: 'POST',
        headers: { ...json, 'content-length': String(ABOUT_1_MIB) },
        body: stream,
      }),
    )
    expect(response.status).toBe(403)
    expect(read.chunks).toBeLessThanOrEqual(1)
  })
})

describe('sign-up and login read at most 16 KiB of body (the executable, over a socket)', () => {
  let server: RunningBinary
  let port: number
  beforeAll(async () => {
    await ensureBinary()
    server = await startBinary(['--port', '0', '--data', ':memory:', '--api-key', 'k', '--log', 'off'])
    port = Number(new URL(server.url).port)
  }, 120_000)
  afterAll(() => server.stop())

  /** Sends `head` and `body` on a fresh connection; what comes back (its head) within `ms`, and when. */
  const send = (head: string, body: string, ms: number) =>
    answerHead(port, `${head}\r\nHost: localhost\r\nContent-Type: application/json\r\n\r\n${body}`, ms)

  for (const path of PUBLIC_ROUTES) {
    test(`${path}: a declared 1 MiB of which 20 bytes are sent → 413 at once`, async () => {
      const { answer, afterMs } = await send(
        `POST ${path} HTTP/1.1\r\nContent-Length: ${MiB - 100}`,
        '{"email":"a@b.co","x',
        3000,
      )
      expect(statusOf(answer)).toBe(413)
      expect(afterMs).toBeLessThan(1000)
    })

    test(`${path}: a chunked ~1 MiB → 413, and the server goes on serving`, async () => {
      const chunk = ' '.repeat(0x10000)
      const chunks = Array.from({ length: 15 }, () => `10000\r\n${chunk}\r\n`).join('')
      const { answer } = await send(
        `POST ${path} HTTP/1.1\r\nTransfer-Encoding: chunked`,
        `${chunks}2\r\n{}\r\n0\r\n\r\n`,
        5000,
      )
      expect(statusOf(answer)).toBe(413)
      expect((await fetch(`${server.url}/healthz`)).status).toBe(200)
    })
  }
})
