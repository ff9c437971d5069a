import { resolve } from 'node:path'
import { IN_MEMORY, isDatabaseUrl } from './store/open-store.ts'
import { redactUrl } from './store/sql/connect.ts'

/** What the banner tells a person about the server that just started. */
export interface BannerFacts {
  /** Where it listens, with the real port. */
  url: string
  /** Whether the web pages are served (`--no-ui` turns them off). */
  ui: boolean
  /** The `--data` value: a file path, `:memory:` or a database URL. */
  data: string
  /** Whether anyone may create an account. */
  signup: boolean
  /** Where Prometheus scrapes the metrics (`--metrics`), if they are served. */
  metricsUrl?: string
}

/** Where the data lives and what kind of store keeps it, in words. */
function describeData(data: string): string {
  if (data === IN_MEMORY) return 'in memory (--data :memory:): everything is gone when the process stops'
  if (isDatabaseUrl(data)) return `${redactUrl(data)} (a database, shared by every replica started on it)`
  return `${resolve(data)} (a JSON file, with its journal beside it)`
}

/**
 * What the executable prints once it serves. The first line is the one scripts and test fixtures wait for, exactly
 * `rock-legends listening on URL`; the lines after it are for a person: the addresses to open, where the data
 * lives, whether sign-up is open, and where the metrics are scraped.
 *
 * @example
 * printLine(banner({ url: server.url, ui: true, data: './data/db.json', signup: true }))
 */
export function banner({ url, ui, data, signup, metricsUrl }: BannerFacts): string {
  const lines = [`rock-legends listening on ${url}`]
  if (ui) lines.push(`  catalogue  ${url}/`)
  lines.push(
    `  API docs   ${url}/docs`,
    `  API        ${url}/api/v1/artists`,
    `  data       ${describeData(data)}`,
    `  sign-up    ${signup ? 'open: anyone who reaches the server may create an account' : 'closed'}`,
  )
  if (metricsUrl) lines.push(`  metrics    ${metricsUrl}`)
  return lines.join('\n')
}

/**
 * The banner's facts as the fields of the `ready` object `--log json` writes in its place: the URL scripts wait for,
 * the addresses, where the data lives (a file's absolute path, `:memory:`, or a database URL without its password)
 * and in which kind of store, whether sign-up is open, the metrics' URL, this build's version and the process id.
 *
 * @example
 * printLine(jsonLine('info', 'ready', readyFields({ url: server.url, ui: true, data: ':memory:', signup: true }, '1.0.0')))
 */
export function readyFields({ url, ui, data, signup, metricsUrl }: BannerFacts, version: string) {
  const store = data === IN_MEMORY ? 'memory' : isDatabaseUrl(data) ? 'postgresql' : 'json-file'
  return {
    url,
    ...(ui ? { pages: `${url}/` } : {}),
    docs: `${url}/docs`,
    api: `${url}/api/v1/artists`,
    data: store === 'memory' ? data : store === 'postgresql' ? redactUrl(data) : resolve(data),
    store,
    signup,
    ...(metricsUrl ? { metrics: metricsUrl } : {}),
    version,
    pid: process.pid,
  }
}
