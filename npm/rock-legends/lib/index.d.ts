// Types of rock-legends for Node and Bun. Self-contained: they need neither @types/node nor Bun's types, nor the DOM.

/** Options of {@link startServer}, named like the command-line flags. The defaults suit a test fixture. */
export interface ServerOptions {
  // The options of the executable: generated from src/options.ts by `bun scripts/npm-options.ts`.
  /** Port to listen on; 0 picks a free one. 3000 on the command line, 0 for `startServer`. */
  port?: number
  /** Address to listen on; `127.0.0.1` by default. */
  host?: string
  /**
   * A JSON data file, `:memory:` for none, or a `postgres://` URL of a database that replicas share.
   * `./data/db.json` on the command line, `:memory:` for `startServer`.
   */
  data?: string
  /** Connections in the database pool, per replica, for a database URL; 10. */
  dbPool?: number
  /** How long to wait at start for a database that cannot be reached, in milliseconds; 10 seconds. */
  dbWaitMs?: number
  /**
   * A direct URL of the same database, when `--data` is a connection pooler's (PgBouncer, Supavisor, RDS Proxy): the
   * change feed LISTENs there, which a pooler in transaction mode cannot carry, and named prepared statements are off
   * over `--data` (unless its `prepare` parameter says otherwise). None by default.
   */
  dataDirect?: string
  /**
   * `true` for the built-in catalogue, a path for a catalogue file of the same format, `false` (the default) for
   * none; only a store never written to is seeded.
   */
  seed?: boolean | string
  /**
   * Start with a new, empty data file where one existed and was lost (its lock file remains, or the backup directory
   * holds backups): without it such a start is refused, saying how to restore (src/ops/lost-data-file.ts). A flag
   * for one start, with no variable: left in a unit or an environment file, it would let the next loss through too.
   */
  allowNewData?: boolean
  /**
   * Replace the server running over the same data file without a failed request: listen beside it on the same port,
   * hold what arrives, ask it to hand over (SIGUSR2), and serve once it has let go of the file (docs/operations.md,
   * "Upgrades"). Without a server there, an ordinary start.
   */
  takeover?: boolean
  /**
   * A PEM file of the certificate chain to serve HTTPS with (the leaf first, then its intermediates), with `tlsKey`;
   * read again on SIGHUP and when it changes, without dropping connections. Plain HTTP without it.
   */
  tlsCert?: string
  /** The PEM file of the private key of `tlsCert`, which no other user may read (`chmod 600`). */
  tlsKey?: string
  /**
   * With HTTPS: how long browsers are told to reach this host over HTTPS alone (`Strict-Transport-Security`'s
   * `max-age`), 1 year by default; `off` sends no such header.
   */
  hstsMs?: number
  /**
   * Serve HTTPS for these names with certificates obtained and renewed over ACME (RFC 8555, HTTP-01 on `httpPort`),
   * from Let's Encrypt unless `acmeDirectory` names another CA. The first name is the certificate's common name. One
   * server per name: replicas behind a load balancer take `tlsCert` files instead (docs/operations.md).
   */
  httpsDomains?: readonly string[]
  /**
   * With `httpsDomains`: the ACME directory of the CA, Let's Encrypt's production one by default; its staging one,
   * `https://acme-staging-v02.api.letsencrypt.org/directory`, issues untrusted certificates under generous limits.
   */
  acmeDirectory?: string
  /** With `httpsDomains`: the address the CA writes to about the certificates (expiry, incidents); none by default. */
  acmeEmail?: string
  /**
   * With `httpsDomains`: the directory of the ACME account key and certificates (0700, files 0600), `acme` beside
   * the data file by default; needed over `:memory:` or a database, which have no directory of their own.
   */
  acmeDir?: string
  /**
   * With `httpsDomains`: the plain-HTTP port, which answers the CA's HTTP-01 challenges and redirects everything else
   * to HTTPS (308); 80, where the CA asks.
   */
  httpPort?: number
  /**
   * Service keys that may write, sent as `X-API-Key`; none (the npm package's `startServer` then makes one of its
   * own, its `RunningServer.apiKey`).
   */
  apiKeys?: readonly string[]
  /**
   * The proxies whose forwarding headers name the client: addresses, CIDR ranges, `loopback`, `private`; none by
   * default. From these peers the client is the right-most address of `X-Forwarded-For` that is not itself listed,
   * and the scheme and host are what the nearest proxy says in `X-Forwarded-Proto` and `X-Forwarded-Host`; from any
   * other peer those headers are ignored. Every per-address rule (the brakes on logins, sign-ups and wrong
   * credentials, event streams) counts that client, and `/openapi.json` names that scheme and host.
   */
  trustProxy?: readonly string[]
  /** Lifetime of bearer tokens from login, in milliseconds; 24 hours. */
  tokenTtlMs?: number
  /** How to log. `pretty` on the command line, `off` for `startServer`. */
  log?: 'pretty' | 'json' | 'off'
  /**
   * The least important lines the log writes: `debug` adds the health checks' access lines, `info` (the default)
   * every other request and what the server does, `warn` what needs looking at and the 5xx answers, `error` failures
   * and the 5xx answers alone.
   */
  logLevel?: 'debug' | 'info' | 'warn' | 'error'
  /** Origins allowed by CORS, or `*`; none, and then no CORS headers at all. */
  cors?: readonly string[]
  /** Milliseconds to wait before every API response, 0 to 120,000, for UI and timeout tests; 0. */
  delay?: number
  /** Refuse every write (POST, PUT, PATCH, DELETE) with 403. */
  readOnly?: boolean
  /** Serve `POST /__admin/reset` (service key), which restores the start-up state, and allow `RunningServer.reset`. */
  allowReset?: boolean
  /**
   * Serve the fixture controls for test suites: a catalogue per `Rock-Legends-Namespace` header, and under `/__admin`
   * (service key) the namespaces, the request journal, faults and state in and out
   * (docs/testing-with-rock-legends.md). Implies `allowReset`. Over a data file or in memory only.
   */
  fixtures?: boolean
  /**
   * With `fixtures`: how many named namespaces the server holds at once; past that, a new one takes the place of one
   * unused for 10 minutes, or is refused with 429. 500.
   */
  fixturesNamespaces?: number
  /**
   * With `fixtures`: what all named namespaces may hold together, in MiB; past it, the least recently used that no
   * request is using are dropped, and writes refused only when none can be. 256.
   */
  fixturesMemory?: number
  /** Serve the web pages at `/` (the default); `false` makes `/` a JSON index. */
  ui?: boolean
  /** Whether anyone may create an account (the default); `false` answers sign-up with 403, accounts work on. */
  signup?: boolean
  /**
   * Serve Prometheus metrics at `GET /metrics` on a listener of their own, at `[HOST:]PORT` such as `9464` or
   * `127.0.0.1:9464` (loopback unless a host is named; port 0 picks a free one), without credentials. Off by
   * default, and then nothing is counted.
   */
  metrics?: string
  /**
   * Take a backup of the store every this many milliseconds (at least 1,000) while serving, into `backupDir`, keeping
   * the newest `backupKeep` and daily and weekly generations (src/ops/backup-generations.ts); off by default. A backup
   * that fails is logged and tried again a minute later.
   */
  backupEveryMs?: number
  /** Where scheduled backups go; `./backups` by default. */
  backupDir?: string
  /** How many of the newest scheduled backups to keep, besides the newest of each of 7 days and 5 weeks; 7. */
  backupKeep?: number
  /** Journal size in bytes that triggers a compaction of the data file, a tuning knob; the store's default if unset. */
  compactAfterBytes?: number
  // The options of this package alone:
  /** Another executable to run instead of this platform's (also `ROCK_LEGENDS_BINARY`). */
  binary?: string
  /** How long to wait for the server to be ready before killing it and rejecting; 30,000 ms by default. */
  readyTimeoutMs?: number
  /** How long {@link RunningServer.stop} waits after SIGTERM before SIGKILL; 5,000 ms by default. */
  stopTimeoutMs?: number
}

