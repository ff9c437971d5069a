import { createApp } from '../src/app.ts'
import type { PasswordHasher } from '../src/auth/password.ts'
import type { IdempotencyLimits } from '../src/store/idempotency.ts'
import type { Store } from '../src/store/store.ts'
import { testStore } from './support/backends.ts'
import { expectDocumented } from './support/openapi.ts'
import { cheapPasswords } from './support/passwords.ts'

/** The service key every in-process test app accepts. */
export const SERVICE_KEY = 'test-service-key'

/** Headers that authenticate a write with the service key. */
export const asService = { 'x-api-key': SERVICE_KEY }

interface Call {
  method?: string
  body?: unknown
  headers?: Record<string, string>
}

/**
 * An app over a fresh store of this run's backend (see `testStore`: in memory unless the run says PostgreSQL), or
 * over `store`, and a helper to call it in-process. Passwords are hashed with argon2id at its lowest cost
 * (`cheapPasswords`) unless `options.passwords` says otherwise.
 */
export function testApp(
  store: Store = testStore(),
  options: { now?: () => Date; passwords?: PasswordHasher; idempotency?: IdempotencyLimits } = {},
) {
  const errors: unknown[] = []
  const app = createApp({
    store,
    apiKeys: [SERVICE_KEY],
    report: (_, error) => errors.push(error),
    passwords: cheapPasswords,
    ...options,
  })
  /**
   * Sends one request through the whole app; a non-string body is sent as JSON. Every answer is checked against the
   * OpenAPI document, so a test that meets an undocumented answer fails, and the document cannot drift.
   */
  const call = async (path: string, { method = 'GET', body, headers = {} }: Call = {}) => {
    const init: RequestInit = { method, headers: { ...headers } }
    if (body !== undefined) {
      init.body = typeof body === 'string' ? body : JSON.stringify(body)
      ;(init.headers as Record<string, string>)['content-type'] ??= 'application/json'
    }
    const response = await app.handle(new Request(`http://localhost${path}`, init))
    const text = await response.text()
    await expectDocumented({ method, path, status: response.status, headers: response.headers, text })
    let json: unknown
    try {
      json = text ? JSON.parse(text) : undefined
    } catch {
      json = undefined
    }
    // biome-ignore lint/suspicious/noExplicitAny: tests read whatever JSON a response holds, field by field
    return { status: response.status, headers: response.headers, text, json: json as any }
  }
  return { app, store, call, errors }
}

/** Adds `count` artists named "Artist 1"… through the store, in one go. */
export async function addArtists(store: Store, count: number) {
  await store.load(Array.from({ length: count }, (_, i) => ({ name: `Artist ${i + 1}`, image: null, albums: [] })))
}
