import type { Server, TLSOptions } from 'bun'
import type { Namespace } from '../npm/rock-legends/lib/index.js'
import { type AppOptions, createApp } from './app.ts'
import { OPERATOR_PREFIX } from './auth/secrets.ts'
import { captureStartState } from './fixtures/reset.ts'
import { MAX_BODY_BYTES } from './http/body.ts'
import { createLogger, flushLog, type Logger } from './log.ts'
import { isLoopback, type MetricsAddress, parseMetricsAddress, serveMetrics } from './metrics/serve-metrics.ts'
import {
  askToLetGo,
  CLOSING_MS,
  closingConnections,
  HANDOVER_SIGNAL,
  type Handler,
  type HeldListener,
  holderToAsk,
  holdRequests,
  type ListenOptions,
  migratesQueuedConnections,
  portTaken,
} from './ops/takeover.ts'
import { conflictIn, EMBEDDED_DEFAULTS, SERVER_OPTIONS, type ServerOptions } from './options.ts'
import { DataFileError } from './store/json-file/errors.ts'
import type { TornLine } from './store/json-file/journal.ts'
import { addressRecorder, IN_MEMORY, isDatabaseUrl, openStore } from './store/open-store.ts'
import type { Store } from './store/store.ts'
import type { AcmeOutcome } from './tls/acme.ts'
import { CertificateFiles } from './tls/certificate-files.ts'
import { type CertificateSource, daysLeft, EXPIRY_WARNING_DAYS, expiryOf, TLS_SETTINGS } from './tls/certificates.ts'
import { type Listen, Listeners } from './tls/listeners.ts'

export type { ServerOptions } from './options.ts'

/** A running server. */
export interface RunningServer {
  /** The base URL, e.g. `http://127.0.0.1:41234` (`https://` with a certificate). */
  url: string
  port: number
  /** A service key of this server: the first of `apiKeys`, or the one made for it. Send it as `X-API-Key`. */
  apiKey: string
  /** Where the metrics are scraped, e.g. `http://127.0.0.1:9464/metrics`, with `metrics` set; else undefined. */
  metricsUrl?: string
  /** The requests it is answering now, event streams included (the executable logs it as it drains). */
  readonly inFlight: number
  /** Stops accepting connections, lets requests in flight finish, flushes the store and releases the data file. */
  stop(): Promise<void>
  /**
   * Stops as {@link stop} does, after answering for a moment with `Connection: close`, so that clients on keep-alive
   * connections move to the server taking over the port (`--takeover`, which sends SIGUSR2 for it).
   */
  handOver(): Promise<void>
  /**
   * With `tlsCert` and `tlsKey`: reads the files again now, as SIGHUP does, and serves a new pair found there on new
   * connections (the open ones finish on the old pair). Resolves true once a new pair is served, false when the files
   * hold the same pair, one that cannot be served (logged, counted, and the old pair kept), or there is no HTTPS.
   */
  reloadCertificates(): Promise<boolean>
  /**
   * Restores the data as it was at start-up (after seeding), in one durable write, like `POST /__admin/reset`.
   * Rejects unless the server was started with `allowReset: true`.
   */
  reset(): Promise<void>
  /**
   * The namespace called `name` (1 to 64 of `A-Z a-z 0-9 . _ -`), created on first use as the start-up state: a
   * world of its own on this server, for one test or worker of a parallel run. Throws unless `fixtures: true`.
   */
  namespace(name: string): Namespace
}

const urlHost = (host: string) => (host.includes(':') ? `[${host}]` : host)

/** Where a process on this machine reaches a server listening on `host`: loopback for every interface. */
const reachableHost = (host: string) => (host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '[::1]' : urlHost(host))

/**
 * A service key of this process alone, for `rock-legends users` while the server owns its data file: it is left
 * beside the file with the server's address (`addressRecorder`; mode 0600), never logged, and dies with the process.
 * 256 bits from the CSPRNG.
 */
const operatorKey = () =>
  `${OPERATOR_PREFIX}${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64url')}`

/** A service key made for a server started without one, as the npm package's `startServer` makes it. */
const fixtureKey = () => `rl_fixture_${Buffer.from(crypto.getRandomValues(new Uint8Array(18))).toString('hex')}`