/** A server started by {@link startServer}: a child process of this one. */
export interface RunningServer {
  /** The base URL, e.g. `http://127.0.0.1:41234`. */
  url: string
  port: number
  /** A service key of this server: the first of `apiKeys`, or the one made for it. Send it as `X-API-Key`. */
  apiKey: string
  /** The server's process id. */
  pid: number
  /**
   * Stops the server: SIGTERM (requests in flight finish, data is flushed), then SIGKILL if it has not exited within
   * `stopTimeoutMs`. Resolves once the process is gone; calling it again returns the same promise.
   */
  stop(): Promise<void>
  /**
   * Restores the data as it was at start-up (after seeding), in one write (the default namespace's, with `fixtures`).
   * Rejects unless `allowReset: true` or `fixtures: true`.
   */
  reset(): Promise<void>
  /**
   * The namespace called `name` (1 to 64 of `A-Z a-z 0-9 . _ -`), created on first use as the start-up state: a
   * world of its own on this server, for one test or worker of a parallel run. Throws unless `fixtures: true`.
   */
  namespace(name: string): Namespace
}

/** A request as the journal of a namespace keeps it (`GET /__admin/requests`). */
export interface JournalEntry {
  id: number
  /** When it arrived, ISO 8601. */
  time: string
  method: string
  path: string
  /** The query parameters; a name given more than once keeps its values in order. */
  query: Record<string, string | string[]>
  /** The status answered; null when a fault closed the connection without an answer. */
  status: number | null
  duration_ms: number
  /** The request headers, names in lower case; credentials and cookies are `[redacted]`. */
  headers: Record<string, string>
  /** Parsed JSON when it was JSON, else text (cut at 8 KiB, with `body_truncated`); absent without a body. */
  body?: unknown
  body_truncated?: true
  /** The fault that answered or delayed it. */
  fault?: number
}

