import { Elysia } from 'elysia'
import { accountRoutes } from './accounts/routes.ts'
import { ACCOUNT_LIMITS, type AccountLimits, Accounts } from './accounts/service.ts'
import { authGuard, callerName, serviceKeys } from './auth/guard.ts'
import type { PasswordHasher } from './auth/password.ts'
import { userCredentials } from './auth/user-credentials.ts'
import { albumRoutes } from './catalogue/albums.ts'
import { artistRoutes } from './catalogue/artists.ts'
import { Catalogue, type CatalogueLimits } from './catalogue/service.ts'
import { coverRoutes } from './covers/routes.ts'
import { apiDocumentation } from './docs/openapi.ts'
import { eventRoutes } from './events/routes.ts'
import { EVENT_STREAM_LIMITS, type EventStreamLimits } from './events/streams.ts'
import type { FixtureControls } from './fixtures/front.ts'
import { type Reset, resetRoutes } from './fixtures/reset.ts'
import { fixtureRoutes } from './fixtures/routes.ts'
import { acceptable } from './http/accept.ts'
import { allowedMethods } from './http/allowed-methods.ts'
import { cors } from './http/cors.ts'
import { delay } from './http/delay.ts'
import { type ErrorReporter, problemResponder } from './http/error-handler.ts'
import { healthRoutes } from './http/health.ts'
import { idempotentRequests } from './http/idempotency.ts'
import { trustedClients } from './http/proxies.ts'
import { singleParameters } from './http/query-params.ts'
import { readOnly } from './http/read-only.ts'
import { requestLog } from './http/request-log.ts'
import { absoluteTargets } from './http/request-target.ts'
import { securityHeaders, strictTransportSecurity, withStrictTransportOnErrors } from './http/security-headers.ts'
import type { AccessEntry } from './log.ts'
import type { Metrics } from './metrics/metrics.ts'
import { OperatorAccounts } from './ops/accounts.ts'
import { operatorAccountRoutes } from './ops/accounts-routes.ts'
import type { StoreKind } from './ops/backup-format.ts'
import { backupRoutes } from './ops/backup-route.ts'
import { EMBEDDED_DEFAULTS as defaults, type ServerOptions } from './options.ts'
import type { IdempotencyLimits } from './store/idempotency.ts'
import type { Store } from './store/store.ts'
import { webRoutes } from './web/routes.ts'

/**
 * What an app is built from: the server options that shape answers (documented in src/options.ts), and what the
 * embedder supplies.
 */
export interface AppOptions
  extends Pick<
    ServerOptions,
    'apiKeys' | 'tokenTtlMs' | 'cors' | 'delay' | 'readOnly' | 'ui' | 'signup' | 'trustProxy' | 'hstsMs'
  > {
  /** Whether the server answers over HTTPS: every answer then says `Strict-Transport-Security` (`hstsMs`). */
  https?: boolean
  /**
   * Whether requests come in-process with URLs of any scheme and origin (the in-process service, src/service.ts),
   * rather than from a listener of one scheme: routed as over HTTPS (see below), right for every `http://` host of
   * four characters or more and every `https://` host of three or more; the caller answers shorter ones itself.
   */
  anyOrigin?: boolean
  store: Store
  /** What kind of store `store` is, as backups name it: `json-file` (a data file, or memory; the default) or `postgresql`. */
  storeKind?: StoreKind
  /** Where unexpected failures are reported; defaults to stderr. */
  report?: ErrorReporter
  /** The clock; tests inject their own. */
  now?: () => Date
  /** Where each answered request is logged, with its `X-Request-Id`; no access log (and no ids) by default. */
  accessLog?: (entry: AccessEntry) => void
  /** Where each answer is counted, by its route's template (`--metrics`, src/metrics/); nothing is counted by default. */
  metrics?: Metrics
  /** Serves `POST /__admin/reset` (service key) calling this (`allowReset`; see `captureStartState`). */
  reset?: Reset
  /**
   * Serves the fixture controls (`--fixtures`: namespaces, request journal, faults, state) of this front, which must
   * also be what answers the app's requests (`front.fetch`) and hold `store` (`front.store`).
   */
  fixtureFront?: FixtureControls
  /** The brakes on sign-up and login; `ACCOUNT_LIMITS` by default (tests that sign up many users raise them). */
  limits?: AccountLimits
  /** How many artists and albums an account may add; `CATALOGUE_LIMITS` by default (tests lower them). */
  catalogueLimits?: CatalogueLimits
  /** How passwords are hashed and checked; argon2id at OWASP's cost by default (in-process tests pass a cheaper one). */
  passwords?: PasswordHasher
  /** The bounds of the answers kept for `Idempotency-Key`s; `IDEMPOTENCY_LIMITS` by default (tests lower them). */
  idempotency?: IdempotencyLimits
  /** The bounds and heartbeat of `GET /api/v1/events`; `EVENT_STREAM_LIMITS` by default (tests and the bench change them). */
  events?: Partial<EventStreamLimits>
}

const defaultReport: ErrorReporter = (message, error) => console.error(message, error)

/**
 * Builds the whole HTTP API over a store, without listening: `app.handle(request)` answers in-process, and
 * `startServer` puts it on a port. Every route is registered in the list below.
 */
