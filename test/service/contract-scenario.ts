/**
 * A scenario of requests covering what `/openapi.json` describes, and the fixture controls, for the differential
 * contract test (contract.node.test.ts): the same steps are sent to the executable over HTTP and to the in-process
 * service under Node, and the answers compared. Only Web APIs here (Request, Response, streams): the runner is
 * bundled for Node as it is.
 *
 * A step may use values from earlier answers: `{{name.path}}` in its path, header values or body stands for the
 * answer of the step called `name`, walked along `path`: `status`, `headers.<lower-case name>` or `json.<field>…`
 * (array indices as numbers), e.g. `{{login.json.token}}` or `{{charly.headers.etag}}`. `{{key}}` is the service key.
 */

/** One request of the scenario. */
export interface Step {
  /** How later steps refer to its answer. */
  name?: string
  method?: string
  /** Path and query, on the origin of the service under test. */
  path: string
  headers?: Record<string, string>
  /** Sent as JSON (templated after serialising); `raw` sends text as it is. */
  body?: unknown
  raw?: string
  /** An event stream: read up to the end of its `ready` event, then cancelled. */
  stream?: boolean
  /**
   * Sent over HTTP as written, on a connection of its own: Bun's `fetch` sends `//api/…` as `/api/…`, and sends a GET
   * again when a reused connection closes with no answer (a fault's `drop`).
   */
  verbatim?: boolean
}

/** An answer as recorded: what the comparison and the OpenAPI check read. */
export interface Recorded {
  step: number
  name?: string
  method: string
  /** The path and query sent, templates filled. */
  path: string
  /** The headers the step sent, templates filled. */
  sent: Record<string, string>
  /** `dropped` when the connection closed without an answer (a fault's `drop`). */
  status: number | 'dropped'
  headers: Record<string, string>
  text: string
}

/** The service key both services are started with. */
export const SERVICE_KEY = 'contract-service-key-0123456789abcdef'

const NS = 'Rock-Legends-Namespace'
const JSON_TYPE = { 'content-type': 'application/json' }
const MERGE = { 'content-type': 'application/merge-patch+json' }
const KEY = { 'x-api-key': '{{key}}' }
const BEARER = { authorization: 'Bearer {{login.json.token}}' }

const get = (path: string, headers?: Record<string, string>, name?: string): Step => ({ name, path, headers })
const send = (method: string, path: string, body: unknown, headers: Record<string, string> = {}, name?: string) => ({
  name,
  method,
  path,
  body,
  headers: { ...JSON_TYPE, ...headers },
})

const ARTISTS = '/api/v1/artists'
const BILLY = `${ARTISTS}/{{billy.json.id}}`
const ALBUM = `${BILLY}/albums/{{album.json.id}}`

