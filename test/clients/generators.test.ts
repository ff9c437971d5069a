/**
 * Clients generated the way other teams generate them: by @hey-api/openapi-ts (an SDK) and by openapi-typescript
 * (types for openapi-fetch), each from the published document (test/contract/argentine-rock-legends.openapi.json)
 * and from `/openapi.json` fetched from a running server. The same consumer code (./consumers.ts) must compile with
 * `tsc` against both, and, compiled to JavaScript, run with Node against the server: the hey-api client with no base
 * URL configured, since the document it was generated from names the server's origin.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { createClient as generateSdk } from '@hey-api/openapi-ts'
import openapiTS, { astToString } from 'openapi-typescript'
import { type RunningServer, startServer } from '../../src/server.ts'
import { heyApiConsumer, type NoBodySeen, noBodyConsumer, openapiFetchConsumer, type Seen } from './consumers.ts'

const KEY = 'clients-test-key'
const ROOT = join(import.meta.dir, '..', '..')
const PUBLISHED = join(ROOT, 'test', 'contract', 'argentine-rock-legends.openapi.json')
const TSC = join(ROOT, 'node_modules', 'typescript', 'lib', 'tsc.js')
const NODE = Bun.which('node')
// Each run starts Node and calls the server a few times: seconds on a loaded machine.
const RUN_TIMEOUT = 30_000

// Compiled for Node as a project of another team would be: CommonJS (no "type": "module" beside it), strict.
const tsconfig = (files: string[]) => ({
  compilerOptions: {
    strict: true,
    target: 'es2022',
    lib: ['es2022', 'dom', 'dom.iterable'],
    module: 'nodenext',
    moduleResolution: 'nodenext',
    skipLibCheck: true,
    types: [],
    rootDir: '.',
    outDir: 'out',
  },
  files,
})

/** The consumers, by where they are written: each beside the client it imports. */
const consumers = {
  'published/hey/consumer.ts': heyApiConsumer,
  'served/hey/consumer.ts': heyApiConsumer,
  'served/hey/no-body.ts': noBodyConsumer,
  'published/fetch/consumer.ts': openapiFetchConsumer,
  'served/fetch/consumer.ts': openapiFetchConsumer,
}

let work: string
let server: RunningServer
let compiled: { exitCode: number; output: string }

async function run(command: string[], cwd: string): Promise<{ exitCode: number; output: string }> {
  const child = Bun.spawn(command, { cwd, stdout: 'pipe', stderr: 'pipe', stdin: 'ignore' })
  const [stdout, stderr, exitCode] = await Promise.all([
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
    child.exited,
  ])
  return { exitCode, output: stdout + stderr }
}

/** Runs a compiled consumer with Node and returns what it printed, parsed. */
async function runConsumer<T>(file: string, ...args: string[]): Promise<T> {
  const { exitCode, output } = await run([NODE as string, join('out', file.replace(/\.ts$/, '.js')), ...args], work)
  if (exitCode !== 0) throw new Error(`node ${file} failed (${exitCode}):\n${output}`)
  return JSON.parse(output) as T
}

const get = async (path: string) => (await fetch(`${server.url}${path}`)).json()

beforeAll(async () => {
  if (!NODE) throw new Error('These tests run the generated clients with Node: install node (20 or later).')
  work = await mkdtemp(join(tmpdir(), 'rock-legends-clients-'))
  await symlink(join(ROOT, 'node_modules'), join(work, 'node_modules'), 'dir')
  server = await startServer({ seed: true, apiKeys: [KEY] })
  const served = `${server.url}/openapi.json`
  const sdk = (input: string, output: string) =>
    generateSdk({ input, output: join(work, output), logs: { level: 'silent' } } as Parameters<typeof generateSdk>[0])
  const types = async (input: URL, output: string) => {
    await mkdir(dirname(join(work, output)), { recursive: true })
    await writeFile(join(work, output), astToString(await openapiTS(input)))
  }
  await Promise.all([
    sdk(PUBLISHED, 'published/hey/client'),
    sdk(served, 'served/hey/client'),
    types(Bun.pathToFileURL(PUBLISHED), 'published/fetch/schema.ts'),
    types(new URL(served), 'served/fetch/schema.ts'),
  ])
  for (const [file, source] of Object.entries(consumers)) await writeFile(join(work, file), source)
  await writeFile(join(work, 'tsconfig.json'), JSON.stringify(tsconfig(Object.keys(consumers))))
  // One program for all: the errors name their files. JavaScript is written even where types fail.
  compiled = await run([NODE, TSC, '-p', '.'], work)
}, 180_000)

afterAll(async () => {
  await server?.stop()
  if (work) await rm(work, { recursive: true, force: true })
})

describe('clients generated from the published document and from /openapi.json', () => {
  test.each(Object.keys(consumers))('%s compiles with tsc, unchanged', (file) => {
    const errors = compiled.output.split('\n').filter((line) => line.startsWith(file))
    expect(errors).toEqual([])
  })

  test('tsc compiles everything', () => {
    expect(compiled).toEqual({ exitCode: 0, output: '' })
  })
})

describe('run from Node against the server', () => {
  /** What a consumer should see, read from the server directly before it runs. */
  async function expected(email: string) {
    const page = (await get('/api/v1/artists?limit=2')) as {
      data: { id: number; name: string }[]
      meta: { total: number }
    }
    const first = page.data[0] as { id: number; name: string }
    const albums = (await get(`/api/v1/artists/${first.id}/albums?limit=3`)) as { data: { name: string }[] }
    return {
      total: page.meta.total,
      first: first.name,
      artist: first.name,
      created: { status: 201, id: expect.any(Number), name: 'Pappo' },
      user: { status: 201, email },
      albums: albums.data.map((album) => album.name),
      missing: { status: 404, problem: 404, detail: expect.stringContaining('987654') },
      deleted: { status: 400, problem: 400, detail: expect.stringContaining('deprecated') },
    }
  }

  test(
    'the hey-api client generated from /openapi.json, with no base URL configured',
    async () => {
      const email = 'hey-api@rock-legends.com'
      const before = await expected(email)
      const seen = await runConsumer<Seen>('served/hey/consumer.ts', KEY, email)
      expect(seen).toEqual(before)
      expect(seen.total).toBeGreaterThan(2)
      expect(await get(`/api/v1/artists/${seen.created.id}`)).toMatchObject({ name: 'Pappo', band: 'Riff' })
    },
    RUN_TIMEOUT,
  )

  test(
    'openapi-fetch typed from /openapi.json',
    async () => {
      const email = 'openapi-fetch@rock-legends.com'
      const before = await expected(email)
      const seen = await runConsumer<Seen>('served/fetch/consumer.ts', server.url, KEY, email)
      expect(seen).toEqual(before)
    },
    RUN_TIMEOUT,
  )

  test(
    'operations whose success has no body answer problems the client reads',
    async () => {
      const account = { name: 'No Body', email: 'no-body@rock-legends.com', password: 'i-love-rock' }
      const signUp = await fetch(`${server.url}/api/v1/user/signup`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(account),
      })
      expect(signUp.status).toBe(201)
      const seen = await runConsumer<NoBodySeen>('served/hey/no-body.ts', account.email, account.password)
      expect(seen).toEqual({
        login: 200,
        logout: { status: 204, data: null, error: null },
        again: { status: 401, problem: 401, detail: expect.any(String) },
        revoke: { status: 404, problem: 404, detail: expect.stringContaining('987654') },
      })
    },
    RUN_TIMEOUT,
  )
})
