/**
 * The whole service in-process, with no port and no child process: `service.fetch(request)` answers a Web `Request`
 * with the `Response` the executable would send, from a memory store of its own. This is what the npm package gives
 * Node (bundled once by scripts/node-bundle.ts), for MSW handlers, Playwright's `page.route` and `fetch` wrappers in
 * component tests; on Bun the same module runs from the sources. What differs by runtime is behind `#runtime`.
 */
import { AsyncLocalStorage } from 'node:async_hooks'
import { getRandomValues } from 'node:crypto'
import type { Service, ServiceOptions } from '../npm/rock-legends/lib/index.js'
import { connect } from '../npm/rock-legends/lib/namespace.js'
import { createApp } from './app.ts'
import { argon2id, lowestCostArgon2id } from './auth/password.ts'
import { coverPath } from './covers/cover-path.ts'
import { FixtureFront } from './fixtures/front.ts'
import { NAMESPACE_LIMITS } from './fixtures/namespaces.ts'
import { exportState, importState } from './fixtures/state.ts'
import { parseCatalogue } from './seed/catalogue-file.ts'
import { builtInCatalogue } from './seed/seed.ts'
import { DelegatingStore } from './store/delegating-store.ts'
import { openMemoryStore } from './store/document/memory.ts'
import type { Limiter, Recents, Store } from './store/store.ts'

/**
 * The options and the handle, typed once, by the npm package's declarations (npm/rock-legends/lib/index.d.ts), which
 * document each member: the package ships this module bundled.
 */
export type { Service, ServiceOptions } from '../npm/rock-legends/lib/index.js'

/** How passwords are hashed in-process. */
export type PasswordMode = NonNullable<ServiceOptions['passwords']>

/** The origin of the service's own requests: a name under `.test`, which no DNS resolves (RFC 6761). */
const ORIGIN = 'http://rock-legends.test'

/** Where the path of a URL starts at the earliest for the app to route it (`anyOrigin` in src/app.ts). */
const SHORTEST_ROUTED_PATH_START = 11

const serviceKey = () => `rl_service_${Buffer.from(getRandomValues(new Uint8Array(18))).toString('hex')}`

/** The service key of the services made without `apiKeys`: one for the process, so that they share their app. */
let processKey: string | undefined

/** What one service is to the app it shares: the store its requests see, its fixture front, its reset. */
interface World {
  store: Store
  front: FixtureFront | undefined
  reset: () => Promise<void>
}

/**
 * The store a shared app is built over: each call goes to the store of the service whose request is being answered.
 * Its brakes are that service's own, made on first use.
 */
class WorldStore extends DelegatingStore {
  private readonly brakes = new WeakMap<Store, Map<string, Limiter | Recents>>()

  constructor(private readonly world: () => World) {
    super()
  }

  protected read(): Store {
    return this.world().store
  }

  protected write(): Store {
    return this.world().store
  }

  /** The brake called `name` of the current service's store, made by `make` on its first use there. */
  private brake<T extends Limiter | Recents>(name: string, make: (store: Store) => T): T {
    const store = this.world().store
    let own = this.brakes.get(store)
    if (!own) {
      own = new Map()
      this.brakes.set(store, own)
    }
    let brake = own.get(name)
    if (!brake) {
      brake = make(store)
      own.set(name, brake)
    }
    return brake as T
  }

  readonly limiter: Store['limiter'] = (name, rule, clock) => {
    const of = () => this.brake(name, (store) => store.limiter(name, rule, clock))
    return {
      hit: (key) => of().hit(key),
      record: (key) => of().record(key),
      settle: (attempt) => of().settle(attempt),
      forgive: (attempt) => of().forgive(attempt),
      forgetSettled: (key) => of().forgetSettled(key),
      count: (key) => of().count(key),
      retryAfter: (key) => of().retryAfter(key),
    }
  }

  readonly recents: Store['recents'] = (name, rule, clock) => {
    const of = () => this.brake(name, (store) => store.recents(name, rule, clock))
    return { add: (owner, member) => of().add(owner, member), has: (owner, member) => of().has(owner, member) }
  }

  readonly changes: Store['changes'] = {
    subscribe: (listener, lastId) => this.world().store.changes.subscribe(listener, lastId),
    // Each service ends its own feed when it is closed; the shared app lives on.
    end: () => {},
  }

  resetPoint(): ReturnType<Store['resetPoint']> {
    return this.world().store.resetPoint()
  }

  check(): Promise<void> {
    return this.world().store.check()
  }

  async close(): Promise<void> {}
}

/** The options that shape an app: services made with the same ones share it. */
interface Shape {
  apiKeys: string[]
  passwords: PasswordMode
  fixtures: boolean
  signup?: boolean
  readOnly?: boolean
  tokenTtlMs?: number
}

/**
 * One app answering for every service of one shape, each request in its own service's world (the store, fixture
 * front and reset of the service it was sent to): making the app and compiling its routes on their first requests
 * takes milliseconds, which each new service would otherwise pay again.
 */
class SharedApp {
  private readonly worlds = new AsyncLocalStorage<World>()
  private readonly handle: (request: Request) => Promise<Response>