export const SCENARIO: Step[] = [
  // Health, the document, pages that are not the API
  get('/livez'),
  get('/readyz'),
  get('/healthz'),
  get('/openapi.json', {}, 'document'),
  get('/openapi.json', { 'if-none-match': '{{document.headers.etag}}' }),
  get('/openapi.json', { accept: 'text/html' }),
  get('/problems/validation-error'),
  get('/docs'),
  get('/artists/2'),
  get('/covers/artists/1.svg', {}, 'cover'),
  get('/covers/artists/1.svg', { 'if-none-match': '{{cover.headers.etag}}' }),
  get('/covers/artists/999999.svg'),

  // Artists: pages, search, order, filters, their problems
  get(ARTISTS),
  get(`${ARTISTS}?limit=5&offset=10`),
  get(`${ARTISTS}?limit=2&offset=30`),
  get(`${ARTISTS}?limit=1000`),
  get(`${ARTISTS}?q=garcia`),
  get(`${ARTISTS}?q=gustavo&sort=name&limit=1`),
  get(`${ARTISTS}?sort=-name&limit=3`),
  get(`${ARTISTS}?limit=1&_=1732870000000&utm_source=newsletter`),
  get(`${ARTISTS}?sort=popularity`),
  get(`${ARTISTS}?limit=abc`),
  get(`${ARTISTS}?limit=10&limit=20`),
  get(`${ARTISTS}?limit=3`, {}, 'page'),
  get(`${ARTISTS}?limit=3`, { 'if-none-match': '{{page.headers.etag}}' }),
  get(`${ARTISTS}?limit=3`, { 'if-match': '{{page.headers.etag}}' }),
  get(`${ARTISTS}?limit=3`, { 'if-match': '*' }),
  get(ARTISTS, { accept: 'application/xml' }),
  { method: 'HEAD', path: `${ARTISTS}?limit=2` },
  { method: 'OPTIONS', path: ARTISTS },
  { method: 'DELETE', path: ARTISTS, headers: KEY },
  { path: '//api/v1/artists?limit=1', verbatim: true },
  get('/api/v1/nothing-here'),

  // One artist, its history, its albums
  get(`${ARTISTS}/2`, {}, 'charly'),
  get(`${ARTISTS}/2`, { 'if-none-match': '{{charly.headers.etag}}' }),
  get(`${ARTISTS}/2`, { 'if-match': '"not-the-version"' }),
  get(`${ARTISTS}/999`),
  get(`${ARTISTS}/abc`),
  get(`${ARTISTS}/0`),
  { method: 'OPTIONS', path: `${ARTISTS}/2` },
  get(`${ARTISTS}/1/history`),
  get(`${ARTISTS}/2/albums`, {}, 'charlyAlbums'),
  get(`${ARTISTS}/2/albums?kind=live`),
  get(`${ARTISTS}/2/albums?kind=bogus`),
  get(`${ARTISTS}/1/albums?year_from=1970&year_to=1979&sort=year`),
  get(`${ARTISTS}/1/albums?year_from=nineteen`),
  get(`${ARTISTS}/999/albums`),
  get(`${ARTISTS}/2/albums/{{charlyAlbums.json.data.0.id}}`, {}, 'charlyAlbum'),
  get(`${ARTISTS}/2/albums/{{charlyAlbums.json.data.0.id}}`, { 'if-none-match': '{{charlyAlbum.headers.etag}}' }),
  get(`${ARTISTS}/1/albums/{{charlyAlbums.json.data.0.id}}`),

  // Writing artists: credentials, media types, validation, conditions, idempotency
  send('POST', ARTISTS, { name: 'Billy Bond' }),
  send('POST', ARTISTS, { name: 'Billy Bond' }, { 'x-api-key': 'not-a-key' }),
  { method: 'POST', path: ARTISTS, headers: { ...KEY, 'content-type': 'text/plain' }, raw: 'Billy Bond' },
  { method: 'POST', path: ARTISTS, headers: { ...KEY, ...JSON_TYPE }, raw: '{"name":' },
  send('POST', ARTISTS, {}, KEY),
  send('POST', ARTISTS, { name: 'Billy Bond', genre: 'rock' }, KEY),
  send('POST', ARTISTS, { name: 'Billy Bond' }, { ...KEY, 'if-match': '{{page.headers.etag}}' }),
  send(
    'POST',
    ARTISTS,
    { name: 'Billy Bond', band: 'La Pesada del Rock and Roll', description: 'Singer and producer.' },
    KEY,
    'billy',
  ),
  send('POST', ARTISTS, { name: 'Tanguito' }, { ...KEY, 'idempotency-key': 'contract-create-tanguito' }),
  send('POST', ARTISTS, { name: 'Tanguito' }, { ...KEY, 'idempotency-key': 'contract-create-tanguito' }),
  send('POST', ARTISTS, { name: 'Moris' }, { ...KEY, 'idempotency-key': 'contract-create-tanguito' }),
  send('POST', ARTISTS, { name: 'Moris' }, { ...KEY, 'idempotency-key': 'x'.repeat(256) }),
  get(BILLY, {}, 'billyRead'),
  send('PUT', BILLY, { name: 'Billy Bond', band: 'La Pesada' }, { ...KEY, 'if-match': '{{billyRead.headers.etag}}' }),
  send('PUT', BILLY, { name: 'Billy Bond' }, { ...KEY, 'if-match': '{{billyRead.headers.etag}}' }),
  send('PUT', BILLY, { name: 'Billy Bond' }, { ...KEY, 'if-none-match': '*' }),
  send('PUT', BILLY, { id: 1, name: 'Billy Bond' }, KEY),
  send('PUT', `${ARTISTS}/999`, { name: 'Nobody' }, KEY),
  send('PATCH', BILLY, { description: 'Singer and producer.' }, { ...KEY, ...MERGE }),
  send('PATCH', BILLY, { description: null }, { ...KEY, ...MERGE }, 'billyPatched'),
  send('PATCH', BILLY, { name: null }, { ...KEY, ...MERGE }),
  send('PATCH', BILLY, [{ op: 'remove', path: '/band' }], { ...KEY, 'content-type': 'application/json-patch+json' }),
  { method: 'DELETE', path: BILLY, headers: KEY },
  { method: 'DELETE', path: BILLY },

  // Albums: add, conditions on the artist, replace, patch, delete
  send('POST', `${BILLY}/albums`, { name: 'Billy Bond y La Pesada del Rock and Roll', year: 1971 }, KEY, 'album'),
  send('POST', `${BILLY}/albums`, { name: 'Too early', year: 1800 }, KEY),
  send(
    'POST',
    `${BILLY}/albums`,
    { name: 'Tontos (Operita)', year: 1972, kind: 'live' },
    { ...KEY, 'if-match': '{{billyPatched.headers.etag}}' },
  ),
  send('POST', `${BILLY}/albums`, { name: 'Stale' }, { ...KEY, 'if-match': '{{billyRead.headers.etag}}' }),
  send('POST', `${ARTISTS}/999/albums`, { name: 'Nowhere' }, KEY),
  send('POST', `${BILLY}/albums`, { name: 'Volumen 3', year: 1971 }, { ...KEY, 'idempotency-key': 'contract-album' }),
  send('POST', `${BILLY}/albums`, { name: 'Volumen 3', year: 1971 }, { ...KEY, 'idempotency-key': 'contract-album' }),
  get(`${BILLY}/albums?kind=live`),
  send('PUT', ALBUM, { name: 'Billy Bond y La Pesada', year: 1971, kind: 'studio' }, KEY),
  send('PATCH', ALBUM, { year: null }, { ...KEY, ...MERGE }, 'albumPatched'),
  { method: 'DELETE', path: ALBUM, headers: { ...KEY, 'if-match': '"stale"' } },
  { method: 'DELETE', path: ALBUM, headers: { ...KEY, 'if-match': '{{albumPatched.headers.etag}}' } },
  get(ALBUM),
  get(`${BILLY}/history?limit=4`),

  // Accounts: sign-up, login, /me, bearer tokens, personal keys, logout
  send('POST', '/api/v1/user/signup', { name: 'Nito', email: 'nito@example.com', password: 'almendra-1969' }),
  send('POST', '/api/v1/user/signup', { name: 'Nito', email: 'NITO@example.com', password: 'almendra-1969' }),
  send('POST', '/api/v1/user/signup', { name: 'Nito', email: 'not-an-email', password: 'short' }),
  {
    method: 'POST',
    path: '/api/v1/user/signup',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    raw: 'name=Nito',
  },
  send('POST', '/api/v1/user/login', { email: 'nito@example.com', password: 'wrong-password' }),
  send('POST', '/api/v1/user/login', { email: 'nito@example.com', password: 'almendra-1969' }, {}, 'login'),
  get('/api/v1/user/me'),
  get('/api/v1/user/me', KEY),
  get('/api/v1/user/me', BEARER),
  get('/api/v1/user/me', { ...BEARER, 'if-none-match': '*' }),
  send('POST', ARTISTS, { name: 'Pappo' }, BEARER),
  send('POST', '/api/v1/user/api-keys', { name: 'ci' }, BEARER, 'personal'),
  get('/api/v1/user/api-keys?limit=10', BEARER),
  get('/api/v1/user/api-keys/{{personal.json.id}}', BEARER),
  get('/api/v1/user/api-keys/999', BEARER),
  send('POST', ARTISTS, { name: 'Claudio Gabis', band: 'Manal' }, { 'x-api-key': '{{personal.json.key}}' }),
  send('POST', ARTISTS, { name: 'Javier Martínez', band: 'Manal' }, { authorization: 'Bearer {{personal.json.key}}' }),
  get('/api/v1/user/me', { 'x-api-key': '{{personal.json.key}}' }),
  { method: 'DELETE', path: '/api/v1/user/api-keys/{{personal.json.id}}', headers: BEARER },
  send('POST', ARTISTS, { name: 'Pappo' }, { 'x-api-key': '{{personal.json.key}}' }),
  { method: 'POST', path: '/api/v1/user/logout', headers: BEARER },
  get('/api/v1/user/me', BEARER),
  send(
    'POST',
    '/api/v1/user/login',
    { email: 'nito@example.com', password: 'almendra-1969' },
    { 'idempotency-key': 'contract-login-7f3c9a1e-55b2-4d0e-9c11' },
    'again',
  ),
  send(
    'POST',
    '/api/v1/user/login',
    { email: 'nito@example.com', password: 'almendra-1969' },
    { 'idempotency-key': 'contract-login-7f3c9a1e-55b2-4d0e-9c11' },
  ),
  send(
    'POST',
    '/api/v1/user/login',
    { email: 'nito@example.com', password: 'almendra-1969' },
    { 'idempotency-key': 'too-short' },
  ),

  // Fixture controls: credentials, namespaces, faults, the journal, state in and out, resets
  get('/__admin/requests?limit=2'),
  get('/__admin/requests?limit=2', { authorization: 'Bearer {{again.json.token}}' }),
  get('/__admin/requests?path=/api/v1/user/*&status=201&limit=3', KEY),
  get('/api/v1/artists', { [NS]: 'not a name!' }),
  send('POST', ARTISTS, { name: 'Luis Alberto Spinetta' }, { ...KEY, [NS]: 'worker-1' }),
  get(`${ARTISTS}?sort=-id&limit=2`, { [NS]: 'worker-1' }),
  send(
    'POST',
    '/__admin/faults',
    { method: 'GET', path: '/api/v1/artists/1', status: 503 },
    { ...KEY, [NS]: 'worker-1' },
  ),
  get(`${ARTISTS}/1`, { [NS]: 'worker-1' }),
  get(`${ARTISTS}/1`, { [NS]: 'worker-1' }),
  send('POST', '/__admin/faults', { path: '/api/v1/artists*', status: 429, after: 1 }, { ...KEY, [NS]: 'worker-1' }),
  get(`${ARTISTS}/2`, { [NS]: 'worker-1' }),
  get(`${ARTISTS}/2`, { [NS]: 'worker-1' }),
  send('POST', '/__admin/faults', { path: '/api/v1/artists/3', drop: true }, { ...KEY, [NS]: 'worker-1' }),
  { path: `${ARTISTS}/3`, headers: { [NS]: 'worker-1' }, verbatim: true },
  send(
    'POST',
    '/__admin/faults',
    { method: 'POST', path: '/api/v1/artists', body: { name: 'Fito Páez' }, delay_ms: 20 },
    { ...KEY, [NS]: 'worker-1' },
    'slow',
  ),
  send('POST', ARTISTS, { name: 'Fito Páez' }, { ...KEY, [NS]: 'worker-1' }),
  send('POST', '/__admin/faults', { path: '/api/v1/artists' }, { ...KEY, [NS]: 'worker-1' }),
  get('/__admin/faults', { ...KEY, [NS]: 'worker-1' }),
  { method: 'DELETE', path: '/__admin/faults/{{slow.json.id}}', headers: { ...KEY, [NS]: 'worker-1' } },
  { method: 'DELETE', path: '/__admin/faults/999', headers: { ...KEY, [NS]: 'worker-1' } },
  { method: 'DELETE', path: '/__admin/faults', headers: { ...KEY, [NS]: 'worker-1' } },
  get('/__admin/requests', { ...KEY, [NS]: 'worker-1' }),
  { method: 'DELETE', path: '/__admin/requests', headers: { ...KEY, [NS]: 'worker-1' } },
  get('/__admin/requests', { ...KEY, [NS]: 'worker-1' }),
  get('/__admin/state', { ...KEY, [NS]: 'worker-1' }),
  send(
    'PUT',
    '/__admin/state',
    { artists: [{ name: 'Sui Generis', albums: [{ name: 'Vida', year: 1972 }, { name: 'Confesiones de invierno' }] }] },
    { ...KEY, [NS]: 'worker-2' },
  ),
  send('PUT', '/__admin/state', { artists: [{ band: 'Nameless' }] }, { ...KEY, [NS]: 'worker-2' }),
  get(ARTISTS, { [NS]: 'worker-2' }),
  get('/__admin/namespaces', KEY),
  { method: 'POST', path: '/__admin/reset', headers: { ...KEY, [NS]: 'worker-1' } },
  get(`${ARTISTS}?sort=-id&limit=1`, { [NS]: 'worker-1' }),
  { method: 'DELETE', path: '/__admin/namespaces/worker-2', headers: KEY },
  get('/api/v1/events', {}, undefined),
  { method: 'POST', path: '/__admin/reset', headers: KEY },
  get(`${ARTISTS}?sort=-id&limit=1`),
  get('/api/v1/user/me', { authorization: 'Bearer {{again.json.token}}' }),
]