/** What a fault does, and to which requests of its namespace (`POST /__admin/faults`). */
export interface FaultSpec {
  /** Only requests with this method; any method when left out. */
  method?: string
  /** An exact path, or a prefix ending in `*`; never a query (match query parameters with `query`). */
  path: string
  /** Only requests whose query holds each of these parameters with exactly this value (at most 20). */
  query?: Record<string, string>
  /** Only requests that carry each of these headers (names in any case) with exactly this value (at most 20). */
  headers?: Record<string, string>
  /**
   * Only requests whose JSON body holds each of these fields with an equal value: objects as subsets at every depth,
   * arrays element by element. At most 8,192 characters as JSON and 16 levels deep; bodies past 8 KiB never match.
   */
  body?: Record<string, unknown>
  /** Answer with this status (400–599) and a problem body, before the route runs: nothing is written. */
  status?: number
  /** Wait this many milliseconds first (up to 120,000); alone, the request then goes on as usual. */
  delay_ms?: number
  /** Close the connection without an answer. */
  drop?: boolean
  /** For this many matching requests; 0 until removed. 1 by default. */
  times?: number
  /** Let this many matching requests through first. */
  after?: number
  /** Act on a match with this probability (above 0, up to 1). */
  probability?: number
}

/** An armed fault, with how often it matched and acted. */
export interface Fault extends Required<Omit<FaultSpec, 'method' | 'status' | 'query' | 'headers' | 'body'>> {
  id: number
  method: string | null
  query: Record<string, string> | null
  headers: Record<string, string> | null
  body: Record<string, unknown> | null
  status: number | null
  matched: number
  fired: number
  /** False once it has acted `times` times. */
  active: boolean
  created_at: string
}

/** A catalogue in the format of a catalogue file (`--seed FILE`): artists with their albums, no ids. */
export interface CatalogueState {
  artists: (Omit<ArtistInput, 'id'> & { albums: Omit<AlbumInput, 'id'>[] })[]
}

