import { describe, expect, test } from 'bun:test'
import { Elysia, t } from 'elysia'
import { createApp } from '../../src/app.ts'
import { authGuard, requirementOf, serviceKeys } from '../../src/auth/guard.ts'
import { jsonBody, jsonBodyOf, MAX_BODY_BYTES, SMALL_BODY_BYTES } from '../../src/http/body.ts'
import { openMemoryStore } from '../../src/store/document/memory.ts'
import { asService, SERVICE_KEY } from '../helpers.ts'

// Each route reads its body through its own parse step (`jsonBody`): the `auth`, `user` and `service` options give
// theirs, which checks the credentials first; sign-up and login name theirs. There is no app-wide parser behind them,
// so a route that took a body without one would fall back to Elysia's own parsers (any content type, no limit but the
// transport's, no `__proto__` scan), and a route whose own parse ran before its option's would read the body before
// the credentials. These tests catch both. test/auth/credentials-first.binary.test.ts checks the order itself.

const app = () =>
  createApp({ store: openMemoryStore(), apiKeys: [SERVICE_KEY], reset: async () => {}, report: () => {} })

/** Every route that can take a body: all but GET and HEAD. */
const bodyRoutes = () => app().routes.filter((route) => !['GET', 'HEAD'].includes(route.method))

describe('every route that takes a body has one parse step', () => {
  test('it is a jsonBody step: 16 KiB on sign-up and login, 1 MiB on the others, all of which need credentials', () => {
    const routes = bodyRoutes()
    expect(routes.length).toBeGreaterThan(10)
    for (const route of routes) {
      const name = `${route.method} ${route.path}`
      // The app's own parse hooks come first and read nothing (the target check, the log's start); the route's
      // jsonBody step is the last, and the only one that reads the body.
      const parses: unknown[] = Array.isArray(route.hooks.parse) ? route.hooks.parse : []
      expect(
        parses.filter((hook) => jsonBodyOf([hook])),
        name,
      ).toHaveLength(1)
      expect(jsonBodyOf(parses.slice(-1)), name).toBeDefined()
      const publicRoute = ['/api/v1/user/signup', '/api/v1/user/login'].includes(route.path)
      expect(jsonBodyOf(route.hooks.parse), name).toEqual({ limit: publicRoute ? SMALL_BODY_BYTES : MAX_BODY_BYTES })
      expect(requirementOf(route.hooks.transform) !== undefined, name).toBe(!publicRoute)
    }
  })

  test('so each answers a body that is not JSON with 415, given the credentials it asks for', async () => {
    const server = app()
    const json = { 'content-type': 'application/json' }
    const signUp = { name: 'Ana', email: 'ana@example.com', password: 'long enough' }
    const post = (path: string, body: unknown) =>
      server.handle(
        new Request(`http://localhost${path}`, { method: 'POST', headers: json, body: JSON.stringify(body) }),
      )
    await post('/api/v1/user/signup', signUp)
    const login = await post('/api/v1/user/login', { email: signUp.email, password: signUp.password })
    const { token } = (await login.json()) as { token: string }
    expect(token).toBeString()
    for (const route of bodyRoutes()) {
      const path = route.path.replaceAll(/:\w+/g, '1')
      const statuses: number[] = []
      const everyCredential: Record<string, string>[] = [{}, asService, { authorization: `Bearer ${token}` }]
      for (const credentials of everyCredential) {
        const response = await server.handle(
          new Request(`http://localhost${path}`, {
            method: route.method,
            headers: { 'content-type': 'text/plain', ...credentials },
            body: 'name=Moris',
          }),
        )
        statuses.push(response.status)
      }
      // Refused for the credentials (401, 403) where they are wrong, and for the body where they are right.
      expect(statuses, `${route.method} ${route.path}`).toContain(415)
    }
  })
})

describe('a route cannot read its body before its credentials are checked', () => {
  const guard = authGuard([serviceKeys(['k'])])
  test.each(['auth', 'user', 'service'])('a route with { %s: true } and its own parse is refused', (option) => {
    expect(() =>
      new Elysia().use(guard).post('/x', () => 'ok', { [option]: true, parse: jsonBody(), body: t.Object({}) }),
    ).toThrow(`A route with { ${option}: true } cannot name its own parse`)
  })

  test('without its own parse, the option gives the route its parse step', () => {
    const routes = new Elysia().use(guard).post('/x', () => 'ok', { service: true, body: t.Object({}) }).routes
    expect(jsonBodyOf(routes[0]?.hooks.parse)).toEqual({ limit: MAX_BODY_BYTES })
  })
})

describe('an empty body sent as JSON', () => {
  // Many clients send Content-Type: application/json on every request: a reset or a delete is still body-less.
  test('is no body on a route that takes none, and a missing one on a route that needs one', async () => {
    const server = app()
    const empty = (method: string, path: string) =>
      server.handle(
        new Request(`http://localhost${path}`, {
          method,
          headers: { ...asService, 'content-type': 'application/json', 'content-length': '0' },
        }),
      )
    expect((await empty('POST', '/__admin/reset')).status).toBe(204)
    // The deprecated delete answers as it does without a body: the problem that says how to correct an artist.
    const deleted = await empty('DELETE', '/api/v1/artists/1')
    expect(await deleted.json()).toMatchObject({ type: '/problems/deprecated-operation' })
    const create = await empty('POST', '/api/v1/artists')
    expect(create.status).toBe(400)
    expect(await create.json()).toMatchObject({
      type: '/problems/validation-error',
      errors: [{ pointer: '', detail: 'must be a JSON object' }],
    })
  })
})
