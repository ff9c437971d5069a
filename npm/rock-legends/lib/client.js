/**
 * A thin typed client over `fetch`: one method per operation of `/openapi.json`, answers as parsed JSON, every error
 * thrown as a {@link ProblemError} carrying the server's RFC 9457 problem. Types are in index.d.ts.
 */

/** An error answer of the server: `status` and the problem details it sent. */
export class ProblemError extends Error {
  constructor(status, problem, method, path) {
    super(`${method} ${path}: ${status} ${problem.title ?? ''}${problem.detail ? `: ${problem.detail}` : ''}`)
    this.name = 'ProblemError'
    this.status = status
    this.problem = problem
  }
}

const query = (params = {}) => {
  const entries = Object.entries(params).filter(([, value]) => value !== undefined)
  return entries.length ? `?${new URLSearchParams(entries.map(([name, value]) => [name, String(value)]))}` : ''
}

/** A client of the server at `url` (e.g. `server.url`); `apiKey` or `token` authenticate its writes. */
export function createClient(url, options = {}) {
  const base = url.replace(/\/+$/, '')
  const doFetch = options.fetch ?? globalThis.fetch
  const credentials = () => {
    if (options.token) return { authorization: `Bearer ${options.token}` }
    if (options.apiKey) return { 'x-api-key': options.apiKey }
    return {}
  }
  const call = async (method, path, body, more) => {
    const headers = { accept: 'application/json', ...credentials(), ...options.headers, ...more }
    // A PATCH body is a JSON merge patch (RFC 7396), and says so.
    if (body !== undefined)
      headers['content-type'] = method === 'PATCH' ? 'application/merge-patch+json' : 'application/json'
    const response = await doFetch(`${base}${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    const text = await response.text()
    if (!response.ok) {
      let problem
      try {
        problem = JSON.parse(text)
      } catch {
        problem = { type: 'about:blank', title: response.statusText, status: response.status, detail: text }
      }
      throw new ProblemError(response.status, problem, method, path)
    }
    return text === '' ? undefined : JSON.parse(text)
  }
  const id = (value) => encodeURIComponent(String(value))
  // A POST sent again with the same key is done once: the server replays the first answer (Idempotency-Key).
  const keyed = (postOptions) =>
    postOptions?.idempotencyKey === undefined ? undefined : { 'idempotency-key': postOptions.idempotencyKey }
  return {
    url: base,
    with: (credentialOptions) =>
      createClient(base, { ...options, apiKey: undefined, token: undefined, ...credentialOptions }),
    health: () => call('GET', '/healthz'),
    artists: {
      list: (params) => call('GET', `/api/v1/artists${query(params)}`),
      get: (artistId) => call('GET', `/api/v1/artists/${id(artistId)}`),
      create: (artist, createOptions) => call('POST', '/api/v1/artists', artist, keyed(createOptions)),
      update: (artistId, artist) => call('PUT', `/api/v1/artists/${id(artistId)}`, artist),
      patch: (artistId, changes) => call('PATCH', `/api/v1/artists/${id(artistId)}`, changes),
      delete: (artistId) => call('DELETE', `/api/v1/artists/${id(artistId)}`),
      history: (artistId, params) => call('GET', `/api/v1/artists/${id(artistId)}/history${query(params)}`),
    },
    albums: {
      list: (artistId, params) => call('GET', `/api/v1/artists/${id(artistId)}/albums${query(params)}`),
      get: (artistId, albumId) => call('GET', `/api/v1/artists/${id(artistId)}/albums/${id(albumId)}`),
      create: (artistId, album, createOptions) =>
        call('POST', `/api/v1/artists/${id(artistId)}/albums`, album, keyed(createOptions)),
      update: (artistId, albumId, album) => call('PUT', `/api/v1/artists/${id(artistId)}/albums/${id(albumId)}`, album),
      patch: (artistId, albumId, changes) =>
        call('PATCH', `/api/v1/artists/${id(artistId)}/albums/${id(albumId)}`, changes),
      delete: (artistId, albumId) => call('DELETE', `/api/v1/artists/${id(artistId)}/albums/${id(albumId)}`),
    },
    user: {
      signup: (user, postOptions) => call('POST', '/api/v1/user/signup', user, keyed(postOptions)),
      login: (credentials, postOptions) => call('POST', '/api/v1/user/login', credentials, keyed(postOptions)),
      me: () => call('GET', '/api/v1/user/me'),
      logout: (postOptions) => call('POST', '/api/v1/user/logout', undefined, keyed(postOptions)),
      apiKeys: {
        create: (key, postOptions) => call('POST', '/api/v1/user/api-keys', key, keyed(postOptions)),
        list: (params) => call('GET', `/api/v1/user/api-keys${query(params)}`),
        get: (keyId) => call('GET', `/api/v1/user/api-keys/${id(keyId)}`),
        revoke: (keyId) => call('DELETE', `/api/v1/user/api-keys/${id(keyId)}`),
      },
    },
  }
}