/** One namespace of a server started with `fixtures: true` ({@link RunningServer.namespace}). */
export interface Namespace {
  readonly name: string
  /** The header that puts a request in this namespace: for `createClient(url, { headers })` or Playwright's `extraHTTPHeaders`. */
  readonly headers: { 'Rock-Legends-Namespace': string }
  /** The global `fetch` of a path of the server (or a full URL), in this namespace. */
  fetch(
    path: string,
    init?: { method?: string; headers?: Record<string, string>; body?: string },
  ): Promise<{
    ok: boolean
    status: number
    headers: { get(name: string): string | null }
    json(): Promise<unknown>
    text(): Promise<string>
  }>
  /** Puts the namespace back to the start-up state. */
  reset(): Promise<void>
  /** What the namespace received, oldest first (the latest 500 at most), filtered. */
  requests(filter?: { method?: string; path?: string; status?: number }): Promise<JournalEntry[]>
  /** Empties the journal. */
  clearRequests(): Promise<void>
  /** Arms a fault on the namespace's requests. */
  fault(spec: FaultSpec): Promise<Fault>
  /** The namespace's faults, with how often each fired. */
  faults(): Promise<Fault[]>
  /** Removes every fault. */
  clearFaults(): Promise<void>
  /** The namespace's catalogue, as a catalogue file. */
  state(): Promise<CatalogueState>
  /** Replaces the namespace's catalogue (ids from 1, in order); users, tokens and keys stay. */
  load(state: CatalogueState): Promise<{ artists: number; albums: number }>
  /** Drops the namespace (its data, journal and faults); a later use starts it over. */
  drop(): Promise<void>
}

/**
 * Starts this platform's executable as a child process on a free port and resolves once it serves; a start that
 * fails rejects with the server's own error text. Servers not stopped are killed when this process exits or is
 * interrupted (SIGINT, SIGTERM, SIGHUP), so no process is left behind.
 *
 * @example
 * const server = await startServer({ seed: true, allowReset: true })
 * const api = createClient(server.url, { apiKey: server.apiKey })
 * await api.artists.create({ name: 'Moris' })
 * await server.reset()
 * await server.stop()
 */
export declare function startServer(options?: ServerOptions): Promise<RunningServer>

/** The path of this platform's executable (from its `@rock-legends/<platform>` package, or `ROCK_LEGENDS_BINARY`). */
export declare function binaryPath(): string

/** A server started elsewhere with `--fixtures`, as {@link connect} gives it. */
export interface ConnectedServer {
  /** The base URL, without a trailing slash. */
  readonly url: string
  readonly apiKey: string
  /** As {@link RunningServer.namespace}. */
  namespace(name: string): Namespace
}

/**
 * The Web `Request`, `Response` and `fetch` options of the project's own types (the DOM's, or Node's from
 * `@types/node`), where it has them; the least of them this package uses where it has neither: the package needs no
 * types of any runtime.
 */
export type WebRequest = typeof globalThis extends { Request: { prototype: infer R } }
  ? R
  : { readonly url: string; readonly method: string }
export type WebResponse = typeof globalThis extends { Response: { prototype: infer R } }
  ? R
  : {
      readonly ok: boolean
      readonly status: number
      readonly headers: { get(name: string): string | null }
      json(): Promise<unknown>
      text(): Promise<string>
    }
export type WebRequestInit = typeof globalThis extends { fetch: (input: never, init?: infer I) => unknown }
  ? I
  : { method?: string; headers?: Record<string, string>; body?: string }

/** What {@link createService} takes; each option has the executable's default. */
export interface ServiceOptions {
  /** Fill the store with the curated catalogue (`true`), or with a catalogue in the format of `--seed FILE`. */
  seed?: boolean | CatalogueState
  /** Service keys (`X-API-Key`); one is made for the service when none is given ({@link Service.apiKey}). */
  apiKeys?: string[]
  /** Namespaces, request journal, faults and state, as `fixtures: true` gives a server. */
  fixtures?: boolean
  /**
   * How passwords are hashed: `argon2id` (the default, as the executable: tens of milliseconds a hash), or
   * `fast-for-tests`: argon2id at its lowest cost (8 KiB, one pass), still a real hash and a real check, in
   * microseconds, for suites that sign up hundreds of users. Never for passwords that matter.
   */
  passwords?: 'argon2id' | 'fast-for-tests'
  /** Whether anyone may sign up; true by default. */
  signup?: boolean
  /** Refuse every write with 503. */
  readOnly?: boolean
  /** How long a bearer token lasts, in milliseconds; 24 hours by default. */
  tokenTtlMs?: number
  /** The clock; the real one by default. */
  now?: () => Date
}

