/**
 * The in-process service under Node answers as the executable does: one scenario of requests (contract-scenario.ts,
 * every operation of `/openapi.json` and the fixture controls) sent to the compiled executable over HTTP
 * (`--data :memory: --seed --fixtures --api-key K`) and, in order, to the npm package's bundle under Node
 * (`createService({ seed: true, fixtures: true, apiKeys: [K] })`'s `fetch`). Each pair of answers must agree: the
 * status, the headers that matter and the body, once what differs by nature (times, secrets, hashes of times) is
 * reduced to its shape. Every answer of the bundle is also checked against the OpenAPI document the service serves.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { buildNodeService } from '../../scripts/node-bundle.ts'
import { type RunningBinary, startBinary } from '../support/binary.ts'
import { expectDocumented } from '../support/openapi.ts'
import { type Recorded, runScenario, SCENARIO, SERVICE_KEY } from './contract-scenario.ts'

const WORK = resolve(import.meta.dir, '../.work')
/** The origin of the in-process service's own requests. */
const IN_PROCESS = 'http://rock-legends.test'

/**
 * What differs between the two by design, and is therefore left out of the comparison or reduced to its shape:
 * - Compression: the executable compresses for a client that accepts it (Bun's `fetch` does); the in-process service
 *   never does, since no client decodes a `Response` handed back in-process. So `content-encoding` and the length
 *   are not compared, the bodies are compared decoded, and the coding an entity tag names for a compressed
 *   representation (`"…-zstd"`) is left out of it.
 * - The transport's own request headers (`host`, `user-agent`, `accept`, `accept-encoding`, `connection`,
 *   `content-length`): an HTTP client adds them, an in-process `Request` has only what the caller set. The request
 *   journal records them, and a namespace's `bytes` (which weighs its journal) counts them.
 * - The origin: the executable's is `http://127.0.0.1:<port>`, the in-process service's `http://rock-legends.test`;
 *   `/openapi.json` names it in `servers`.
 * - The parser's message in a `malformed-json` problem's `detail`: JavaScriptCore's on Bun, V8's on Node.
 * - Times, durations, secrets drawn at random (tokens, keys and their prefixes), the prefix of event ids drawn at each
 *   start, and the entity tags that hash the origin or a time (see {@link TAGS_DIFFER}): their shape is compared.
 * - Not sent, since they differ by design: an HTTP client's own behaviour (Bun's `fetch` collapses `//` in a path and
 *   repeats a GET whose reused connection closed unanswered: the steps that would meet either are sent `verbatim`); the
 *   brakes (failed logins, sign-ups, event streams), which count by the client's address, and in-process there is
 *   none; `/docs` where the project has not installed Scalar's page (here the repository has it, and both answer it
 *   alike), which in-process is a 404 naming `/openapi.json`.
 */
const TRANSPORT_HEADERS = new Set(['host', 'user-agent', 'accept', 'accept-encoding', 'connection', 'content-length'])

/** The answer headers compared: exactly, but for `etag` (see {@link tagOf}). */
const COMPARED_HEADERS = [
  'content-type',
  'location',
  'allow',
  'cache-control',
  'vary',
  'link',
  'retry-after',
  'idempotent-replayed',
  'www-authenticate',
  'deprecation',
  'accept-patch',
  'x-accel-buffering',
  'etag',
]

/** An ISO 8601 time, as the service writes them. */
const TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/

/** Fields whose values are secrets drawn at random. */
const SECRETS = new Set(['token', 'key', 'prefix'])

/** The paths whose entity tags hash the origin (`/openapi.json`) or times (an artist's history). */
const TAGS_DIFFER = /^\/openapi\.json$|^\/api\/v1\/artists\/\d+\/history/

/**
 * The tag compared: without the coding of a compressed representation (`"x-zstd"` → `"x"`); its form alone (weak or
 * strong, its length) on the paths of {@link TAGS_DIFFER}.
 */
function tagOf(tag: string, path: string) {
  const plain = tag.replace(/-(zstd|br|gzip|deflate)"$/, '"')
  return TAGS_DIFFER.test(path) ? plain.replace(/"([^"]*)"/, (_, inner: string) => `"<${inner.length}>"`) : plain
}

