import { mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import type { CannedResponse } from './ceiling.ts'
import { BINARY, type ServerProcess, startRockLegends } from './server-process.ts'

/** The service key every benchmarked rock-legends accepts, and wrk's create script sends. */
export const API_KEY = 'bench-key'
/** The body of every benchmarked create. */
export const CREATE_BODY = JSON.stringify({
  name: 'Bench Artist',
  band: 'Bench Band',
  description: 'An artist created by bun run bench to measure durable writes.',
})
/** The wrk script of creates, `POST` to rock-legends' or json-server's artist collection, and its arguments. */
export const CREATE_SCRIPT = {
  script: join(import.meta.dir, 'wrk', 'post-artist.lua'),
  scriptArgs: [API_KEY, CREATE_BODY],
}

// The data file of a store kept in `dir`; the store may keep more files of its own next to it.
const dataFile = (dir: string) => join(dir, 'db.json')

/** How a benchmarked rock-legends logs: as users start it (`default`: the pretty access log), or `--log off`. */
export type LogSetting = 'default' | 'off'

/** The file that the stderr of a store's server, its access log, goes to: beside `dir`, so it is not counted as data. */
export const accessLogOf = (dir: string) => `${dir}.stderr.log`

/**
 * Starts rock-legends (`binary`, the build under test by default) on a store in `dir` (created if needed) with the
 * bench key; with `catalogue`, an empty store is first filled from that `--seed=FILE` catalogue. In the default
 * configuration its access log goes to {@link accessLogOf} `dir`.
 */
export async function startStore(
  dir: string,
  catalogue?: string,
  log: LogSetting = 'default',
  binary = BINARY,
): Promise<ServerProcess> {
  await mkdir(dir, { recursive: true })
  const seed = catalogue ? [`--seed=${catalogue}`] : []
  const logFile = log === 'default' ? accessLogOf(dir) : undefined
  return startRockLegends([...seed, '--data', dataFile(dir), '--api-key', API_KEY], logFile, binary)
}

/** How many artists the rock-legends at `base` holds (`meta.total` of the artist list). */
export async function artistCount(base: string): Promise<number> {
  const response = await fetch(`${base}/api/v1/artists?limit=1`)
  const page = (await response.json()) as { meta?: { total?: unknown } }
  if (typeof page.meta?.total !== 'number') throw new Error(`cannot read the artist count: ${JSON.stringify(page)}`)
  return page.meta.total
}

/** The request of the wrk create script, for `fetch`. */
export const CREATE_REQUEST = {
  method: 'POST',
  headers: { 'content-type': 'application/json', 'x-api-key': API_KEY },
  body: CREATE_BODY,
} as const

/**
 * Sends `count` creates at once to `url` (rock-legends' or json-server's artist collection), the request of the wrk
 * script, checking each answers 201, so that a rejected key fails before wrk counts anything.
 */
export async function createArtists(url: string, count: number): Promise<void> {
  const create = async () => {
    const response = await fetch(url, CREATE_REQUEST)
    if (response.status !== 201) throw new Error(`POST ${url} answered ${response.status}: ${await response.text()}`)
  }
  await Promise.all(Array.from({ length: count }, create))
}

/**
 * What the rock-legends at `base` answers to `method` `path` (a create sends the request of the wrk script), for the
 * ceiling (bench/ceiling.ts) to send back: every header but the two Bun.serve writes itself, so that the ceiling sends
 * the same bytes, security headers and request id included.
 */
export async function recordResponse(base: string, method: 'GET' | 'POST', path: string): Promise<CannedResponse> {
  const response = await fetch(`${base}${path}`, method === 'POST' ? CREATE_REQUEST : {})
  if (response.status !== (method === 'POST' ? 201 : 200))
    throw new Error(`${method} ${path} answered ${response.status}: ${await response.text()}`)
  const headers: Record<string, string> = {}
  for (const [name, value] of response.headers) if (name !== 'date' && name !== 'content-length') headers[name] = value
  const body = Buffer.from(await response.arrayBuffer()).toString('base64')
  return { method, path, status: response.status, headers, body }
}