/**
 * The whole service in-process, from {@link createService}: the executable's routes, rules, problems, entity tags,
 * pagination, accounts and catalogue, answering Web `Request`s with Web `Response`s, with no port and no process.
 */
export interface Service {
  /** The origin the service's own handles use (`http://rock-legends.test`); `fetch` answers requests for any origin. */
  readonly url: string
  /** A service key of this service: the first of `apiKeys`, or the one made for it. Send it as `X-API-Key`. */
  readonly apiKey: string
  /**
   * Answers a request as the executable would: an MSW handler's `request`, a `Request` built from Playwright's
   * `route.request()`, or `fetch`'s arguments (a path is taken against {@link Service.url}).
   */
  fetch(input: WebRequest | { href: string } | string, init?: WebRequestInit): Promise<WebResponse>
  /** Puts the data back as it was when the service was made (the default namespace's, with `fixtures`). */
  reset(): Promise<void>
  /** The namespace called `name`, as {@link RunningServer.namespace}; throws unless `fixtures: true`. */
  namespace(name: string): Namespace
  /** The catalogue (of the default namespace), as a catalogue file. */
  state(): Promise<CatalogueState>
  /** Replaces the catalogue (of the default namespace); users, tokens and keys stay. */
  load(state: CatalogueState): Promise<{ artists: number; albums: number }>
  /** Ends the service: open event streams end, and later calls are refused. */
  close(): Promise<void>
}

/**
 * Makes the service in-process over a memory store of its own: no port, no child process, no Bun. One per test file,
 * with `reset()` between tests, is the usual shape (docs/testing-with-rock-legends.md, "In-process on Node").
 *
 * @example
 * const service = await createService({ seed: true, passwords: 'fast-for-tests' })
 * const server = setupServer(http.all('https://api.example.test/*', ({ request }) => service.fetch(request)))
 */
export declare function createService(options?: ServiceOptions): Promise<Service>

/**
 * A server started elsewhere with `--fixtures` or `fixtures: true` (a Vitest or Jest `globalSetup`, a Playwright
 * `webServer`), from a test worker that knows only its URL and one of its service keys: its namespaces.
 *
 * @example
 * const server = connect({ url: process.env.ROCK_LEGENDS_URL, apiKey: process.env.ROCK_LEGENDS_API_KEY })
 * const ns = server.namespace(`worker-${process.env.JEST_WORKER_ID}`)
 * const api = createClient(server.url, { apiKey: server.apiKey, headers: ns.headers })
 */
export declare function connect(server: {
  url: string
  apiKey: string
  /** What the handles' requests go through; the global `fetch` by default. */
  fetch?: (input: string, init?: WebRequestInit) => Promise<WebResponse>
}): ConnectedServer

/** An artist. Optional fields that are unset are left out of answers. */
export interface Artist {
  id: number
  name: string
  description?: string
  image?: string
  band?: string
}

/** An artist to create, or to replace one with (fields left out become unset). `null` means the same as leaving out. */
export interface ArtistInput {
  name: string
  description?: string | null
  image?: string | null
  band?: string | null
  /** Ignored on create; on update it must be absent or equal to the path id. */
  id?: number
}

/**
 * The kind of release: `studio` (an album of new studio recordings), `live`, `ep` (shorter than an album),
 * `compilation`, `soundtrack`, or `re-recordings` (a studio album of new recordings of songs already released).
 */
export type AlbumKind = 'studio' | 'live' | 'ep' | 'compilation' | 'soundtrack' | 're-recordings'

/** An album of an artist. */
export interface Album {
  id: number
  artistId: number
  name: string
  /** Year of first release. */
  year?: number
  image?: string
  /** The kind of release; the service serves one for every album. */
  kind?: AlbumKind
}

/**
 * Changes to an artist, as a JSON merge patch (RFC 7396): a field sent replaces its value, `null` removes it, a field
 * left out stays. `name` cannot be removed.
 */
export interface ArtistPatch {
  name?: string
  description?: string | null
  image?: string | null
  band?: string | null
  /** Must be absent or equal to the path id. */
  id?: number
}

