import { type Treaty, treaty } from '@elysiajs/eden'
import type { App } from './app.ts'

/** The typed client of a Rock Legends server: one property per path segment, one method per HTTP method. */
export type TypedClient = Treaty.Create<App>

/**
 * A client for the server at `url`, typed from the app's own route schemas (Eden Treaty): paths, bodies, query
 * parameters and answers are checked by TypeScript, so a fixture that drifts from the API fails to compile.
 * Dates stay strings, as the API sends them (Eden would otherwise turn date-like strings into `Date`s). Named apart
 * from `createClient`, the npm package's client, which this package exports too, the same function.
 *
 * @example
 * const api = createTypedClient(server.url, { headers: { 'x-api-key': server.apiKey } })
 * const { data, error } = await api.api.v1.artists.post({ name: 'Moris' })
 * const { data: artist } = await api.api.v1.artists({ artistId: data!.id }).get()
 */
export function createTypedClient(url: string, config: Treaty.Config = {}): TypedClient {
  return treaty<App>(url, { parseDate: false, ...config })
}
