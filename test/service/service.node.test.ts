/**
 * The in-process service as the npm package ships it to Node: src/service.ts bundled by scripts/node-bundle.ts, loaded
 * by Node (the `node` on the PATH; the release step adds Node 18 and 22) from ES modules and from CommonJS, with no Bun
 * anywhere in the process. The bundle is written into the repository's test/.work/, so that Node finds the package's
 * one dependency left outside it (@node-rs/argon2) in the repository's node_modules, as an install would.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { buildNodeService } from '../../scripts/node-bundle.ts'

const WORK = resolve(import.meta.dir, '../.work')
let dir: string

beforeAll(async () => {
  mkdirSync(WORK, { recursive: true })
  dir = mkdtempSync(join(WORK, 'node-service-'))
  await buildNodeService(dir)
}, 60_000)

afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** Runs `source` (an ES module, or CommonJS when `file` ends in .cjs) under Node; its stdout parsed as JSON. */
async function underNode(file: string, source: string) {
  writeFileSync(join(dir, file), source)
  const child = Bun.spawn(['node', join(dir, file)], { cwd: dir, stdout: 'pipe', stderr: 'pipe' })
  const [stdout, stderr, code] = await Promise.all([
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
    child.exited,
  ])
  expect({ code, stderr }).toEqual({ code: 0, stderr: '' })
  return JSON.parse(stdout)
}

const SCENARIO = `
const service = await createService({ seed: true, fixtures: true, passwords: 'fast-for-tests' })
const json = (body, headers = {}) => ({ method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) })
const out = { bun: typeof Bun !== 'undefined', node: process.version }
const list = await service.fetch(new Request('https://api.example.com/api/v1/artists?limit=2', { headers: { 'accept-encoding': 'gzip, br' } }))
out.list = { status: list.status, encoding: list.headers.get('content-encoding'), body: await list.json() }
const missing = await service.fetch('/api/v1/artists/999')
out.missing = { status: missing.status, type: missing.headers.get('content-type'), body: await missing.json() }
const one = await service.fetch('http://localhost:5173/api/v1/artists/1')
out.tag = one.headers.get('etag')
out.notModified = (await service.fetch('/api/v1/artists/1', { headers: { 'if-none-match': out.tag } })).status
out.unauthorized = (await service.fetch('/api/v1/artists', json({ name: 'Moris' }))).status
const created = await service.fetch('/api/v1/artists', json({ name: 'Moris' }, { 'x-api-key': service.apiKey }))
out.created = { status: created.status, location: created.headers.get('location') }
const user = { name: 'Nito', email: 'nito@example.com', password: 'almendra-1969' }
out.signup = (await service.fetch('/api/v1/user/signup', json(user))).status
const login = await service.fetch('/api/v1/user/login', json({ email: user.email, password: user.password }))
out.login = { status: login.status, token: typeof (await login.json()).token }
out.wrongPassword = (await service.fetch('/api/v1/user/login', json({ email: user.email, password: 'nope-nope-nope' }))).status
const ns = service.namespace('worker-1')
out.namespaceCreate = (await ns.fetch('/api/v1/artists', json({ name: 'Pappo' }, { 'x-api-key': service.apiKey }))).status
out.namespaceJournal = (await ns.requests()).map((entry) => [entry.method, entry.path, entry.status])
const events = await service.fetch('/api/v1/events')
const reader = events.body.getReader()
let text = ''
while (!text.includes('event: ready')) text += new TextDecoder().decode((await reader.read()).value)
await reader.cancel()
out.events = { type: events.headers.get('content-type'), ready: text.includes('event: ready') }
out.docs = (await service.fetch('/docs')).status
out.page = (await service.fetch('/')).status
await service.reset()
out.afterReset = (await (await service.fetch('/api/v1/artists?limit=1')).json()).meta.total
out.state = (await service.state()).artists.length
await service.close()
console.log(JSON.stringify(out))
`

