import { Elysia } from 'elysia'
import type { authGuard } from '../auth/guard.ts'
import { anyCredential, bearerToken, publicAccess } from '../docs/security.ts'
import { jsonBody, SMALL_BODY_BYTES } from '../http/body.ts'
import { conditionsWithoutTags } from '../http/conditional.ts'
import { clientScope, type IdempotentRequests, scopeOf } from '../http/idempotency.ts'
import { PageQuery, Paginated, pageAnswer, pageOf } from '../http/pagination.ts'
import type { Clients } from '../http/proxies.ts'
import { reportOn } from '../http/rate-limit.ts'
import { described, NoContent, problemResponses } from '../http/responses.ts'
import { ApiKey, ApiKeyInput, NewApiKey } from '../model/credential.ts'
import { LoginInput, PublicUser, Session, SignupInput } from '../model/user.ts'
import { ApiKeyIdParams } from './params.ts'
import type { Accounts, PersonalKey, Session as SignedIn } from './service.ts'

const BASE = '/api/v1/user'
const KEYS = `${BASE}/api-keys`

const noContent = () => new Response(null, { status: 204 })

/** A session as `POST /login` answers it (`Session` in model/user.ts). */
const sessionAnswer = ({ user, token, expiresAt }: SignedIn) => ({
  user,
  token,
  token_type: 'Bearer' as const,
  expires_at: expiresAt,
})

/** A personal API key as the API shows it (`ApiKey` in model/credential.ts): `last_used_at` left out until it is first used. */
const keyAnswer = ({ id, name, prefix, createdAt, lastUsedAt }: PersonalKey) => ({
  id,
  name,
  prefix,
  created_at: createdAt,
  last_used_at: lastUsedAt ?? undefined,
})