/**
 * The npm package's namespace handles (over HTTP, as from another process): one implementation for both packages, plain
 * JavaScript typed by the npm package's index.d.ts, loaded only once a namespace is asked for.
 */
const npmNamespaces = (): Pick<typeof import('../npm/rock-legends/lib/index.js'), 'connect'> =>
  require('../npm/rock-legends/lib/namespace.js')

/**
 * The front of `--fixtures` over `store`, its namespaces within `bounds`, each client read as the app reads it (behind
 * the proxies of `trustProxy`); its modules loaded now.
 */
async function fixtureFront(store: Store, bounds: { max: number; memoryBytes: number }, trustProxy: readonly string[]) {
  const [{ FixtureFront }, { NAMESPACE_LIMITS }, { trustedClients }] = await Promise.all([
    import('./fixtures/front.ts'),
    import('./fixtures/namespaces.ts'),
    import('./http/proxies.ts'),
  ])
  const clients = trustedClients(trustProxy)
  return new FixtureFront(store, await store.resetPoint(), { ...NAMESPACE_LIMITS, ...bounds }, (request, server) =>
    clients.key(server as Server<undefined> | null | undefined, request),
  )
}

/** What {@link startServer} takes: the server's options, and where its certificate comes from if not from files. */
export type StartOptions = ServerOptions &
  Pick<AppOptions, 'events'> & {
    /** Serve HTTPS with the certificates of this source (in place of `tlsCert` and `tlsKey`); closed on stop. */
    certificates?: CertificateSource
    /**
     * With `httpsDomains`: roots (PEM) to trust for the CA's own HTTPS in place of the system's, for a test CA such as
     * Pebble. The executable takes `NODE_EXTRA_CA_CERTS` for the same.
     */
    acmeCaRoots?: string
  }

/** The TLS options of a listener serving `source`'s current pair. */
const tlsOf = (source: CertificateSource): TLSOptions => ({ ...source.current(), ...TLS_SETTINGS })

/**
 * Opens the store, seeds it if asked, and serves the API. The defaults suit a test fixture: a free port on
 * loopback, data in memory, no log.
 *
 * @example
 * const server = await startServer({ seed: true, apiKeys: ['test-key'] })
 * await fetch(`${server.url}/api/v1/artists`)
 * await server.stop()
 */
