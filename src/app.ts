import { Elysia, t } from 'elysia'
import { AccountAdmin } from './accounts/admin.ts'
import { accountRoutes } from './accounts/routes.ts'
import { ACCOUNT_LIMITS, type AccountLimits, Accounts } from './accounts/service.ts'
import { type Reset, resetRoutes } from './admin/reset.ts'
import { adminUserRoutes } from './admin/users.ts'
import { requestClient } from './auth/client-key.ts'
import { authGuard, serviceKeys } from './auth/guard.ts'
import { userCredentials } from './auth/user-credentials.ts'
import { albumRoutes } from './catalogue/albums.ts'
import { artistRoutes } from './catalogue/artists.ts'
import { Catalogue, type CatalogueLimits } from './catalogue/service.ts'
import { coverRoutes } from './covers/routes.ts'
import { docsRoutes } from './docs/openapi.ts'
import { allowedMethods } from './http/allowed-methods.ts'
import { cors } from './http/cors.ts'
import { credentialsFirst } from './http/credentials-first.ts'
import { delay } from './http/delay.ts'
import { type ErrorReporter, problemResponder } from './http/error-handler.ts'
import { readOnly } from './http/read-only.ts'
import { requestLog } from './http/request-log.ts'
import { absoluteTargets } from './http/request-target.ts'
import { securityHeaders } from './http/security-headers.ts'
import type { AccessEntry } from './log.ts'
import type { Store } from './store/store.ts'
import { webRoutes } from './web/routes.ts'

/** What an app is built from. */
export interface AppOptions {
  store: Store
  /** Service keys that may write (`--api-key`). */
  apiKeys?: readonly string[]
  /** Where unexpected failures are reported; defaults to stderr. */
  report?: ErrorReporter
  /** The clock; tests inject their own. */
  now?: () => Date
  /** Lifetime of bearer tokens from login, in milliseconds (`--token-ttl`); 24 hours by default. */
  tokenTtlMs?: number
  /** Origins allowed by CORS (`--cors`); none by default. */
  cors?: readonly string[]
  /** Where each answered request is logged, with its `X-Request-Id`; no access log (and no ids) by default. */
  accessLog?: (entry: AccessEntry) => void
  /** Milliseconds to wait before every API response (`--delay`); none by default. */
  delay?: number
  /** Refuse every write with 403 (`--read-only`). */
  readOnly?: boolean
  /** Serves `POST /__admin/reset` (service key) calling this (`--allow-reset`; see `captureStartState`). */
  reset?: Reset
  /** The brakes on sign-up and login; `ACCOUNT_LIMITS` by default (tests that sign up many users raise them). */
  limits?: AccountLimits
  /** How many artists and albums an account may add; `CATALOGUE_LIMITS` by default (tests lower them). */
  catalogueLimits?: CatalogueLimits
  /** Serve the web pages at `/` (true by default); false (`--no-ui`) makes `/` a JSON index of the API. */
  ui?: boolean
  /** Whether anyone may create an account (true by default); false (`--no-signup`) answers sign-up with 403. */
  signup?: boolean
}

const defaultReport: ErrorReporter = (message, error) => console.error(message, error)
const DAY_MS = 86_400_000

/**
 * Builds the whole HTTP API over a store, without listening: `app.handle(request)` answers in-process, and
 * `startServer` puts it on a port. Every route is registered in the list below.
 */
export function createApp({
  store,
  apiKeys = [],
  report = defaultReport,
  now = () => new Date(),
  tokenTtlMs = DAY_MS,
  cors: corsOrigins = [],
  accessLog,
  delay: delayMs = 0,
  readOnly: refuseWrites = false,
  reset,
  limits,
  catalogueLimits,
  ui = true,
  signup = true,
}: AppOptions) {
  const catalogue = new Catalogue(store, { now, limits: catalogueLimits })
  const accounts = new Accounts(store, { now, tokenTtlMs, limits, signup })
  // Failed credential checks are counted per client (by the socket, as for logins; shared by replicas over SQL).
  const credentialFailures = (limits ?? ACCOUNT_LIMITS).credentialFailuresPerClient
  const guard = authGuard([serviceKeys(apiKeys), userCredentials(store, now)], {
    failures: store.limiter('credential-failures-per-client', credentialFailures, () => now().getTime()),
    clientOf: (request) => requestClient(app.server, request),
  })
  const latestYear = now().getUTCFullYear() + 1
  const app = new Elysia({ normalize: false })
  const allowed = allowedMethods(() => app.routes)
  return (
    app
      // Credentials (on routes that need them) before the body is read, then the JSON body.
      .onParse(
        { as: 'global' },
        credentialsFirst(() => app.routes),
      )
      .onError(
        { as: 'global' },
        problemResponder(allowed, report, () => now().getTime()),
      )
      .use(requestLog(accessLog))
      .use(absoluteTargets())
      .use(securityHeaders())
      .use(cors(corsOrigins))
      .use(delay(delayMs))
      .use(readOnly(refuseWrites))
      .use(docsRoutes(() => app.routes))
      // Asks the store: over a database, a replica that cannot reach it answers 503 `database-unavailable`, as every
      // request then does; where the database is and why it failed go to the log only (src/http/error-handler.ts).
      .get(
        '/healthz',
        async () => {
          await store.check()
          return { status: 'ok' as const }
        },
        {
          response: t.Object({ status: t.Literal('ok') }),
          detail: { hide: true },
        },
      )
      // The pages (`/`, `/artists/:artistId`, `/login`, `/signup`, their assets), `/problems/:kind` and the favicon.
      .use(webRoutes({ catalogue, ui, signup, latestYear }))
      .use(artistRoutes(catalogue, guard))
      .use(albumRoutes(catalogue, guard, latestYear))
      .use(accountRoutes(accounts, guard))
      .use(coverRoutes(store))
      .use(resetRoutes(reset, guard))
      // The operator's accounts (`rock-legends users` while this server owns the data file): service keys only.
      .use(adminUserRoutes(new AccountAdmin(store, now), guard))
  )
}

/** The app type, for typed clients. */
export type App = ReturnType<typeof createApp>