function normalised(value: unknown, origin: string, key = ''): unknown {
  if (typeof value === 'string') {
    if (TIME.test(value)) return '<time>'
    if (SECRETS.has(key) && /^rl_/.test(value)) return `<secret ${value.slice(0, 7)}>`
    return value.replaceAll(origin, '<origin>')
  }
  if (typeof value === 'number' && (key === 'duration_ms' || key === 'bytes')) return `<${key}>`
  if (Array.isArray(value)) return value.map((item) => normalised(item, origin, key))
  if (value && typeof value === 'object') {
    let entries = Object.entries(value)
    // A journal entry's request headers: only those the scenario sent.
    if (key === 'headers') entries = entries.filter(([name]) => !TRANSPORT_HEADERS.has(name))
    const object = Object.fromEntries(entries.map(([name, item]) => [name, normalised(item, origin, name)]))
    if (object.type === '/problems/malformed-json' && typeof object.detail === 'string')
      object.detail = object.detail.replace(/: .*$/s, ": <the parser's message>")
    return object
  }
  return value
}

/** An event stream's text: the ids drawn at each start (`086143aa-3`) as their shape. */
const eventText = (text: string) => text.replace(/^id: [0-9a-f]+-(\d+)$/gm, 'id: <start>-$1')

/** What is compared of one answer from the service at `origin`. */
function comparable(answer: Recorded, origin: string) {
  const headers: Record<string, string> = {}
  for (const name of COMPARED_HEADERS) {
    const value = answer.headers[name]
    if (value !== undefined) headers[name] = name === 'etag' ? tagOf(value, answer.path) : value
  }
  const type = answer.headers['content-type'] ?? ''
  const body = /json/.test(type) && answer.text ? normalised(JSON.parse(answer.text), origin) : eventText(answer.text)
  return { request: `${answer.method} ${answer.path}`, status: answer.status, headers, body }
}

/**
 * Sends `request` to the executable over a connection of its own, as written (`Connection: close`, no compression
 * asked), and reads the answer to the end. Rejects when the connection closes with no answer. Only for answers
 * without a chunked body: those the steps marked `verbatim` get.
 */
async function verbatim(request: Request, url: string): Promise<Response> {
  const { hostname, port } = new URL(url)
  const { pathname, search } = new URL(request.url)
  const body = request.body ? await request.text() : ''
  const head = [`${request.method} ${pathname}${search} HTTP/1.1`, `host: ${hostname}:${port}`, 'connection: close']
  for (const [name, value] of request.headers) head.push(`${name}: ${value}`)
  if (body) head.push(`content-length: ${Buffer.byteLength(body)}`)
  const received = await new Promise<Buffer>((done, failed) => {
    const chunks: Buffer[] = []
    Bun.connect({
      hostname,
      port: Number(port),
      socket: {
        open: (socket) => void socket.write(`${head.join('\r\n')}\r\n\r\n${body}`),
        data: (_, chunk) => void chunks.push(Buffer.from(chunk)),
        close: () => done(Buffer.concat(chunks)),
        error: (_, error) => failed(error),
      },
    }).catch(failed)
  })
  if (received.length === 0) throw new Error('the connection closed with no answer')
  const text = received.toString('latin1')
  const end = text.indexOf('\r\n\r\n')
  const [statusLine = '', ...lines] = text.slice(0, end).split('\r\n')
  const headers = new Headers(
    lines.map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 1).trim()]),
  )
  if (headers.get('transfer-encoding')) throw new Error('a chunked answer: not for a verbatim step')
  const status = Number(statusLine.split(' ')[1])
  const nullBody = status === 204 || status === 304 || request.method === 'HEAD'
  return new Response(nullBody ? null : received.subarray(end + 4), { status, headers })
}

let dir: string
let binary: RunningBinary
let overHttp: Recorded[]
let inProcess: Recorded[]

