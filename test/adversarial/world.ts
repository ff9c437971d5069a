import { expect } from 'bun:test'
import { ACCOUNT_LIMITS } from '../../src/accounts/service.ts'
import { createApp } from '../../src/app.ts'
import type { StoreDocument } from '../../src/model/store-document.ts'
import { openMemoryStore } from '../../src/store/document/memory.ts'
import type { Limiter, Recents, Store } from '../../src/store/store.ts'
import { SERVICE_KEY } from '../helpers.ts'
import { expectDocumented } from '../support/openapi.ts'
import { cheapPasswords } from '../support/passwords.ts'
import { type Credential, type Plan, urlOf } from './arbitraries.ts'

/** The user every world starts with, and a second one whose keys the first must never see. */
export const USER = { name: 'Carlos', email: 'carlos@rock-legends.com', password: 'i-love-rock' }
const OTHER = { name: 'Maria', email: 'maria@rock-legends.com', password: 'rock-n-roll' }

/** The secrets of a template: several tokens and keys, since a run may log out or revoke some. */
interface Secrets {
  tokens: string[]
  keys: { id: number; key: string }[]
  revokedToken: string
  otherKeyId: number
}

/** A store state to start every run from, built once, and the secrets that are valid in it. */
export interface Template {
  snapshot: StoreDocument
  secrets: Secrets
}

/** An answer, read whole. */
export interface Answer {
  status: number
  headers: Headers
  text: string
  // biome-ignore lint/suspicious/noExplicitAny: properties read whatever JSON an answer holds
  json: any
}

async function send(app: ReturnType<typeof createApp>, method: string, path: string, init: RequestInit = {}) {
  const response = await app.handle(new Request(`http://localhost${path}`, { method, ...init }))
  const text = await response.text()
  let json: unknown
  try {
    json = text ? JSON.parse(text) : undefined
  } catch {
    json = undefined
  }
  return { status: response.status, headers: response.headers, text, json } as Answer
}

/**
 * Builds the template: five artists (one with 12 albums, so album lists have pages; one with none), a user with
 * four bearer tokens (one revoked) and three personal keys, and another user with a key of their own.
 */
export async function buildTemplate(): Promise<Template> {
  const store = openMemoryStore()
  const album = (i: number) => ({ name: `Album ${i}`, year: 1970 + i, image: null })
  await store.load(
    [3, 0, 12, 1, 2].map((albums, i) => ({
      name: `Artist ${i + 1}`,
      ...(i === 0 && { description: 'First.' }),
      image: null,
      albums: Array.from({ length: albums }, (_, j) => album(j)),
    })),
  )
  const app = createApp({ store, apiKeys: [SERVICE_KEY], passwords: cheapPasswords })
  const post = async (path: string, body: unknown, headers: Record<string, string> = {}) => {
    const answer = await send(app, 'POST', path, {
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    })
    if (answer.status >= 300) throw new Error(`template: ${path} → ${answer.status} ${answer.text}`)
    return answer.json
  }
  await post('/api/v1/user/signup', USER)
  await post('/api/v1/user/signup', OTHER)
  const login = async (user: typeof USER) =>
    (await post('/api/v1/user/login', { email: user.email, password: user.password })).token as string
  const tokens = [await login(USER), await login(USER), await login(USER)]
  const revokedToken = await login(USER)
  await send(app, 'POST', '/api/v1/user/logout', { headers: { authorization: `Bearer ${revokedToken}` } })
  const keys = []
  for (const name of ['ci', 'laptop', 'backup']) {
    const created = await post('/api/v1/user/api-keys', { name }, { authorization: `Bearer ${tokens[0]}` })
    keys.push({ id: created.id as number, key: created.key as string })
  }
  const otherToken = await login(OTHER)
  const otherKey = await post('/api/v1/user/api-keys', { name: 'theirs' }, { authorization: `Bearer ${otherToken}` })
  return { snapshot: await store.snapshot(), secrets: { tokens, keys, revokedToken, otherKeyId: otherKey.id } }
}