/** An album to add to an artist, or to replace one with (fields left out become unset). */
export interface AlbumInput {
  name: string
  year?: number | null
  image?: string | null
  /** `studio` when left out or null. */
  kind?: AlbumKind | null
  /** Ignored on create; on update it must be absent or equal to the path id. */
  id?: number
}

/** Changes to an album, as a JSON merge patch (RFC 7396), as {@link ArtistPatch} for an artist. */
export interface AlbumPatch {
  name?: string
  year?: number | null
  image?: string | null
  /** `null` makes it `studio` again. */
  kind?: AlbumKind | null
  /** Must be absent or equal to the path id. */
  id?: number
}

/**
 * One change of an artist or of one of its albums: who made it (`by`, e.g. `service` or `user:3/token:12`, never a
 * secret), when (`at`, ISO 8601), and the record as it became (for `album-deleted`, the album as it was).
 */
export interface ArtistChange {
  id: number
  at: string
  by: string
  kind: 'artist-created' | 'artist-updated' | 'album-created' | 'album-updated' | 'album-deleted'
  artist?: Artist
  album?: Album
}

/** A page of a list. */
export interface Page<T> {
  data: T[]
  meta: {
    /** The limit applied (at most 100). */
    limit: number
    offset: number
    total: number
    /** The path and query of the next page, or `null` on the last one. */
    next: string | null
  }
}

/** Paging of a list, and any other query parameter the server takes. */
export interface ListQuery {
  /** 1–100, 10 by default; larger values are lowered to 100. */
  limit?: number
  offset?: number
  [parameter: string]: string | number | undefined
}

/** A user; never the password. */
export interface User {
  id: number
  name: string
  email: string
}

/** A signed-in session. */
export interface Session {
  user: User
  /** Send as `Authorization: Bearer <token>`, or pass as `token` to {@link createClient}. */
  token: string
  token_type: 'Bearer'
  expires_at: string
}

/** A personal API key, without the key. */
export interface ApiKey {
  id: number
  name: string
  prefix: string
  created_at: string
  /** Left out until the key is first used. */
  last_used_at?: string
}

/** A personal API key just created: the only time `key` is shown. */
export interface NewApiKey extends ApiKey {
  key: string
}

/** RFC 9457 problem details, as the server sends with every error. */
export interface Problem {
  type: string
  title: string
  status: number
  detail: string
  /** Validation problems: one per invalid body field (`pointer`) or parameter (`parameter`). */
  errors?: { pointer?: string; parameter?: string; detail: string }[]
}

/** An error answer: thrown by every {@link Client} method for a status of 400 or more. */
export declare class ProblemError extends Error {
  readonly status: number
  readonly problem: Problem
}

/** The least of `fetch` the client needs; the global `fetch` of Node 18+ and Bun fits. */
export type FetchLike = (
  url: string,
  init: { method: string; headers: Record<string, string>; body?: string },
) => Promise<{ ok: boolean; status: number; statusText: string; text(): Promise<string> }>

/** Options of {@link createClient}. */
export interface ClientOptions {
  /** A service key or personal API key, sent as `X-API-Key`. */
  apiKey?: string
  /** A bearer token from {@link Client.user.login}; wins over `apiKey`. */
  token?: string
  /** More headers for every request. */
  headers?: Record<string, string>
  /** Another `fetch`; the global one by default. */
  fetch?: FetchLike
}

/**
 * Options of a POST. `idempotencyKey` makes it safe to send again: the same key (a new UUID per request, e.g.
 * `crypto.randomUUID()`) with the same body, within 24 hours, gets the first answer again instead of a second record;
 * with another body it rejects with a 422 {@link ProblemError}, and while the first is still running with a 409 (try
 * again after its `Retry-After`). Where the body holds a password or the answer a secret (sign-up, login, a new
 * personal key) the key must be at least 22 characters: a UUID is 36.
 */
export interface PostOptions {
  idempotencyKey?: string
}

/** The options of a create: {@link PostOptions}. */
export type CreateOptions = PostOptions