/** Runs the scenario through the bundle under Node; the answers it wrote. */
async function runUnderNode(): Promise<Recorded[]> {
  const entry = join(dir, 'contract-entry.ts')
  writeFileSync(
    entry,
    `import bundle from './service.cjs'
import { runScenario, SCENARIO, SERVICE_KEY } from ${JSON.stringify(join(import.meta.dir, 'contract-scenario.ts'))}
const service = await bundle.createService({ seed: true, fixtures: true, apiKeys: [SERVICE_KEY] })
const answers = await runScenario(SCENARIO, (request) => service.fetch(request), service.url)
await service.close()
process.stdout.write(JSON.stringify(answers))
`,
  )
  const built = await Bun.build({
    entrypoints: [entry],
    outdir: dir,
    naming: 'contract-run.mjs',
    target: 'node',
    format: 'esm',
    external: ['./service.cjs'],
  })
  if (!built.success) throw new AggregateError(built.logs, 'the scenario did not bundle for Node')
  const child = Bun.spawn(['node', join(dir, 'contract-run.mjs')], { cwd: dir, stdout: 'pipe', stderr: 'pipe' })
  const [stdout, stderr, code] = await Promise.all([
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
    child.exited,
  ])
  if (code !== 0) throw new Error(`node exited with ${code}: ${stderr}`)
  return JSON.parse(stdout)
}

beforeAll(async () => {
  mkdirSync(WORK, { recursive: true })
  dir = mkdtempSync(join(WORK, 'contract-'))
  const [running] = await Promise.all([
    startBinary([
      '--port',
      '0',
      '--data',
      ':memory:',
      '--seed',
      '--fixtures',
      '--api-key',
      SERVICE_KEY,
      '--log',
      'off',
    ]),
    buildNodeService(dir),
  ])
  binary = running
  ;[overHttp, inProcess] = await Promise.all([
    runScenario(
      SCENARIO,
      (request, step) => (step.verbatim ? verbatim(request, binary.url) : fetch(request)),
      binary.url,
    ),
    runUnderNode(),
  ])
}, 120_000)

afterAll(async () => {
  await binary?.stop()
  if (dir) rmSync(dir, { recursive: true, force: true })
})

describe('the in-process service under Node against the executable', () => {
  test('the scenario covers every operation of the OpenAPI document', async () => {
    const document = JSON.parse(inProcess.find((answer) => answer.path === '/openapi.json')?.text ?? '{}')
    const operations = Object.entries(document.paths as Record<string, Record<string, { operationId: string }>>)
    const missing: string[] = []
    for (const [template, methods] of operations) {
      const pattern = new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/?]+')}(\\?|$)`)
      for (const [method, operation] of Object.entries(methods)) {
        if (!operation.operationId) continue
        const sent = inProcess.some((answer) => answer.method === method.toUpperCase() && pattern.test(answer.path))
        if (!sent) missing.push(operation.operationId)
      }
    }
    expect(missing).toEqual([])
  })

  test('the same requests get the same answers', () => {
    expect([inProcess.length, overHttp.length]).toEqual([SCENARIO.length, SCENARIO.length])
    expect(inProcess.map((answer) => comparable(answer, IN_PROCESS))).toEqual(
      overHttp.map((answer) => comparable(answer, binary.url)),
    )
  })

  test("every answer in-process is one the service's OpenAPI document allows", async () => {
    const document = JSON.parse(inProcess.find((answer) => answer.path === '/openapi.json')?.text ?? '{}')
    let checked = 0
    const undocumented: string[] = []
    for (const answer of inProcess) {
      // A fault's answer is the one the test armed, not the route's: its problem type is no route's.
      if (answer.status === 'dropped' || answer.text.includes('"/problems/injected-fault"')) continue
      checked++
      await expectDocumented(
        {
          method: answer.method,
          path: answer.path,
          status: answer.status,
          headers: new Headers(answer.headers),
          text: answer.text,
        },
        document,
      ).catch((error: Error) => undocumented.push(error.message.split('\n', 1)[0] as string))
    }
    expect([...new Set(undocumented)]).toEqual([])
    expect(checked).toBeGreaterThan(SCENARIO.length - 5)
  })
})
