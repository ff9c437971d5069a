import { describe, expect, test } from 'bun:test'
import { createApp } from '../../src/app.ts'
import { openMemoryStore } from '../../src/store/document/memory.ts'
import { startBinary } from '../support/binary.ts'
import { expectDocumented } from '../support/openapi.ts'

const CARLOS = { name: 'Carlos', email: 'carlos@rock-legends.com', password: 'i-love-rock' }

/** An app with sign-up closed (`--no-signup`) over a store that already holds Carlos. */
async function closedApp() {
  const store = openMemoryStore()
  const open = createApp({ store, report: () => {} })
  expect((await open.handle(post('/api/v1/user/signup', CARLOS))).status).toBe(201)
  return createApp({ store, report: () => {}, signup: false })
}

const post = (path: string, body: unknown, contentType = 'application/json') =>
  new Request(`http://localhost${path}`, {
    method: 'POST',
    headers: { 'content-type': contentType },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  })

describe('--no-signup', () => {
  test.each([
    ['a valid sign-up', JSON.stringify({ ...CARLOS, email: 'maria@rock-legends.com' }), 'application/json'],
    ['an invalid body', JSON.stringify({ name: '' }), 'application/json'],
    ['malformed JSON', '{"name":', 'application/json'],
    ['a body that is not JSON', 'name=Maria', 'text/plain'],
    ['a body over 1 MiB', JSON.stringify({ name: 'x'.repeat(2 ** 21) }), 'application/json'],
  ])('%s is refused with 403 before the body is read, saying sign-up is closed', async (_, body, type) => {
    const app = await closedApp()
    const response = await app.handle(post('/api/v1/user/signup', body, type))
    const text = await response.text()
    expect(response.status).toBe(403)
    expect(JSON.parse(text)).toMatchObject({ type: '/problems/forbidden', status: 403 })
    expect(JSON.parse(text).detail).toContain('Sign-up is closed on this server (--no-signup)')
    await expectDocumented({
      method: 'POST',
      path: '/api/v1/user/signup',
      status: response.status,
      headers: response.headers,
      text,
    })
  })

  test('existing accounts still log in', async () => {
    const app = await closedApp()
    const login = await app.handle(post('/api/v1/user/login', { email: CARLOS.email, password: CARLOS.password }))
    expect(login.status).toBe(200)
  })

  test('the sign-up page says it is closed instead of offering the form', async () => {
    const app = await closedApp()
    const page = await (await app.handle(new Request('http://localhost/signup'))).text()
    expect(page).toContain('Sign-up is closed on this server')
    expect(page).not.toContain('<form')
  })
})

describe('the executable with --no-signup', () => {
  test('answers sign-up with 403 over HTTP', async () => {
    const server = await startBinary(['--port', '0', '--data', ':memory:', '--log', 'off', '--no-signup'])
    try {
      const response = await fetch(`${server.url}/api/v1/user/signup`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(CARLOS),
      })
      expect(response.status).toBe(403)
      expect(((await response.json()) as { detail: string }).detail).toContain('--no-signup')
    } finally {
      await server.stop()
    }
  })
})