describe('the in-process service under Node', () => {
  test('from an ES module: the same answers, problems, tags, accounts, namespaces, events and reset', async () => {
    const out = await underNode(
      'scenario.mjs',
      `import bundle from './service.cjs'\nconst { createService } = bundle\n${SCENARIO}`,
    )
    expect(out.bun).toBe(false)
    expect(out.list).toMatchObject({
      status: 200,
      encoding: null,
      body: { meta: { limit: 2, offset: 0, total: 32, next: '/api/v1/artists?limit=2&offset=2' } },
    })
    expect(out.list.body.data[0].name).toBe('Luis Alberto Spinetta')
    expect(out.missing).toEqual({
      status: 404,
      type: 'application/problem+json',
      body: { type: '/problems/not-found', title: 'Not found', status: 404, detail: 'There is no artist 999.' },
    })
    expect(out.tag).toMatch(/^"[A-Za-z0-9_-]{22}"$/)
    expect(out).toMatchObject({
      notModified: 304,
      unauthorized: 401,
      created: { status: 201, location: '/api/v1/artists/33' },
      signup: 201,
      login: { status: 200, token: 'string' },
      wrongPassword: 401,
      namespaceCreate: 201,
      namespaceJournal: [['POST', '/api/v1/artists', 201]],
      events: { type: 'text/event-stream; charset=utf-8', ready: true },
      // Scalar's page bundle is left out of the bundle, and found where the project installed it, as the repository has.
      docs: 200,
      page: 200,
      afterReset: 32,
      state: 32,
    })
  })

  test('from CommonJS, with require', async () => {
    const out = await underNode(
      'scenario.cjs',
      `const { createService } = require('./service.cjs')
createService({ seed: true }).then(async (service) => {
  const response = await service.fetch('/api/v1/artists/2')
  console.log(JSON.stringify({ status: response.status, name: (await response.json()).name }))
})`,
    )
    expect(out).toEqual({ status: 200, name: 'Charly García' })
  })

  // Jest runs each test file in a vm context whose globals are jsdom's window (jest-environment-jsdom), and
  // `require('rock-legends')` evaluates the bundle there: no structuredClone, and a crypto without `subtle`. The
  // context here has what jsdom's has (and Node's fetch classes, which MSW's polyfills for Jest add), and no more.
  test('in a global scope like Jest’s jsdom environment: writes, reads back, resets', async () => {
    const out = await underNode(
      'realm.cjs',
      `const vm = require('node:vm')
const { readFileSync } = require('node:fs')
const nodeCrypto = require('node:crypto')
const file = require.resolve('./service.cjs')
const realm = vm.createContext({
  console, process, Buffer, setTimeout, clearTimeout, setInterval, clearInterval, queueMicrotask, URL, URLSearchParams,
  TextEncoder, TextDecoder, ReadableStream, WritableStream, TransformStream, AbortController, AbortSignal, Event,
  EventTarget, DOMException, Blob, FormData, Headers, Request, Response, fetch, performance, atob, btoa,
  crypto: { getRandomValues: (array) => nodeCrypto.getRandomValues(array), randomUUID: () => nodeCrypto.randomUUID() },
})
const bundle = { exports: {} }
const load = vm.runInContext('(function (exports, require, module, __filename, __dirname) {' + readFileSync(file, 'utf8') + '\\n})', realm, { filename: file })
load(bundle.exports, require, bundle, file, __dirname)
const missing = vm.runInContext('[typeof structuredClone, typeof crypto.subtle]', realm)
bundle.exports.createService({ seed: true, passwords: 'fast-for-tests' }).then(async (service) => {
  const json = (body, headers = {}) => ({ method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) })
  const created = await service.fetch('/api/v1/artists', json({ name: 'Pescado Rabioso' }, { 'x-api-key': service.apiKey }))
  const read = await (await service.fetch(created.headers.get('location'))).json()
  const signup = (await service.fetch('/api/v1/user/signup', json({ name: 'Nito', email: 'nito@example.com', password: 'almendra-1969' }))).status
  await service.reset()
  const total = (await (await service.fetch('/api/v1/artists?limit=1')).json()).meta.total
  await service.close()
  console.log(JSON.stringify({ missing, created: created.status, name: read.name, signup, total }))
})`,
    )
    expect(out).toEqual({
      missing: ['undefined', 'undefined'],
      created: 201,
      name: 'Pescado Rabioso',
      signup: 201,
      total: 32,
    })
  })

  test('the same entity tags as on Bun: they are SHA-256 of the same bytes', async () => {
    const { createService } = await import('../../src/service.ts')
    const service = await createService({ seed: true })
    const onBun = (await service.fetch('/api/v1/artists/1')).headers.get('etag')
    await service.close()
    const out = await underNode(
      'tag.mjs',
      `import bundle from './service.cjs'
const service = await bundle.createService({ seed: true })
console.log(JSON.stringify({ tag: (await service.fetch('/api/v1/artists/1')).headers.get('etag') }))`,
    )
    expect(out.tag).toBe(onBun)
  })
})