export function createApp({
  store,
  storeKind = 'json-file',
  apiKeys = defaults.apiKeys,
  report = defaultReport,
  now = () => new Date(),
  tokenTtlMs = defaults.tokenTtlMs,
  cors: corsOrigins = defaults.cors,
  accessLog,
  metrics,
  delay: delayMs = defaults.delay,
  readOnly: refuseWrites = defaults.readOnly,
  reset,
  fixtureFront,
  limits,
  catalogueLimits,
  passwords,
  events,
  idempotency,
  ui = defaults.ui,
  signup = defaults.signup,
  trustProxy = defaults.trustProxy,
  https = false,
  anyOrigin = false,
  hstsMs = defaults.hstsMs,
}: AppOptions) {
  const catalogue = new Catalogue(store, { now, limits: catalogueLimits })
  const accounts = new Accounts(store, { now, tokenTtlMs, passwords, limits, signup })
  // Who each request comes from: the socket's peer, or the client a trusted proxy names (--trust-proxy).
  const clients = trustedClients(trustProxy)
  // Failed credential checks are counted per client (by the socket, as for logins; shared by replicas over SQL).
  const credentialFailures = (limits ?? ACCOUNT_LIMITS).credentialFailuresPerClient
  const guard = authGuard([serviceKeys(apiKeys), userCredentials(store, now)], {
    failures: store.limiter('credential-failures-per-client', credentialFailures, () => now().getTime()),
    clientOf: (request) => clients.key(app.server, request),
  })
  const latestYear = now().getUTCFullYear() + 1
  // Over HTTPS, every answer tells browsers to come back over HTTPS alone (--hsts).
  const hsts = https ? strictTransportSecurity(hstsMs) : undefined
  // POSTs run once per `Idempotency-Key` of each account (or anonymous client), their answers kept in the store.
  const keys = idempotentRequests(store, now, idempotency)
  // Elysia finds the path after the first 11 characters of the URL unless told otherwise, assuming a host of at least
  // four ("http://a.bc"): a `Host: x` (or `a:1`) request, which Bun's own routing serves right, would be routed by
  // what follows `/api/` when the app answers through `handle` (--fixtures, a takeover). Told otherwise, it looks
  // after the 7 of `http://`, which over HTTPS is the second slash of `https://`: there it looks after 11 again, right
  // for every host of three characters or more (`https://a.b/`); a shorter `Host` over HTTPS, which no certificate
  // names, is routed wrongly through `handle` alone.
  const app = new Elysia({ normalize: false, handler: { standardHostname: https || anyOrigin } })
  const allowed = allowedMethods(() => app.routes)
  const documentation = apiDocumentation(clients, trustProxy.length > 0)
  const http = metrics?.http
  const log = requestLog(
    accessLog,
    // `app.server`, read when a line is written: a log hook that named `server` would cost every request more.
    (request) => clients.sender(app.server, request).address,
    // Four parameters passed on as they are: a rest parameter would build an array for every answer.
    http && ((method, route, status, seconds) => http.record(method, route, status, seconds)),
    (request) => {
      const caller = guard.callerOf(request)
      return caller && callerName(caller)
    },
  )
  // By default nothing runs before routing (an `onRequest` hook would cost every request more than the rest of a
  // read): what every answer needs runs in each route's first step (its parse step for a write, else its transform)
  // and in `mapResponse`; answers made outside any route come from the error handler. Only the flags that must act
  // before routing (--cors, --delay, --read-only) add such a hook, and only when given. `/openapi.json` describes the
  // routes as declared here, once all are: the framework writes into their schemas as it compiles each on its first
  // request (src/docs/declared.ts).
  return documentation.declared(
    app
      // Every error becomes a problem, with its request id and access line like any other answer.
      .onError(
        { as: 'global' },
        log.answering(
          withStrictTransportOnErrors(
            problemResponder(allowed, report, () => now().getTime(), metrics && (() => metrics.store.refused())),
            hsts,
          ),
        ),
      )
      .use(log.hooks)
      .use(absoluteTargets())
      // 406 when Accept excludes every type the route sends.
      .use(acceptable(ui))
      // A query parameter a route declares, given twice, is refused; parameters it does not declare are ignored.
      .use(singleParameters(() => app.routes))
      .use(securityHeaders(hsts))
      .use(cors(corsOrigins, log.requestId))
      .use(delay(delayMs))
      .use(readOnly(refuseWrites))
      .use(documentation.routes)
      // `/livez` (the process), `/readyz` and `/healthz` (the store answers too).
      .use(healthRoutes(store))
      // The pages (`/`, `/artists/:artistId`, `/login`, `/signup`, their assets), `/problems/:kind` and the favicon.
      .use(webRoutes({ catalogue, ui, signup, latestYear }))
      .use(artistRoutes(catalogue, guard, keys.create))
      .use(albumRoutes(catalogue, guard, latestYear, keys.create))
      .use(eventRoutes(store.changes, clients, { ...EVENT_STREAM_LIMITS, ...events }))
      .use(accountRoutes(accounts, guard, clients, keys))
      .use(coverRoutes(catalogue))
      .use(resetRoutes(reset, guard, keys))
      .use(fixtureRoutes(fixtureFront, guard, keys))
      // The operator's accounts (`rock-legends users` while this server owns the data file): service keys only.
      .use(operatorAccountRoutes(new OperatorAccounts(store, now, passwords), guard, keys))
      // A backup of the running store, streamed (`rock-legends backup` while this server owns the data file).
      .use(backupRoutes(store, storeKind, guard)),
  )
}

/** The app type, for typed clients. */
export type App = ReturnType<typeof createApp>