export async function startServer(options: StartOptions = {}): Promise<RunningServer> {
  // The options that shape answers go to the app as they are (it has their defaults); these are the server's own.
  const defaults = EMBEDDED_DEFAULTS
  const { port = defaults.port, host = defaults.host, data = defaults.data } = options
  const { log: mode = defaults.log, logLevel = defaults.logLevel, delay = defaults.delay } = options
  const conflict = conflictIn(options)
  if (conflict) throw new Error(conflict)
  const log = createLogger(mode, logLevel)
  // Read as the flag is, by the option's own kind: the same check and message, and blank is no listener.
  const metricsText =
    options.metrics === undefined ? undefined : SERVER_OPTIONS.metrics.kind.parse(options.metrics, 'metrics')
  const metricsAt = metricsText === undefined ? undefined : parseMetricsAddress(metricsText)
  // With --takeover over a data file another server holds: listen beside it and hold requests while it lets go.
  const holder = options.takeover ? holderToAsk(data) : undefined
  const acmeDomains = options.certificates ? [] : (options.httpsDomains ?? [])
  const httpPort = options.httpPort ?? defaults.httpPort
  if (holder === undefined)
    for (const taken of [port, ...(acmeDomains.length > 0 ? [httpPort] : [])]
      .filter((p) => p !== 0)
      .map((p) => portTaken(host, p)))
      if (taken) throw taken
  // Read and checked before anything listens or opens: a certificate that cannot be served stops the start. Over
  // ACME, the plain-HTTP port listens first, for the CA's challenges.
  const tlsCounts: TlsCounts = { early: [] }
  const acme =
    acmeDomains.length > 0
      ? // Loaded only with --https: the ACME client is no start's cost without it.
        await (await import('./tls/acme-https.ts')).startAcmeHttps({
          domains: acmeDomains,
          directoryUrl: options.acmeDirectory ?? defaults.acmeDirectory,
          email: options.acmeEmail,
          caRoots: options.acmeCaRoots,
          acmeDir: options.acmeDir,
          data,
          host,
          httpPort,
          log,
          count: (outcome) => (tlsCounts.ordered ? tlsCounts.ordered(outcome) : tlsCounts.early?.push(outcome)),
        })
      : undefined
  const certificates = options.certificates ?? acme?.certificates ?? certificateFiles(options, log, tlsCounts)
  const serve: ListenOptions = {
    port,
    hostname: host,
    // The body limit is enforced with a problem response by the JSON parser; this is the transport's backstop.
    maxRequestBodySize: MAX_BODY_BYTES * 4,
    // SO_REUSEPORT lets a later `--takeover` listen beside this server. It would also let any other server of this
    // user share the port without a word, taking half its connections: so a start asks first whether the port is
    // taken (`portTaken`), and only a takeover listens where another server does. A free port (0) is shared only by
    // this server's own next listener, when it serves a new certificate (src/tls/listeners.ts).
    reusePort: port !== 0 || certificates !== undefined,
    // Elysia turns on Bun's development mode unless NODE_ENV=production: an error escaping the app would then be
    // answered with Bun's error page, source and stack included. Never for this server.
    development: false,
    // A connection silent for this long is closed; a delayed answer must not count as silence (at most 255 s).
    idleTimeout: 30 + Math.ceil(delay / 1000),
    ...(certificates && { tls: tlsOf(certificates) }),
  }
  const held = holder === undefined ? undefined : holdRequests(serve)
  try {
    if (holder !== undefined) {
      if (!migratesQueuedConnections())
        log.warn(
          'net.ipv4.tcp_migrate_req is not 1: connections the old server has queued but not accepted as it closes are reset (docs/operations.md, "Upgrades")',
        )
      await askToLetGo(data, holder)
      log.info(`took over from pid ${holder.pid}`)
    }
    const running = await serveOver(options, log, serve, metricsAt, held, { source: certificates, counts: tlsCounts })
    if (!acme) return running
    acme.servesOn(running.port)
    const stopHttp = () => acme.http.stop(true)
    return {
      ...running,
      get inFlight() {
        return running.inFlight
      },
      stop: () => Promise.all([running.stop(), stopHttp()]).then(() => undefined),
      handOver: () => Promise.all([running.handOver(), stopHttp()]).then(() => undefined),
      // A hangup renews nothing: a certificate over ACME is renewed on its own schedule, and renewals on demand, in
      // a loop of hangups, would spend the CA's rate limits. It says where the schedule stands.
      reloadCertificates: async () => {
        log.info('SIGHUP: certificates over ACME are renewed on their own schedule', {
          expires: acme.certificates.expiresAt().toISOString(),
          renews: acme.certificates.renewsAt().toISOString(),
        })
        return false
      },
    }
  } catch (error) {
    // Requests held while the old server let go are answered, with 503, rather than left waiting.
    held?.fail()
    await held?.server.stop()
    await acme?.http.stop(true)
    certificates?.close()
    throw error
  }
}

/** Where a reload that found a pair it cannot serve is counted, once the metrics are made. */
interface TlsCounts {
  rejected?: () => void
  /** An ACME order's outcome, once the metrics are made; those before wait in `early`. */
  ordered?: (outcome: AcmeOutcome) => void
  early?: AcmeOutcome[]
}

/**
 * The certificate files of `tlsCert` and `tlsKey`, read and checked (a `CertificateError` stops the start); a pair
 * close to its expiry is warned of, as is each new pair found later.
 */