/**
 * The store's content, canonical: what must not change when a request is refused. A credential's `lastUsedAt` is
 * left out: presenting a valid credential records its use even when the request is then refused (for a bad body),
 * which is bookkeeping, not a change the client made.
 */
export async function dump(store: Store): Promise<string> {
  const document = await store.snapshot()
  // A snapshot shares the store's records, which are frozen: the copy leaves the time out.
  const credentials = document.credentials.map((credential) => ({ ...credential, lastUsedAt: null }))
  return JSON.stringify({ ...document, credentials })
}

/**
 * An object that forwards every call to the latest value `make` gave: `renew()` makes a new one. The app keeps the
 * limiters and recents it asked its store for; these let a world hand it new, empty ones.
 */
function renewable<T extends object>(make: () => T, renewals: (() => void)[]): T {
  let current = make()
  renewals.push(() => {
    current = make()
  })
  return new Proxy({} as T, {
    get: (_, key) => {
      const value = Reflect.get(current, key)
      return typeof value === 'function' ? value.bind(current) : value
    },
  })
}

/**
 * One app, and the memory store it runs over, for every world made from one template. An app's first request to
 * each route compiles that route's handler (milliseconds each), which a new app per world would pay again for each of
 * the hundreds of worlds of a property. The store's brakes (its limiters and recents, which a restore leaves alone)
 * are renewed with each world, so every world starts as a new app over a copy of the template would: the template's
 * records, no attempts counted, no address known.
 */
interface Stage {
  store: Store
  app: ReturnType<typeof createApp>
  renew: () => void
  /** Where the app reports unexpected failures: the current world's list. */
  reported: unknown[]
}

const stages = new WeakMap<Template, Stage>()

function stageOf(template: Template): Stage {
  const existing = stages.get(template)
  if (existing) return existing
  const memory = openMemoryStore()
  const renewals: (() => void)[] = []
  const store = new Proxy(memory, {
    get: (target, key) => {
      if (key === 'limiter')
        return (...args: Parameters<Store['limiter']>) => renewable<Limiter>(() => target.limiter(...args), renewals)
      if (key === 'recents')
        return (...args: Parameters<Store['recents']>) => renewable<Recents>(() => target.recents(...args), renewals)
      const value = Reflect.get(target, key)
      return typeof value === 'function' ? value.bind(target) : value
    },
  })
  const created: Stage = {
    store,
    renew: () => {
      for (const renew of renewals) renew()
    },
    reported: [],
    app: createApp({
      store,
      apiKeys: [SERVICE_KEY],
      report: (_, error) => created.reported.push(error),
      // What each answer is, not what a hash costs, is under test: argon2id at its lowest cost (test/support/passwords.ts).
      passwords: cheapPasswords,
      // Thousands of forged credentials from one (in-process) address: the brake on guessing them is not under test
      // here (test/auth/credential-guessing.test.ts), what each request answers is.
      limits: { ...ACCOUNT_LIMITS, credentialFailuresPerClient: { limit: 1_000_000, windowMs: 60_000 } },
    }),
  }
  stages.set(template, created)
  return created
}

/** The app over a copy of the template, with the secrets still live in it; one world at a time per template. */
export class World {
  readonly store: Store
  readonly app: ReturnType<typeof createApp>
  /** Unexpected failures the app reported (each would have been a 500). */
  readonly reported: unknown[] = []
  private readonly tokens: string[]
  private readonly keys: { id: number; key: string }[]

  private constructor(
    stage: Stage,
    readonly secrets: Secrets,
  ) {
    this.store = stage.store
    this.app = stage.app
    stage.reported = this.reported
    this.tokens = [...secrets.tokens]
    this.keys = [...secrets.keys]
  }

  /** A world over a copy of `template`: the template's records restored, and the app's brakes renewed. */
  static async from(template: Template): Promise<World> {
    const stage = stageOf(template)
    await stage.store.restore(template.snapshot)
    stage.renew()
    return new World(stage, template.secrets)
  }

