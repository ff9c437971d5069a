import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { createApp } from '../../src/app.ts'
import { openMemoryStore } from '../../src/store/document/memory.ts'
import type { Store } from '../../src/store/store.ts'
import { ensureBinary, removeDir, startBinary, tempDir } from '../support/binary.ts'
import { expectDocumented } from '../support/openapi.ts'

// Nothing secret or internal leaves the server: an unexpected failure answers a generic problem (the details go to
// the log), and the log itself never holds a password, a token, a key or an Authorization header.

const SERVICE_KEY = 'svc-0123456789-service-key'
const PASSWORD = 'correct horse battery staple'
/** What must never appear in an answer: a stack frame, a source path, the failure's own message. */
const INTERNALS = /\bat .+:\d+:\d+|\/src\/|\.ts\b|node_modules|secret-internal-detail/

/** A store whose reads fail the way a bug would: with a message and a stack full of internals. */
function brokenStore(): Store {
  const store = openMemoryStore()
  const fail = () => {
    throw new TypeError(
      'secret-internal-detail: cannot read properties of undefined (reading "items") at /src/x.ts:1:2',
    )
  }
  return new Proxy(store, {
    get(target, property, receiver) {
      if (property === 'artists') return { ...target.artists, list: fail, get: fail }
      return Reflect.get(target, property, receiver)
    },
  })
}

describe('an unexpected failure', () => {
  test.each(['/api/v1/artists', '/api/v1/artists/1'])(
    'GET %s → 500 problem, generic, without internals; the log gets the error',
    async (path) => {
      const reported: [string, unknown][] = []
      const app = createApp({ store: brokenStore(), report: (message, error) => reported.push([message, error]) })
      const response = await app.handle(new Request(`http://localhost${path}`))
      const text = await response.text()
      await expectDocumented({ method: 'GET', path, status: response.status, headers: response.headers, text })
      expect(response.status).toBe(500)
      expect(response.headers.get('content-type')).toBe('application/problem+json')
      expect(JSON.parse(text)).toEqual({
        type: '/problems/internal-error',
        title: expect.any(String),
        status: 500,
        detail: 'Something went wrong on our side. The details are in the server log.',
      })
      expect(text).not.toMatch(INTERNALS)
      expect(reported).toHaveLength(1)
      expect(String(reported[0]?.[1])).toContain('secret-internal-detail')
    },
  )
})

describe('the log of the executable (--log json)', () => {
  let dir: string
  let log: string
  const seen: string[] = []

  beforeAll(async () => {
    await ensureBinary()
    dir = tempDir()
    const server = await startBinary([
      '--port',
      '0',
      '--data',
      join(dir, 'db.json'),
      '--api-key',
      SERVICE_KEY,
      '--log',
      'json',
    ])
    const call = async (method: string, path: string, headers: Record<string, string> = {}, body?: unknown) => {
      const response = await fetch(`${server.url}${path}`, {
        method,
        headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      })
      const text = await response.text()
      seen.push(text)
      return { status: response.status, json: text ? JSON.parse(text) : undefined }
    }
    const user = { name: 'Carlos', email: 'carlos@rock-legends.com', password: PASSWORD }
    await call('POST', '/api/v1/user/signup', {}, user)
    await call('POST', '/api/v1/user/signup', {}, user) // 409
    await call('POST', '/api/v1/user/signup', {}, { ...user, email: 'x', password: `${PASSWORD}-too-long`.repeat(60) })
    await call('POST', '/api/v1/user/login', {}, { email: user.email, password: `${PASSWORD}-wrong` })
    const { token } = (await call('POST', '/api/v1/user/login', {}, { email: user.email, password: PASSWORD })).json
    const bearer = { authorization: `Bearer ${token}` }
    const { key } = (await call('POST', '/api/v1/user/api-keys', bearer, { name: 'ci' })).json
    await call('GET', '/api/v1/user/me', bearer)
    await call('GET', '/api/v1/user/api-keys', { 'x-api-key': key })
    await call('POST', '/api/v1/artists', bearer, { name: 'With a token' })
    await call('POST', '/api/v1/artists', { 'x-api-key': key }, { name: 'With a key' })
    await call('POST', '/api/v1/artists', { 'x-api-key': SERVICE_KEY }, { name: 'With the service key' })
    await call('POST', '/api/v1/artists', { authorization: `Bearer ${token}x` }, { name: 'Refused' })
    await call('POST', '/api/v1/artists', { authorization: `Basic ${btoa(`carlos:${PASSWORD}`)}` }, { name: 'Refused' })
    await call('POST', '/api/v1/artists', { 'x-api-key': `${SERVICE_KEY}-wrong` }, { name: 'Refused' })
    await call('POST', '/api/v1/user/logout', bearer)
    await call('GET', '/api/v1/user/me', bearer) // 401 now
    expect(await server.stop()).toBe(0)
    log = await server.stderr()
    seen.push(token, key)
  }, 120_000)
  afterAll(() => removeDir(dir))

  test('is JSON lines, one per request at least, and holds no password, token, key or Authorization value', () => {
    const lines = log.trim().split('\n')
    expect(lines.length).toBeGreaterThanOrEqual(16)
    for (const line of lines) expect(() => JSON.parse(line)).not.toThrow()
    for (const secret of [
      PASSWORD,
      SERVICE_KEY,
      'rl_tok_',
      'rl_key_',
      'Bearer',
      'Basic',
      btoa(`carlos:${PASSWORD}`),
      '$argon2',
    ])
      expect(log).not.toContain(secret)
    expect(log.toLowerCase()).not.toContain('authorization')
  })

  test('answers never show a password or its hash, and a secret only in the one answer that creates it', () => {
    const [token, key] = seen.slice(-2) as [string, string]
    const answers = seen.slice(0, -2)
    expect(answers.join('\n')).not.toContain(PASSWORD)
    expect(answers.join('\n')).not.toContain('$argon2')
    expect(answers.join('\n')).not.toContain(SERVICE_KEY)
    expect(answers.filter((answer) => answer.includes(token))).toHaveLength(1)
    expect(answers.filter((answer) => answer.includes(key))).toHaveLength(1)
  })
})