// The event stream step reads only up to its `ready` event.
for (const step of SCENARIO) if (step.path === '/api/v1/events') step.stream = true

/** The value `{{reference}}` names, from the answers so far. */
function lookUp(reference: string, named: Map<string, { status: number | string; headers: object; json?: unknown }>) {
  if (reference === 'key') return SERVICE_KEY
  const [name = '', ...path] = reference.split('.')
  let value: unknown = named.get(name)
  for (const part of path) value = (value as Record<string, unknown> | undefined)?.[part]
  if (typeof value !== 'string' && typeof value !== 'number')
    throw new Error(`{{${reference}}}: no such value in the answers so far`)
  return String(value)
}

const fill = (text: string, named: Parameters<typeof lookUp>[1]) =>
  text.replace(/\{\{([^}]+)\}\}/g, (_, reference: string) => lookUp(reference, named))

/** Reads an event stream up to the end of its `ready` event (a blank line after it), then cancels it. */
async function untilReady(response: Response): Promise<string> {
  const reader = (response.body as ReadableStream<Uint8Array>).getReader()
  const decoder = new TextDecoder()
  let text = ''
  while (!/event: ready\n[^\n]*\n\n/.test(text)) {
    const { value, done } = await reader.read()
    if (done) break
    text += decoder.decode(value, { stream: true })
  }
  await reader.cancel()
  return text
}

