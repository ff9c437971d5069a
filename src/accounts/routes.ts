import type { Server } from 'bun'
import { Elysia, t } from 'elysia'
import type { authGuard } from '../auth/guard.ts'
import { notFound } from '../http/problem.ts'
import { problemResponses } from '../http/responses.ts'
import {
  ApiKey,
  ApiKeyIdParams,
  ApiKeyInput,
  LoginInput,
  NewApiKey,
  NoContent,
  Session,
  SignupInput,
  User,
} from './model.ts'
import type { Accounts } from './service.ts'

const BASE = '/api/v1/user'
const KEYS = `${BASE}/api-keys`

// In-process calls (`app.handle`) have no socket, so they share one address. X-Forwarded-For is deliberately not
// read: any client can write it, and trusting it would let one client spread its attempts over invented addresses.
const IN_PROCESS = 'in-process'

/** The address a request came from, the key of the per-client rate limits. */
const clientOf = (server: Server<unknown> | null, request: Request) => server?.requestIP(request)?.address ?? IN_PROCESS

// OpenAPI security: a bearer token or a personal key (the alternatives are separate requirement objects).
const signedIn: Record<string, string[]>[] = [{ bearerAuth: [] }, { apiKeyHeader: [] }]
const unknownKey = (id: number) => notFound(`You have no API key ${id}.`)
const noContent = () => new Response(null, { status: 204 })

/** Account routes: sign-up, login, the caller's profile, logout, and personal API keys. */
export const accountRoutes = (accounts: Accounts, guard: ReturnType<typeof authGuard>) =>
  new Elysia({ name: 'accounts', prefix: BASE })
    .use(guard)
    .post(
      '/signup',
      async ({ body, server, request, set }) => {
        const user = await accounts.signUp(body, clientOf(server, request))
        set.status = 201
        set.headers.location = `${BASE}/me`
        return user
      },
      {
        body: SignupInput,
        response: { 201: User, ...problemResponses(400, 409, 413, 415, 429, 503) },
        detail: { operationId: 'createUser', summary: 'Create a user', tags: ['Accounts'], security: [] },
      },
    )
    .post('/login', ({ body, server, request }) => accounts.logIn(body, clientOf(server, request)), {
      body: LoginInput,
      response: { 200: Session, ...problemResponses(400, 401, 413, 415, 429, 503) },
      detail: { operationId: 'loginUser', summary: 'Log in for a bearer token', tags: ['Accounts'], security: [] },
    })
    .get(
      '/me',
      ({ caller }) => {
        const user = accounts.getUser(caller.userId)
        if (!user) throw notFound('Your account no longer exists.')
        return user
      },
      {
        user: true,
        response: { 200: User, ...problemResponses(401, 403, 404) },
        detail: { operationId: 'getCurrentUser', summary: 'Who am I', tags: ['Accounts'], security: signedIn },
      },
    )
    .post(
      '/logout',
      async ({ caller }) => {
        await accounts.logOut(caller)
        return noContent()
      },
      {
        user: true,
        response: { 204: NoContent('The token is revoked; no body.'), ...problemResponses(401, 403, 503) },
        detail: {
          operationId: 'logoutUser',
          summary: 'Revoke the bearer token of this request',
          tags: ['Accounts'],
          security: [{ bearerAuth: [] }],
        },
      },
    )
    .post(
      '/api-keys',
      async ({ caller, body, set }) => {
        const key = await accounts.createKey(caller.userId, body.name)
        set.status = 201
        set.headers.location = `${KEYS}/${key.id}`
        return key
      },
      {
        user: true,
        body: ApiKeyInput,
        response: { 201: NewApiKey, ...problemResponses(400, 401, 403, 413, 415, 503) },
        detail: {
          operationId: 'createApiKey',
          summary: 'Create a personal API key',
          tags: ['Accounts'],
          security: signedIn,
        },
      },
    )
    .get('/api-keys', ({ caller }) => accounts.listKeys(caller.userId), {
      user: true,
      response: { 200: t.Array(ApiKey), ...problemResponses(401, 403) },
      detail: {
        operationId: 'listApiKeys',
        summary: 'List your personal API keys',
        tags: ['Accounts'],
        security: signedIn,
      },
    })
    .get(
      '/api-keys/:id',
      ({ caller, params }) => {
        const id = Number(params.id)
        const key = accounts.getKey(caller.userId, id)
        if (!key) throw unknownKey(id)
        return key
      },
      {
        user: true,
        params: ApiKeyIdParams,
        response: { 200: ApiKey, ...problemResponses(400, 401, 403, 404) },
        detail: {
          operationId: 'getApiKey',
          summary: 'Get one personal API key',
          tags: ['Accounts'],
          security: signedIn,
        },
      },
    )
    .delete(
      '/api-keys/:id',
      async ({ caller, params }) => {
        const id = Number(params.id)
        if (!(await accounts.revokeKey(caller.userId, id))) throw unknownKey(id)
        return noContent()
      },
      {
        user: true,
        params: ApiKeyIdParams,
        response: { 204: NoContent('The key is revoked; no body.'), ...problemResponses(400, 401, 403, 404, 503) },
        detail: {
          operationId: 'revokeApiKey',
          summary: 'Revoke a personal API key',
          tags: ['Accounts'],
          security: signedIn,
        },
      },
    )