/** Account routes: sign-up, login, the caller's profile, logout, and personal API keys. */
export function accountRoutes(
  accounts: Accounts,
  guard: ReturnType<typeof authGuard>,
  clients: Clients,
  keys: IdempotentRequests,
) {
  const routes = new Elysia({ name: 'accounts', prefix: BASE }).use(guard)
  return routes
    .onBeforeHandle(conditionsWithoutTags(() => routes.routes))
    .post(
      '/signup',
      ({ body, server, request, set }) => {
        const client = clients.key(server, request)
        return keys.run(request, set, { scope: clientScope(client), body, sensitive: true }, async () => {
          const user = await accounts.signUp(body, client, reportOn(set))
          set.status = 201
          set.headers.location = `${BASE}/me`
          return user
        })
      },
      {
        // Before the body is read: a closed sign-up says so whatever was sent, and costs no parsing; an open one
        // reads at most 16 KiB, so an anonymous megabyte is refused unread.
        parse: jsonBody({ limit: SMALL_BODY_BYTES, first: () => accounts.requireSignupOpen() }),
        body: SignupInput,
        response: {
          201: described(PublicUser, 'The new user; `Location` is where they can read their profile once logged in.'),
          ...problemResponses(400, 403, 409, 413, 415, 429, 503),
        },
        detail: {
          operationId: 'createUser',
          summary: 'Create a user',
          description:
            'Signs up. The email is trimmed, lower-cased and must be unused (409 otherwise), look-alike forms included: full-width, decomposed and upper-case forms of one address (NFKC, then lower case) are the same address. The password is 8–1,024 characters and kept only as an argon2id hash. A body over 16 KiB is 413, unread. Then log in for a bearer token.',
          tags: ['Authentication'],
          security: publicAccess,
        },
      },
    )
    .post(
      '/login',
      ({ body, server, request, set }) => {
        const client = clients.key(server, request)
        return keys.run(request, set, { scope: clientScope(client), body, sensitive: true }, async () =>
          sessionAnswer(await accounts.logIn(body, client)),
        )
      },
      {
        // Anyone may send this: at most 16 KiB of body is read, and a larger one is refused unread.
        parse: jsonBody({ limit: SMALL_BODY_BYTES }),
        body: LoginInput,
        response: {
          200: described(Session, 'You are logged in: the bearer token is shown this once.'),
          ...problemResponses(400, 401, 403, 413, 415, 429, 503),
        },
        detail: {
          operationId: 'loginUser',
          summary: 'Log in for a bearer token',
          description:
            'Exchanges email and password for a bearer token (24 hours by default). A wrong password and an unknown email get the same 401; repeated failures get 429 with `Retry-After`. An account holds at most 100 live tokens: a login beyond that revokes the oldest. An account the operator has disabled gets 403 `account-disabled`, and only with the right password. A body over 16 KiB is 413, unread.',
          tags: ['Authentication'],
          security: publicAccess,
        },
      },
    )
    .get('/me', ({ caller }) => accounts.getUser(caller.userId), {
      user: true,
      response: { 200: described(PublicUser, 'The signed-in user.'), ...problemResponses(401, 403, 404, 503) },
      detail: {
        operationId: 'getCurrentUser',
        summary: 'Who am I',
        description:
          'The user whose bearer token or personal API key the request carries. A service key is 403: it belongs to no user.',
        tags: ['Authentication'],
        security: anyCredential,
      },
    })
    .post(
      '/logout',
      ({ caller, request, set }) =>
        // Which token it revokes is the request's: the same key with another token is another request.
        keys.run(
          request,
          set,
          { scope: scopeOf(caller), body: null, subject: `credential:${caller.credentialId}` },
          async () => {
            await accounts.logOut(caller)
            return noContent()
          },
        ),
      {
        user: true,
        response: { 204: NoContent('The token is revoked; no body.'), ...problemResponses(401, 403, 503) },
        detail: {
          operationId: 'logoutUser',
          summary: 'Revoke the bearer token of this request',
          description:
            'Logs out: the bearer token the request carries stops working at once. Personal API keys are revoked one by one instead (403 here).',
          tags: ['Authentication'],
          security: bearerToken,
        },
      },
    )
    .post(
      '/api-keys',
      ({ caller, body, request, set }) =>
        keys.run(request, set, { scope: scopeOf(caller), body, sensitive: true }, async () => {
          const created = await accounts.createKey(caller.userId, body.name)
          set.status = 201
          set.headers.location = `${KEYS}/${created.id}`
          return { ...keyAnswer(created), key: created.key }
        }),
      {
        user: true,
        body: ApiKeyInput,
        response: {
          201: described(NewApiKey, 'The new key, shown this once: only its hash is kept.'),
          ...problemResponses(400, 401, 403, 409, 413, 415, 503),
        },
        detail: {
          operationId: 'createApiKey',
          summary: 'Create a personal API key',
          description:
            'A key that acts for you in `X-API-Key`, for scripts and pipelines, until you revoke it. Copy it from this answer: it is never shown again. An account holds at most 100 keys that are not revoked: the 101st is 409 until you revoke one.',
          tags: ['Authentication'],
          security: anyCredential,
        },
      },
    )
    .get(
      '/api-keys',
      async ({ caller, query, set }) => {
        const page = pageOf(query)
        const { items, total } = await accounts.listKeys(caller.userId, page)
        // A user's keys are few, and are not cached as pages.
        return pageAnswer(set, KEYS, page, items.map(keyAnswer), total)
      },
      {
        user: true,
        query: PageQuery,
        response: {
          200: described(
            Paginated(ApiKey),
            'One page of your keys that are not revoked, oldest first, never the keys themselves; with a link to the next page.',
          ),
          ...problemResponses(400, 401, 403, 503),
        },
        detail: {
          operationId: 'listApiKeys',
          summary: 'List your personal API keys',
          description:
            'Your personal API keys, a page at a time (`limit` and `offset` as for artists), to recognise them by name and prefix and see when each was last used. Follow `meta.next` for the next page; it is `null` on the last one.',
          tags: ['Authentication'],
          security: anyCredential,
        },
      },
    )
    .get(
      '/api-keys/:id',
      async ({ caller, params }) => keyAnswer(await accounts.getKey(caller.userId, Number(params.id))),
      {
        user: true,
        params: ApiKeyIdParams,
        response: {
          200: described(ApiKey, 'The key, without the key itself.'),
          ...problemResponses(400, 401, 403, 404, 503),
        },
        detail: {
          operationId: 'getApiKey',
          summary: 'Get one personal API key',
          description: "One of your personal API keys. Another user's key, or a revoked one, is 404.",
          tags: ['Authentication'],
          security: anyCredential,
        },
      },
    )
    .delete(
      '/api-keys/:id',
      async ({ caller, params }) => {
        await accounts.revokeKey(caller.userId, Number(params.id))
        return noContent()
      },
      {
        user: true,
        params: ApiKeyIdParams,
        response: { 204: NoContent('The key is revoked; no body.'), ...problemResponses(400, 401, 403, 404, 503) },
        detail: {
          operationId: 'revokeApiKey',
          summary: 'Revoke a personal API key',
          description: 'The key stops working at once and leaves your list. Revoking is for good.',
          tags: ['Authentication'],
          security: anyCredential,
        },
      },
    )
}
