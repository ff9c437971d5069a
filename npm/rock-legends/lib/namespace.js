/**
 * `server.namespace(name)` of a server started with `fixtures: true`: one test's (or worker's) own world on a shared
 * server, and the fixture controls of that world (docs/testing-with-rock-legends.md, "One server for a parallel
 * suite"). Plain JavaScript over the global `fetch`.
 */

const HEADER = 'Rock-Legends-Namespace'
const NAME = /^[A-Za-z0-9._-]{1,64}$/

/** Throws the problem of a control that did not answer `expected`. */
async function check(response, expected, what) {
  if (response.status === expected) return response
  const body = await response.text()
  let detail = body
  try {
    detail = JSON.parse(body).detail ?? body
  } catch {}
  throw new Error(`${what} failed with ${response.status}: ${detail}`)
}

/**
 * The handle of namespace `name` on the server at `url`, whose controls `apiKey` (a service key) may call, through
 * `send` (the global `fetch`, or an in-process service's).
 */
export function namespaceHandle(url, apiKey, name, send = fetch) {
  if (!NAME.test(name)) throw new Error(`a namespace is named with 1 to 64 of A-Z, a-z, 0-9, ., _ and -, not "${name}"`)
  const headers = { [HEADER]: name }
  const control = (path, init = {}) =>
    send(`${url}${path}`, {
      ...init,
      headers: { ...headers, 'x-api-key': apiKey, ...(init.body ? { 'content-type': 'application/json' } : {}) },
    })
  return {
    name,
    headers,
    fetch: (path, init = {}) => {
      const merged = new Headers(init.headers)
      merged.set(HEADER, name)
      return send(new URL(path, url).href, { ...init, headers: merged })
    },
    reset: async () => {
      await check(await control('/__admin/reset', { method: 'POST' }), 204, 'reset')
    },
    requests: async (filter = {}) => {
      const query = new URLSearchParams({ limit: '100' })
      for (const key of ['method', 'path', 'status']) if (filter[key] !== undefined) query.set(key, String(filter[key]))
      const entries = []
      let next = `/__admin/requests?${query}`
      while (next) {
        const page = await (await check(await control(next), 200, 'reading the journal')).json()
        entries.push(...page.data)
        next = page.meta.next
      }
      return entries
    },
    clearRequests: async () => {
      await check(await control('/__admin/requests', { method: 'DELETE' }), 204, 'clearing the journal')
    },
    fault: async (spec) => {
      const response = await control('/__admin/faults', { method: 'POST', body: JSON.stringify(spec) })
      return (await check(response, 201, 'arming a fault')).json()
    },
    faults: async () =>
      (await (await check(await control('/__admin/faults?limit=100'), 200, 'listing faults')).json()).data,
    clearFaults: async () => {
      await check(await control('/__admin/faults', { method: 'DELETE' }), 204, 'removing faults')
    },
    state: async () => (await check(await control('/__admin/state'), 200, 'reading the state')).json(),
    load: async (state) => {
      const response = await control('/__admin/state', { method: 'PUT', body: JSON.stringify(state) })
      return (await check(response, 200, 'loading the state')).json()
    },
    drop: async () => {
      const response = await send(`${url}/__admin/namespaces/${encodeURIComponent(name)}`, {
        method: 'DELETE',
        headers: { 'x-api-key': apiKey },
      })
      if (response.status !== 404) await check(response, 204, 'dropping the namespace')
    },
  }
}

/**
 * `connect({ url, apiKey })`: a server started elsewhere with `--fixtures` (a Vitest or Jest `globalSetup`, a
 * Playwright `webServer`), from a test worker that knows only its URL and a service key; `namespace(name)` as on the
 * server `startServer` gives. Its requests go through `fetch` when given (the global one by default).
 */
export function connect({ url, apiKey, fetch: send = fetch }) {
  if (typeof url !== 'string' || !url) throw new Error('connect needs the url of a running server')
  if (typeof apiKey !== 'string' || !apiKey) throw new Error('connect needs a service key of the server (apiKey)')
  const base = url.replace(/\/+$/, '')
  return { url: base, apiKey, namespace: (name) => namespaceHandle(base, apiKey, name, send) }
}