/** The client of a Rock Legends server: one method per operation of its `/openapi.json`. */
export interface Client {
  /** The server's base URL. */
  readonly url: string
  /** The same client with other credentials (replacing these): `api.with({ token: session.token })`. */
  with(credentials: Pick<ClientOptions, 'apiKey' | 'token'>): Client
  /** `GET /healthz`. */
  health(): Promise<{ status: 'ok' }>
  artists: {
    /** `GET /api/v1/artists`: a page, in id order. */
    list(query?: ListQuery): Promise<Page<Artist>>
    /** `GET /api/v1/artists/{artistId}`. */
    get(artistId: number): Promise<Artist>
    /** `POST /api/v1/artists`: the created artist, with its id; once per `options.idempotencyKey`. */
    create(artist: ArtistInput, options?: CreateOptions): Promise<Artist>
    /** `PUT /api/v1/artists/{artistId}`: replaces the whole artist. */
    update(artistId: number, artist: ArtistInput): Promise<Artist>
    /** `PATCH /api/v1/artists/{artistId}`: changes the fields `changes` names (a JSON merge patch). */
    patch(artistId: number, changes: ArtistPatch): Promise<Artist>
    /** `DELETE /api/v1/artists/{artistId}`: deprecated; always rejects (400 with valid credentials), deletes nothing. */
    delete(artistId: number): Promise<never>
    /** `GET /api/v1/artists/{artistId}/history`: a page of the changes of the artist and its albums, newest first. */
    history(artistId: number, query?: ListQuery): Promise<Page<ArtistChange>>
  }
  albums: {
    /** `GET /api/v1/artists/{artistId}/albums`; `query` may also name `q`, `sort`, `year_from`, `year_to` and `kind`. */
    list(artistId: number, query?: ListQuery): Promise<Page<Album>>
    /** `GET /api/v1/artists/{artistId}/albums/{albumId}`. */
    get(artistId: number, albumId: number): Promise<Album>
    /** `POST /api/v1/artists/{artistId}/albums`; once per `options.idempotencyKey`. */
    create(artistId: number, album: AlbumInput, options?: CreateOptions): Promise<Album>
    /** `PUT /api/v1/artists/{artistId}/albums/{albumId}`: replaces the whole album. */
    update(artistId: number, albumId: number, album: AlbumInput): Promise<Album>
    /** `PATCH /api/v1/artists/{artistId}/albums/{albumId}`: changes the fields `changes` names (a JSON merge patch). */
    patch(artistId: number, albumId: number, changes: AlbumPatch): Promise<Album>
    /** `DELETE /api/v1/artists/{artistId}/albums/{albumId}`: removes the album. */
    delete(artistId: number, albumId: number): Promise<void>
  }
  user: {
    /** `POST /api/v1/user/signup` (password 8–1,024 characters). */
    signup(user: { name: string; email: string; password: string }, options?: PostOptions): Promise<User>
    /** `POST /api/v1/user/login`: a bearer token; once per `options.idempotencyKey` (the same token again). */
    login(credentials: { email: string; password: string }, options?: PostOptions): Promise<Session>
    /** `GET /api/v1/user/me` (needs a user's token or personal key). */
    me(): Promise<User>
    /** `POST /api/v1/user/logout`: revokes the token this client sends. */
    logout(options?: PostOptions): Promise<void>
    apiKeys: {
      /** `POST /api/v1/user/api-keys`; once per `options.idempotencyKey` (the same key again). */
      create(key: { name: string }, options?: PostOptions): Promise<NewApiKey>
      /** `GET /api/v1/user/api-keys`: a page of your keys that are not revoked, oldest first. */
      list(query?: Pick<ListQuery, 'limit' | 'offset'>): Promise<Page<ApiKey>>
      /** `GET /api/v1/user/api-keys/{id}`. */
      get(keyId: number): Promise<ApiKey>
      /** `DELETE /api/v1/user/api-keys/{id}`. */
      revoke(keyId: number): Promise<void>
    }
  }
}

/**
 * A client of the server at `url`. Answers are parsed JSON; an error answer is thrown as a {@link ProblemError}.
 *
 * @example
 * const api = createClient(server.url, { apiKey: server.apiKey })
 * const moris = await api.artists.create({ name: 'Moris', band: 'Los Beatniks' })
 * await api.albums.create(moris.id, { name: '30 minutos de vida', year: 1970 })
 */
export declare function createClient(url: string, options?: ClientOptions): Client