function certificateFiles(options: ServerOptions, log: Logger, counts: TlsCounts): CertificateFiles | undefined {
  if (options.tlsCert === undefined || options.tlsKey === undefined) return undefined
  const warnOfExpiry = (notAfter: Date, file: string) => {
    const days = daysLeft(notAfter)
    if (days < EXPIRY_WARNING_DAYS)
      log.warn(`the certificate in ${file} expires in ${days} days (${notAfter.toISOString()}): renew it`)
  }
  const files = new CertificateFiles(options.tlsCert, options.tlsKey, {
    loaded: ({ notAfter, names }) => {
      log.info(`serving the new certificate of ${options.tlsCert} on new connections`, {
        names,
        notAfter: notAfter.toISOString(),
      })
      warnOfExpiry(notAfter, options.tlsCert as string)
    },
    rejected: (error) => {
      log.error(`${error.message}; the certificate loaded before is served on`)
      counts.rejected?.()
    },
    unwatched: (dir, error) =>
      log.warn(`cannot watch ${dir} for new certificates (${error.message}): send SIGHUP after renewing them`),
  })
  warnOfExpiry(files.facts.notAfter, options.tlsCert)
  return files
}

/** The rest of {@link startServer}: opens the store and serves it, on `held` when a takeover already listens. */
async function serveOver(
  options: StartOptions,
  log: Logger,
  serve: ListenOptions,
  metricsAt: MetricsAddress | undefined,
  held: HeldListener | undefined,
  tls: { source: CertificateSource | undefined; counts: TlsCounts },
): Promise<RunningServer> {
  const { source: certificates, counts: tlsCounts } = tls
  const defaults = EMBEDDED_DEFAULTS
  const { host = defaults.host, data = defaults.data, seed = defaults.seed, apiKeys = defaults.apiKeys } = options
  // As with the npm package, a server has a service key for its handle (`apiKey`, `namespace()`): made if none given.
  const serviceKeys = apiKeys.length > 0 ? apiKeys : [fixtureKey()]
  const { fixtures = defaults.fixtures, compactAfterBytes, dbPool, dbWaitMs, dataDirect } = options
  const allowReset = fixtures || options.allowReset === true
  if (data !== IN_MEMORY && !isDatabaseUrl(data) && options.allowNewData !== true) {
    // A lost data file must not come back empty, seeded or not, while the backups of the real one rotate away.
    const { lostDataFileProblem } = await import('./ops/lost-data-file.ts')
    // The backup directory shows the file existed only when backups are scheduled: otherwise it is no one's.
    const backupDir = options.backupEveryMs === undefined ? undefined : (options.backupDir ?? defaults.backupDir)
    const lost = lostDataFileProblem(data, backupDir)
    if (lost) throw new DataFileError(lost)
  }
  const tornLine = ({ journal, at, bytes }: TornLine) =>
    log.warn('cut off a torn journal line: a write the process died making, never acknowledged', {
      journal,
      at,
      bytes,
    })
  const store = await openStore(data, {
    compactAfterBytes,
    pool: dbPool,
    waitMs: dbWaitMs,
    direct: dataDirect,
    tornLine,
  })
  // With or without --metrics, the log says when the store stops serving (a database away, a disk that refuses the
  // journal) and when it is back: one line each, however many requests are refused meanwhile.
  store.availability?.watch({
    away: (error) =>
      log.error(
        `the store is away: ${(error as Error).message}; requests that need it are refused with 503 until it is back`,
      ),
    back: (ms) => log.info(`the store is back after ${(ms / 1000).toFixed(1)} s away`),
  })
  // Only with --metrics: loaded, made and counted into then, and never otherwise.
  const metrics = metricsAt && new (await import('./metrics/metrics.ts')).Metrics()
  if (metrics) store.instrument?.(metrics.store)
  try {
    if (seed !== false) {
      // The catalogue and its checks are loaded only when asked for.
      const { seedStore } = await import('./seed/seed.ts')
      const outcome = await seedStore(store, seed)
      if (outcome.seeded) log.info('seeded the catalogue', { artists: outcome.artists, albums: outcome.albums })
      else log.info(`not seeding: ${outcome.reason}`)
    }
  } catch (error) {
    await store.close()
    throw error
  }
  // Captured after seeding: the state a reset goes back to. Only when asked, as it holds a copy of all the data.
  const reset = allowReset ? await captureStartState(store) : undefined
  // With --fixtures every request passes through the front, which picks its namespace (src/fixtures/); loaded only
  // then, like the seed and the metrics.
  const fixturesBudget = (options.fixturesMemory ?? defaults.fixturesMemory) * 2 ** 20
  const front = fixtures
    ? await fixtureFront(
        store,
        {
          max: options.fixturesNamespaces ?? defaults.fixturesNamespaces,
          memoryBytes: fixturesBudget,
        },
        options.trustProxy ?? defaults.trustProxy,
      )
    : undefined
  if (metrics && front) {
    const { namespaces } = front
    metrics.fixtures = {
      namespaces: () => namespaces.size,
      bytes: () => namespaces.retainedBytes,
      budgetBytes: fixturesBudget,
    }
  }
  // Over a data file the server owns, `rock-legends users` goes through it (src/cli/users.ts), with this key.
  const recordAddress = addressRecorder(data)
  const ownKey = recordAddress ? operatorKey() : undefined
  const app = createApp({
    ...options,
    store: front?.store ?? store,
    apiKeys: ownKey ? [...serviceKeys, ownKey] : serviceKeys,
    reset: front?.reset ?? reset,
    fixtureFront: front,
    storeKind: isDatabaseUrl(data) ? 'postgresql' : 'json-file',
    report: log.error,
    accessLog: log.access,
    metrics,
    https: certificates !== undefined,
  })
  let metricsServer: Server<undefined> | undefined
  // What answers each request, as Bun calls it: the app, through the front with --fixtures.
  let serving: Handler = (request) => app.handle(request)
  try {
    const handle = (request: Request) => app.handle(request)
    // Every request goes through the front, which runs the app in the request's namespace: Bun's own routing of
    // Elysia's routes (what `listen` sets up) would bypass it. The app finds its server as after `listen`.
    if (front) serving = (request, bun) => front.fetch(request, handle, bun)
    if (held) {
      // Already listening (a takeover): the held requests and every later one go to the app.
      app.server = held.server
      held.open(serving)
    } else if (front) app.server = Bun.serve({ ...serve, fetch: serving })
    else app.listen(serve)
    if (!app.server) throw new Error('the server did not start')
    if (metrics && metricsAt) metricsServer = serveMetrics(metrics, metricsAt)
  } catch (error) {
    // An embedding process lives on: a port in use must not leave the data file locked.
    await app.server?.stop(true)
    await store.close()
    throw error
  }
  const metricsUrl = metricsServer && `http://${reachableHost(metricsAt?.host ?? '')}:${metricsServer.port}/metrics`
  if (metricsUrl) {
    log.info(`metrics at ${metricsUrl}`)
    if (!isLoopback(metricsAt?.host ?? ''))
      log.warn(
        `metrics are served to anyone who can reach ${metricsAt?.host}:${metricsServer?.port}, without credentials`,
      )
  }
  const scheme = certificates ? 'https' : 'http'
  // With HTTPS, a new certificate gets a listener of its own on the same port (src/tls/listeners.ts).
  const listen: Listen = (tls, port) => {
    const next = { ...serve, port, reusePort: true, tls }
    if (held || front) {
      app.server = Bun.serve({ ...next, fetch: serving })
      return app.server
    }
    // Elysia's `listen` adds a hook on `beforeExit` each time: the first one, which stops the app's server, is enough.
    const hooks = new Set(process.listeners('beforeExit'))
    app.listen(next)
    for (const hook of process.listeners('beforeExit')) if (!hooks.has(hook)) process.off('beforeExit', hook)
    if (!app.server) throw new Error('the server did not start')
    return app.server
  }
  // An old listener keeps its connections until each has been silent for the idle timeout, and a second more.
  const listeners = new Listeners(app.server, listen, closingConnections(serving), (serve.idleTimeout + 1) * 1000)
  const server = app.server
  // The last swap to a new certificate, done or under way (`reloadCertificates` waits for it).
  let swapped: Promise<void> = Promise.resolve()
  if (certificates) {
    metrics?.tls.served(expiryOf(certificates.current()))
    let warnedOfResets = false
    certificates.onChange(() => {
      if (stopping) return
      if (!warnedOfResets && !migratesQueuedConnections()) {
        warnedOfResets = true
        log.warn(
          'net.ipv4.tcp_migrate_req is not 1: a connection that arrives just as the new certificate is put in place may be reset (docs/operations.md, "Renewals without a restart")',
        )
      }
      const pair = certificates.current()
      swapped = listeners.swap(tlsOf(certificates)).then(
        () => {
          metrics?.tls.served(expiryOf(pair))
          metrics?.tls.reloaded()
        },
        (error) => log.error('could not listen with the new certificate; the old one is served', error),
      )
    })
    tlsCounts.rejected = () => metrics?.tls.rejected()
    if (options.httpsDomains?.length && !options.certificates) {
      tlsCounts.ordered = (outcome) => metrics?.tls.ordered(outcome)
      metrics?.tls.ordered()
      for (const outcome of tlsCounts.early?.splice(0) ?? []) tlsCounts.ordered(outcome)
    }
  }
  // Scheduled backups (--backup-every): of the server's own store, while it serves (src/ops/scheduled-backups.ts).
  let backups: { stop(): Promise<void> } | undefined
  if (options.backupEveryMs !== undefined) {
    try {
      const { scheduleBackups } = await import('./ops/scheduled-backups.ts')
      const schedule = {
        everyMs: options.backupEveryMs,
        dir: options.backupDir ?? defaults.backupDir,
        keep: options.backupKeep ?? defaults.backupKeep,
      }
      metrics?.backups.scheduled(schedule.everyMs)
      backups = scheduleBackups(store, isDatabaseUrl(data) ? 'postgresql' : 'json-file', schedule, {
        written: (file, ms) => {
          metrics?.backups.taken()
          log.info(`backup written to ${file}`, { ms: Math.round(ms) })
        },
        failed: (error) => {
          metrics?.backups.failed()
          log.error('a scheduled backup failed; it is tried again within a minute', error)
        },
        removed: (file) => log.info(`backup removed: ${file} (no generation keeps it)`),
        foreign: (file, why) => log.warn(`left alone ${file}, which this server did not write: ${why}`),
        tightened: (dir, mode) =>
          log.info(`made the backup directory ${dir} 0700 (it was ${mode.toString(8)}): backups hold password hashes`),
      })
    } catch (error) {
      await Promise.all([listeners.kill(), metricsServer?.stop(true)])
      certificates?.close()
      await store.close()
      throw error
    }
  }
  if (recordAddress && ownKey) {
    try {
      await recordAddress({
        url: `${scheme}://${reachableHost(host)}:${server.port}`,
        key: ownKey,
        handover: HANDOVER_SIGNAL,
      })
    } catch (error) {
      // Serving goes on; `rock-legends users` then needs --url and --api-key, and says so.
      log.error(`could not record the server's address beside ${data}`, error)
    }
  }
  let stopping: Promise<void> | undefined
  const stop = () => {
    stopping ??= (async () => {
      // Event streams never finish by themselves: ended first, so that stopping waits only for other requests.
      ;(front?.store ?? store).changes.end()
      certificates?.close()
      await Promise.all([listeners.stop(), metricsServer?.stop(true)])
      // Access log lines are made just after each answer and written in batches: let those of the last answers
      // be made, then write every waiting line.
      await new Promise((resolve) => setImmediate(resolve))
      await backups?.stop()
      flushLog()
      await store.close()
    })()
    return stopping
  }
  const url = `${scheme}://${urlHost(host)}:${server.port}`
  const apiKey = serviceKeys[0] as string
  return {
    url,
    port: server.port as number,
    apiKey,
    metricsUrl,
    get inFlight() {
      return listeners.pendingRequests
    },
    stop,
    reloadCertificates: async () => {
      const changed = certificates instanceof CertificateFiles && certificates.reread()
      await swapped
      return changed
    },
    handOver: async () => {
      if (stopping === undefined) {
        // Elysia's routes for Bun are left aside with the rest: every answer now goes through the closing handler.
        listeners.reload(closingConnections(serving))
        await Bun.sleep(CLOSING_MS)
      }
      return stop()
    },
    reset: () => reset?.() ?? Promise.reject(new Error('start the server with allowReset: true to reset it')),
    namespace: (name) => {
      if (!fixtures) throw new Error('start the server with fixtures: true to use namespaces')
      return npmNamespaces().connect({ url, apiKey }).namespace(name)
    },
  }
}