/**
 * Sends each step in order through `fetch`, as a request on `origin`, and records the answers. A request whose
 * answer never comes (the connection closed) is recorded as `dropped`.
 */
export async function runScenario(
  steps: Step[],
  fetch: (request: Request, step: Step) => Promise<Response>,
  origin: string,
): Promise<Recorded[]> {
  const named = new Map<string, { status: number | string; headers: Record<string, string>; json?: unknown }>()
  const recorded: Recorded[] = []
  for (const [index, step] of steps.entries()) {
    const method = step.method ?? (step.body === undefined && step.raw === undefined ? 'GET' : 'POST')
    const path = fill(step.path, named)
    const sent = Object.fromEntries(
      Object.entries(step.headers ?? {}).map(([name, value]) => [name, fill(value, named)]),
    )
    const body = step.raw ?? (step.body === undefined ? undefined : fill(JSON.stringify(step.body), named))
    const request = new Request(origin + path, { method, headers: sent, body, redirect: 'manual' })
    let status: number | 'dropped'
    let headers: Record<string, string> = {}
    let text = ''
    try {
      const response = await fetch(request, step)
      status = response.status
      headers = Object.fromEntries(response.headers)
      text = step.stream ? await untilReady(response) : await response.text()
    } catch {
      status = 'dropped'
      headers = {}
    }
    let json: unknown
    if (/json/.test(headers['content-type'] ?? '') && text !== '') json = JSON.parse(text)
    if (step.name) named.set(step.name, { status, headers, json })
    recorded.push({ step: index, name: step.name, method, path, sent, status, headers, text })
  }
  return recorded
}
