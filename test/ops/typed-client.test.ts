import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { createClient, type RunningServer, startServer } from '../../src/index.ts'
import { removeDir } from '../support/binary.ts'

const KEY = 'client-test-key'
const ROOT = resolve(import.meta.dir, '../..')

let server: RunningServer
beforeAll(async () => {
  server = await startServer({ seed: true, apiKeys: [KEY] })
})
afterAll(() => server.stop())

describe('the typed client', () => {
  test('creates an artist and an album, then reads them back', async () => {
    const api = createClient(server.url, { headers: { 'x-api-key': KEY } })
    const created = await api.api.v1.artists.post({ name: 'Moris', band: 'Los Beatniks' })
    expect(created.status).toBe(201)
    if (created.error) throw new Error(`create failed: ${JSON.stringify(created.error.value)}`)
    expect(created.data).toStrictEqual({ id: 33, name: 'Moris', band: 'Los Beatniks' })
    expect(created.response.headers.get('location')).toBe('/api/v1/artists/33')

    const album = await api.api.v1.artists({ artistId: created.data.id }).albums.post({ name: '30 minutos de vida' })
    expect(album.status).toBe(201)

    const read = await api.api.v1.artists({ artistId: created.data.id }).get()
    expect(read.data).toEqual(created.data)
    const albums = await api.api.v1.artists({ artistId: 33 }).albums.get({ query: { limit: '5' } })
    expect(albums.data?.data.map((each) => each.name)).toEqual(['30 minutos de vida'])
  })

  test('reads a page with a typed query', async () => {
    const api = createClient(server.url)
    const page = await api.api.v1.artists.get({ query: { limit: '2', offset: '1' } })
    expect(page.data?.meta).toMatchObject({ limit: 2, offset: 1, next: '/api/v1/artists?limit=2&offset=3' })
    expect(page.data?.data.map((artist) => artist.id)).toEqual([2, 3])
  })

  test('hands problems back as typed errors', async () => {
    const api = createClient(server.url)
    const anonymous = await api.api.v1.artists.post({ name: 'Nobody' })
    expect(anonymous.data).toBeNull()
    expect(anonymous.error?.status).toBe(401)
    expect(anonymous.error?.value).toMatchObject({ type: '/problems/unauthorized', status: 401 })
    const missing = await api.api.v1.artists({ artistId: 999 }).get()
    expect(missing.error?.status).toBe(404)
  })

  test('keeps dates as the strings the API sends', async () => {
    const api = createClient(server.url)
    const user = { name: 'Carlos', email: 'dates@rock-legends.com', password: 'i-love-rock' }
    expect((await api.api.v1.user.signup.post(user)).status).toBe(201)
    const login = await api.api.v1.user.login.post({ email: user.email, password: user.password })
    expect(typeof login.data?.expires_at).toBe('string')
  })
})

const FIXTURE = join(ROOT, 'test/fixtures/typed-client.ts')
const isDirective = (line: string) => line.trim().startsWith('// @ts-expect-error')

/**
 * Type-checks the fixture with its `@ts-expect-error` lines blanked out, as `bun run typecheck` would check a test
 * file that misused the client; resolves with tsc's exit code and output.
 */
async function typecheckWithoutDirectives() {
  const dir = join(ROOT, 'test/.work', `typed-client-${process.pid}`)
  mkdirSync(dir, { recursive: true })
  try {
    const stripped = readFileSync(FIXTURE, 'utf8')
      .split('\n')
      .map((line) => (isDirective(line) ? '' : line))
      .join('\n')
    writeFileSync(join(dir, 'typed-client.ts'), stripped.replace("'../../src/index.ts'", `'${ROOT}/src/index.ts'`))
    const config = { extends: `${ROOT}/tsconfig.json`, include: [], files: ['typed-client.ts'] }
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify(config))
    const tsc = Bun.spawn(['bun', join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', dir], {
      cwd: ROOT,
      stdout: 'pipe',
      stderr: 'pipe',
    })
    const [output, code] = await Promise.all([new Response(tsc.stdout).text(), tsc.exited])
    return { code, output }
  } finally {
    removeDir(dir)
  }
}

// tsc takes seconds; it runs while the tests above talk to the server.
let typecheck: ReturnType<typeof typecheckWithoutDirectives>
beforeAll(() => {
  typecheck = typecheckWithoutDirectives()
  typecheck.catch(() => {})
})

describe('test/fixtures/typed-client.ts', () => {
  test(
    'fails to type-check without its @ts-expect-error lines, at exactly the lines they guard',
    async () => {
      const guarded = readFileSync(FIXTURE, 'utf8')
        .split('\n')
        .flatMap((line, i) => (isDirective(line) ? [i + 2] : []))
      expect(guarded.length).toBeGreaterThanOrEqual(4)
      const { code, output } = await typecheck
      expect(code).not.toBe(0)
      const lines = [...output.matchAll(/typed-client\.ts\((\d+),\d+\): error TS/g)].map((match) => Number(match[1]))
      expect([...new Set(lines)]).toEqual(guarded)
    },
    // tsc needs about 10 s of CPU: on a 2-core machine shared with the other workers of the run (and whatever else
    // runs there) that can take a minute of wall time.
    { timeout: 120_000 },
  )
})
