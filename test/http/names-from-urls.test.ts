/**
 * Every lookup by a name taken from the URL finds own entries only: a path segment, a query parameter's name or a
 * header's name that happens to be a property every JavaScript object inherits (`constructor`, `__proto__`,
 * `valueOf`, `toString`, `hasOwnProperty`, …) is a name like any other, so it finds nothing: a 404 problem (or the
 * route's usual 400 or 401), never a 200 with `{}`, never a 500, and nothing reported as an unexpected failure.
 */
import { describe, expect, test } from 'bun:test'
import { createApp } from '../../src/app.ts'
import { seedStore } from '../../src/seed/seed.ts'
import { openMemoryStore } from '../../src/store/document/memory.ts'

const KEY = 'names-key'

/** Every name an object inherits from Object.prototype, `__proto__` and `constructor` among them. */
const INHERITED = Object.getOwnPropertyNames(Object.prototype)

/** Any type, and a page preferred as browsers ask (an Accept that excludes what a route sends is 406 before any lookup). */
const ACCEPTS = ['*/*', 'text/html, */*;q=0.1']

/** The routes whose last path segment is a name from the URL, and what an unknown name gets there. */
const ROUTES: [prefix: string, status: number, contentType: string][] = [
  ['/docs/assets/', 404, 'application/problem+json'],
  ['/assets/', 404, 'application/problem+json'],
  ['/problems/', 404, 'application/problem+json'],
  ['/covers/artists/', 404, 'application/problem+json'],
  ['/covers/albums/', 404, 'application/problem+json'],
  // The artist's web page: a page saying so, for people.
  ['/artists/', 404, 'text/html; charset=utf-8'],
  // Integer ids: the name is not one, a 400 naming the parameter.
  ['/api/v1/artists/', 400, 'application/problem+json'],
  ['/api/v1/artists/1/albums/', 400, 'application/problem+json'],
  // Credentials come first.
  ['/api/v1/user/api-keys/', 401, 'application/problem+json'],
]

async function seededApp() {
  const store = openMemoryStore()
  await seedStore(store, true)
  const reports: string[] = []
  const app = createApp({ store, apiKeys: [KEY], report: (message, error) => reports.push(`${message}: ${error}`) })
  const get = (path: string, headers: Record<string, string> = {}) =>
    app.handle(new Request(`http://localhost${path}`, { headers }))
  return { get, reports }
}

describe('names from the URL find own entries only', () => {
  test('a path segment that names an inherited property: the route’s not-found answer, nothing reported', async () => {
    const { get, reports } = await seededApp()
    expect(INHERITED).toEqual(
      expect.arrayContaining(['constructor', '__proto__', 'valueOf', 'toString', 'hasOwnProperty']),
    )
    const answers: string[] = []
    const wanted: string[] = []
    const bodies: { name: string; status: number; text: string }[] = []
    for (const [prefix, status, contentType] of ROUTES)
      for (const name of INHERITED)
        for (const accept of ACCEPTS) {
          const response = await get(`${prefix}${encodeURIComponent(name)}`, { accept })
          answers.push(`${prefix}${name} (${accept}): ${response.status} ${response.headers.get('content-type')}`)
          wanted.push(`${prefix}${name} (${accept}): ${status} ${contentType}`)
          const text = await response.text()
          if (contentType === 'application/problem+json') bodies.push({ name, status, text })
        }
    expect(answers).toEqual(wanted)
    for (const { name, status, text } of bodies)
      expect({ name, status: JSON.parse(text).status }).toEqual({ name, status })
    expect(reports).toEqual([])
  })

  test('the documentation assets that exist are still served', async () => {
    const { get } = await seededApp()
    const page = await (await get('/docs')).text()
    const assets = [...page.matchAll(/src="(\/docs\/assets\/[^"]+)"/g)].map((match) => match[1] as string)
    expect(assets).toHaveLength(2)
    for (const asset of assets) {
      const response = await get(asset)
      expect(response.status).toBe(200)
      expect(response.headers.get('content-type')).toBe('text/javascript; charset=utf-8')
      expect((await response.text()).length).toBeGreaterThan(10)
    }
  })

  test('query parameters and headers named after inherited properties change nothing and break nothing', async () => {
    const { get, reports } = await seededApp()
    const query = INHERITED.map((name) => `${encodeURIComponent(name)}=1&${encodeURIComponent(name)}[x]=2`).join('&')
    // Every route, the API's as the pages, ignores parameters it does not declare (src/http/query-params.ts).
    const paths = ['/api/v1/artists', '/api/v1/artists/1/albums', '/', '/artists/1', '/login', '/signup', '/healthz']
    for (const path of paths) {
      const response = await get(`${path}?${query}`)
      expect({ path, status: response.status }).toEqual({ path, status: 200 })
    }
    const headers = Object.fromEntries(INHERITED.filter((name) => /^[a-z_]+$/i.test(name)).map((name) => [name, 'x']))
    expect((await get('/api/v1/artists/1', headers)).status).toBe(200)
    expect((await get('/api/v1/user/me', headers)).status).toBe(401)
    expect(reports).toEqual([])
  })
})