  constructor(shape: Shape, now?: () => Date) {
    const world = (): World => {
      const current = this.worlds.getStore()
      if (!current) throw new Error('a service was asked for outside any of its requests')
      return current
    }
    const app = createApp({
      store: new WorldStore(world),
      apiKeys: shape.apiKeys,
      passwords: shape.passwords === 'fast-for-tests' ? lowestCostArgon2id : argon2id,
      signup: shape.signup,
      readOnly: shape.readOnly,
      tokenTtlMs: shape.tokenTtlMs,
      now,
      reset: () => world().reset(),
      fixtureFront: shape.fixtures
        ? {
            get namespaces() {
              return (world().front as FixtureFront).namespaces
            },
            current: () => (world().front as FixtureFront).current(),
            // Every service's namespaces have the same bounds.
            bounds: NAMESPACE_LIMITS,
          }
        : undefined,
      anyOrigin: true,
    })
    this.handle = (request) => app.handle(request)
  }

  /** Answers `request` in `world`, through its fixture front when it has one. */
  answer(world: World, request: Request): Promise<Response> {
    return this.worlds.run(world, async () =>
      world.front ? world.front.fetch(request, this.handle) : this.handle(request),
    )
  }
}

/** The apps of the shapes used last, the oldest forgotten past this many. */
const MOST_SHARED_APPS = 8
const sharedApps = new Map<string, SharedApp>()

/** The app of `shape`, made on its first use; one of its own for a service with a clock of its own. */
function appFor(shape: Shape, now?: () => Date): SharedApp {
  if (now) return new SharedApp(shape, now)
  const key = JSON.stringify(shape)
  let app = sharedApps.get(key)
  if (app) sharedApps.delete(key)
  else app = new SharedApp(shape)
  sharedApps.set(key, app)
  for (const old of sharedApps.keys()) {
    if (sharedApps.size <= MOST_SHARED_APPS) break
    sharedApps.delete(old)
  }
  return app
}

/**
 * Makes the service over a memory store of its own, seeded as asked. Services made with the same options share one
 * app, each answering from its own store: a new one costs its store, not a new app.
 *
 * @example
 * const service = await createService({ seed: true, passwords: 'fast-for-tests' })
 * const response = await service.fetch('/api/v1/artists?limit=5')
 */
export async function createService(options: ServiceOptions = {}): Promise<Service> {
  const { seed = false, fixtures = false, passwords = 'argon2id' } = options
  if (passwords !== 'argon2id' && passwords !== 'fast-for-tests')
    throw new Error(`passwords is 'argon2id' or 'fast-for-tests', not ${JSON.stringify(passwords)}`)
  processKey ??= serviceKey()
  const apiKeys = options.apiKeys?.length ? [...options.apiKeys] : [processKey]
  const base = openMemoryStore()
  if (seed !== false) {
    const catalogue = seed === true ? builtInCatalogue() : parseCatalogue(seed, 'the seed catalogue')
    await base.load(catalogue, { cover: coverPath, ifNeverWritten: true })
  }
  const point = await base.resetPoint()
  const front = fixtures ? new FixtureFront(base, point, NAMESPACE_LIMITS) : undefined
  const store = front?.store ?? base
  const reset = front ? front.reset : () => base.restore(point)
  const world: World = { store, front, reset }
  const { signup, readOnly, tokenTtlMs } = options
  const app = appFor({ apiKeys, passwords, fixtures, signup, readOnly, tokenTtlMs }, options.now)
  let closed = false
  const fetch: Service['fetch'] = async (input, init) => {
    if (closed) throw new Error('the service was closed: make a new one with createService()')
    return app.answer(world, inProcessRequest(input as Request | string, init as RequestInit | undefined))
  }
  // The namespaces' controls are the routes a server's are, called with the service key through this `fetch`.
  const controls = fixtures ? connect({ url: ORIGIN, apiKey: apiKeys[0] as string, fetch }) : undefined
  return {
    url: ORIGIN,
    apiKey: apiKeys[0] as string,
    fetch,
    reset: () => (front ? front.namespaces.default.reset() : base.restore(point)),
    namespace: (name) => {
      if (!controls) throw new Error('namespaces need createService({ fixtures: true })')
      return controls.namespace(name)
    },
    state: () => exportState(store),
    load: async (state) => importState(store, parseCatalogue(state, 'the state to load')),
    close: async () => {
      closed = true
      await store.close()
    },
  }
}

/**
 * The request `input` names, as the app is given it. A path is taken against {@link ORIGIN}. `Accept-Encoding` is
 * left out: a compressed answer would reach the caller's code as compressed bytes, since nothing between decodes it
 * (a `fetch` decodes what comes from the network, not a `Response` handed back in-process). A host shorter than the
 * app routes by (see `anyOrigin` in src/app.ts) is answered as {@link ORIGIN}.
 */
function inProcessRequest(input: Request | URL | string, init?: RequestInit): Request {
  let request =
    input instanceof Request && init === undefined
      ? input
      : new Request(typeof input === 'string' && input.startsWith('/') ? ORIGIN + input : (input as string), init)
  if (request.url.indexOf('/', 8) < SHORTEST_ROUTED_PATH_START) {
    const { pathname, search } = new URL(request.url)
    request = new Request(ORIGIN + pathname + search, request)
  }
  if (request.headers.has('accept-encoding')) {
    const headers = new Headers(request.headers)
    headers.delete('accept-encoding')
    // A new Request from the parts: Bun's `new Request(request, { headers })` keeps the old headers.
    request = new Request(request.url, {
      method: request.method,
      headers,
      body: request.body,
      signal: request.signal,
      duplex: 'half',
    } as RequestInit)
  }
  return request
}