  /** Ids of the personal keys of the world's user that are still live; another user's key id comes last. */
  get keyIds(): number[] {
    return [...this.keys.map((key) => key.id), this.secrets.otherKeyId]
  }

  /** The headers of `credential`, using secrets that are still live. */
  headersOf(credential: Credential): Record<string, string> {
    const token = this.tokens[0] ?? 'rl_tok_all-revoked'
    const key = this.keys[0]?.key ?? 'rl_key_all-revoked'
    switch (credential) {
      case 'none':
        return {}
      case 'service':
        return { 'x-api-key': SERVICE_KEY }
      case 'token':
        return { authorization: `Bearer ${token}` }
      case 'key':
        return { 'x-api-key': key }
      case 'revoked-token':
        return { authorization: `Bearer ${this.secrets.revokedToken}` }
      case 'token-as-api-key':
        return { 'x-api-key': token }
      case 'key-as-bearer':
        return { authorization: `Bearer ${key}` }
      case 'near-service-key':
        return { 'x-api-key': `${SERVICE_KEY.slice(0, -1)}X` }
      case 'other-service-key':
        return { 'x-api-key': SERVICE_KEY.toUpperCase() }
      default:
        return credential
    }
  }

  /** Whether `credential` resolves to a live one here. */
  isLive(credential: Credential): boolean {
    if (credential === 'token') return this.tokens.length > 0
    if (credential === 'key' || credential === 'key-as-bearer') return this.keys.length > 0
    return credential === 'service'
  }

  /** Notes what a successful logout or key revocation took away, so later plans use secrets still live. */
  forget(plan: Plan, answer: Answer): void {
    if (answer.status !== 204) return
    if (plan.operation.operationId === 'logoutUser') this.tokens.shift()
    if (plan.operation.operationId === 'revokeApiKey') {
      const id = Number(plan.path.id)
      const at = this.keys.findIndex((key) => key.id === id)
      if (at >= 0) this.keys.splice(at, 1)
    }
  }

  /** Sends `plan` and checks what every answer owes: below 500, documented, a problem whose status is the HTTP one. */
  async send(plan: Plan): Promise<Answer> {
    const headers = new Headers(plan.headers)
    for (const [name, value] of Object.entries(this.headersOf(plan.credential))) headers.set(name, value)
    const init: RequestInit = { headers }
    if (plan.body) {
      init.body = plan.body.text
      if (plan.body.contentType !== undefined) headers.set('content-type', plan.body.contentType)
    }
    const path = urlOf(plan)
    const answer = await send(this.app, plan.operation.method, path, init)
    const context = `${plan.operation.method} ${path.slice(0, 200)} [${plan.kind}${plan.broken ? `: ${plan.broken}` : ''}] → ${answer.status} ${answer.text.slice(0, 300)}`
    if (answer.status >= 500 || this.reported.length > 0)
      throw new Error(`server failure: ${context}\n${this.reported.map(String).join('\n')}`)
    try {
      await expectDocumented({
        method: plan.operation.method,
        path,
        status: answer.status,
        headers: answer.headers,
        text: answer.text,
      })
    } catch (error) {
      throw new Error(`${(error as Error).message}\n${context}`)
    }
    if (answer.status >= 400) {
      expect(answer.headers.get('content-type'), context).toBe('application/problem+json')
      expect(answer.json?.status, context).toBe(answer.status)
      expect(answer.text, context).not.toMatch(/\bat .+:\d+:\d+|node_modules|\/src\//)
    }
    // CORS is closed: no origin, listed or not, is ever told it may read an answer.
    expect(answer.headers.get('access-control-allow-origin'), context).toBeNull()
    return Object.assign(answer, { context })
  }

  /** A plain GET, documented-checked too. */
  async get(path: string): Promise<Answer> {
    const answer = await send(this.app, 'GET', path)
    await expectDocumented({ method: 'GET', path, ...answer })
    return answer
  }
}
