import { ConflictError, InvalidFieldError, NotFoundError } from '../model/errors.ts'
import type { AccountChange, AccountView, NewAccount, PasswordReset } from '../ops/accounts.ts'
import { RefusedError } from '../ops/refused-error.ts'
import type { Page, Slice } from '../store/store.ts'

/** How long one request to the server may take: it answers the operator's routes in milliseconds. */
const TIMEOUT_MS = 15_000

/**
 * The operator's routes of a running server (`/__admin/users…`, src/ops/accounts-routes.ts), called with one of its service
 * keys: what `rock-legends users` does when a server owns the data file. Refusals come back as the same domain
 * errors `OperatorAccounts` throws when the command works on the store itself, so both ways read alike.
 */
export class OperatorClient {
  /** The server at `base` (e.g. `http://127.0.0.1:3000`), asked with the service key `key`. */
  constructor(
    private readonly base: string,
    private readonly key: string,
  ) {}

  /** A page of every account, in id order. */
  async list(page: Page): Promise<Slice<AccountView>> {
    const answer = await this.call<{ data: AccountView[]; meta: { total: number } }>(
      'GET',
      `/__admin/users?limit=${page.limit}&offset=${page.offset}`,
    )
    return { items: answer.data, total: answer.meta.total }
  }

  add(fields: NewAccount): Promise<AccountView> {
    return this.call('POST', '/__admin/users', fields)
  }

  setDisabled(email: string, disabled: boolean): Promise<AccountChange> {
    return this.call('POST', `/__admin/users/${disabled ? 'disable' : 'enable'}`, { email })
  }

  resetPassword(email: string, password: string): Promise<PasswordReset> {
    return this.call('POST', '/__admin/users/reset-password', { email, password })
  }

  private async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const url = new URL(path, this.base)
    let response: Response
    try {
      response = await fetch(url, {
        method,
        headers: { 'x-api-key': this.key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
        redirect: 'manual',
        signal: AbortSignal.timeout(TIMEOUT_MS),
      })
    } catch (error) {
      throw new RefusedError(`cannot reach the server at ${this.base}: ${(error as Error).message}`)
    }
    const text = await response.text()
    let json: { detail?: unknown } | undefined
    try {
      json = JSON.parse(text)
    } catch {
      json = undefined
    }
    if (response.ok && json !== undefined) return json as T
    const detail = typeof json?.detail === 'string' ? json.detail : text.slice(0, 200) || response.statusText
    if (response.status === 404 && path.startsWith('/__admin/users/')) throw new NotFoundError(detail)
    if (response.status === 409) throw new ConflictError(detail)
    if (response.status === 400) throw new InvalidFieldError('', detail)
    if (response.status === 401)
      throw new RefusedError(
        `the server at ${this.base} does not accept this service key: give one of its --api-key values with --api-key or ROCK_LEGENDS_API_KEYS`,
      )
    if (response.status === 404)
      throw new RefusedError(
        `the server at ${this.base} has no ${path.split('?')[0]} (is it rock-legends, and as new as this command?)`,
      )
    throw new RefusedError(`the server at ${this.base} answered ${response.status}: ${detail}`)
  }
}
