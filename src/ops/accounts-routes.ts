import { Elysia, t } from 'elysia'
import type { authGuard } from '../auth/guard.ts'
import { conditionsWithoutTags } from '../http/conditional.ts'
import type { IdempotentRequests } from '../http/idempotency.ts'
import { PageQuery, pageAnswer, pageOf } from '../http/pagination.ts'
import { SignupInput } from '../model/user.ts'
import type { OperatorAccounts } from './accounts.ts'

const BASE = '/__admin/users'

const EmailInput = t.Object({ email: SignupInput.properties.email }, { additionalProperties: false })
const PasswordResetInput = t.Object(
  { email: SignupInput.properties.email, password: SignupInput.properties.password },
  { additionalProperties: false },
)

// The operator's routes: only a service key may call them, and they are left out of /openapi.json, which documents
// the API for its users (docs/api.md, "Managing accounts", documents them).
const operator = { service: true, detail: { hide: true } } as const

/**
 * `/__admin/users…`: what `rock-legends users` asks of a running server that owns its data file, so that the command
 * never writes the file behind the server's back. Every route needs a service key (a user's credentials get 403).
 */
export function operatorAccountRoutes(
  accounts: OperatorAccounts,
  guard: ReturnType<typeof authGuard>,
  keys: IdempotentRequests,
) {
  const routes = new Elysia({ name: 'operator-accounts', prefix: BASE }).use(guard)
  return routes
    .onBeforeHandle(conditionsWithoutTags(() => routes.routes))
    .get(
      '',
      async ({ query, set }) => {
        const page = pageOf(query)
        const slice = await accounts.list(page)
        return pageAnswer(set, BASE, page, slice.items, slice.total)
      },
      { ...operator, query: PageQuery },
    )
    .post(
      '',
      ({ body, request, set }) =>
        keys.run(request, set, { scope: 'service', body, sensitive: true }, async () => {
          const user = await accounts.add(body)
          set.status = 201
          return user
        }),
      { ...operator, body: SignupInput },
    )
    .post(
      '/disable',
      ({ body, request, set }) =>
        keys.run(request, set, { scope: 'service', body }, () => accounts.setDisabled(body.email, true)),
      { ...operator, body: EmailInput },
    )
    .post(
      '/enable',
      ({ body, request, set }) =>
        keys.run(request, set, { scope: 'service', body }, () => accounts.setDisabled(body.email, false)),
      { ...operator, body: EmailInput },
    )
    .post(
      '/reset-password',
      ({ body, request, set }) =>
        keys.run(request, set, { scope: 'service', body, sensitive: true }, () =>
          accounts.resetPassword(body.email, body.password),
        ),
      { ...operator, body: PasswordResetInput },
    )
}
