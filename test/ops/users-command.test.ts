import { afterEach, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { ensureBinary, type RunningBinary, removeDir, runBinary, startBinary, tempDir } from '../support/binary.ts'
import { skipWithoutPostgres, type TestPostgres, testPostgres } from '../support/postgres.ts'

// `rock-legends users …` as an operator runs it: the compiled executable, over a stopped server's data file (which
// it opens itself), a running server's (which it must not write: it goes through the server), and a database.

const SERVICE_KEY = 'users-test-service-key'

/** Runs `rock-legends users …args` to completion, with `stdin` piped in, in a clean environment plus `env`. */
const users = (args: string[], options: { stdin?: string; env?: Record<string, string> } = {}) =>
  runBinary(['users', ...args], options)

/** Logs in over HTTP; the status, and the token when there is one. */
async function logIn(url: string, email: string, password: string) {
  const response = await fetch(`${url}/api/v1/user/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password }),
  })
  const body = (await response.json()) as { token?: string; type?: string }
  return { status: response.status, token: body.token, type: body.type }
}

const me = async (url: string, token: string) =>
  (await fetch(`${url}/api/v1/user/me`, { headers: { authorization: `Bearer ${token}` } })).status

let dir: string
let file: string
const running: RunningBinary[] = []
const start = async (args: string[]) => {
  const server = await startBinary(['--port', '0', '--log', 'json', ...args])
  running.push(server)
  return server
}

beforeAll(() => ensureBinary(), 120_000)
beforeEach(() => {
  dir = tempDir()
  file = join(dir, 'db.json')
})
afterEach(async () => {
  for (const server of running.splice(0)) await server.stop()
  removeDir(dir)
})

describe('rock-legends users, the server stopped: the data file directly', () => {
  test('add (generated password, printed once), list, disable; a server started then refuses the login', async () => {
    const added = await users(['add', '--email', 'Ana@Rock-Legends.com', '--name', 'Ana', '--data', file, '--json'])
    expect(added.code).toBe(0)
    const { user, password } = JSON.parse(added.stdout)
    expect(user).toMatchObject({ id: 1, name: 'Ana', email: 'ana@rock-legends.com' })
    expect(password).toMatch(/^[A-Za-z0-9]{24}$/)
    expect(readFileSync(file, 'utf8')).not.toContain(password)

    const piped = await users(
      ['add', '--email', 'bo@rock-legends.com', '--name', 'Bo', '--data', file, '--password-stdin'],
      {
        stdin: 'bo-password-1\n',
      },
    )
    expect(piped.code).toBe(0)
    expect(piped.stdout).toContain('added bo@rock-legends.com (account 2, Bo)')
    expect(piped.stdout).not.toContain('password:')
    expect(piped.stderr).toContain(`add in ${file} (no server owns it)`)

    expect((await users(['disable', 'ana@rock-legends.com', '--data', file])).code).toBe(0)
    const again = await users(['disable', 'ANA@rock-legends.com', '--data', file])
    expect(again.code).toBe(0)
    expect(again.stdout).toContain('was already disabled')

    const list = await users(['list', '--data', file])
    expect(list.code).toBe(0)
    const lines = list.stdout.trimEnd().split('\n')
    expect(lines[0]).toMatch(/^ID\s+NAME\s+EMAIL\s+CREATED\s+DISABLED$/)
    expect(lines[1]).toMatch(/^1\s+Ana\s+ana@rock-legends\.com\s+\S+\s+\d{4}-\d\d-\d\dT/)
    expect(lines[2]).toMatch(/^2\s+Bo\s+bo@rock-legends\.com\s+\S+\s+-$/)

    const server = await start(['--data', file])
    expect(await logIn(server.url, 'ana@rock-legends.com', password)).toMatchObject({
      status: 403,
      type: '/problems/account-disabled',
    })
    expect((await logIn(server.url, 'bo@rock-legends.com', 'bo-password-1')).status).toBe(200)
  })

  test('refusals: an unknown email and a taken one exit 1; bad values exit 2, in one line', async () => {
    await users(['add', '--email', 'ana@rock-legends.com', '--name', 'Ana', '--data', file])
    const cases: [string[], number, string][] = [
      [['disable', 'nobody@rock-legends.com'], 1, 'There is no account with the email nobody@rock-legends.com.'],
      [['add', '--email', 'ana@rock-legends.com', '--name', 'A'], 1, 'is already registered'],
      [['add', '--email', 'not-an-email', '--name', 'A'], 2, 'email: must be an email address'],
      [
        ['add', '--email', 'x@rock-legends.com', '--name', 'A', '--password', 'secret123'],
        2,
        'never taken from the command line',
      ],
      [
        ['reset-password', 'ana@rock-legends.com', '--password-stdin'],
        2,
        'password: must be a string of 8–1024 characters',
      ],
      [['frobnicate'], 2, 'users has no command "frobnicate"'],
      [['list', '--limit', '0'], 2, '--limit must be a whole number of at least 1'],
    ]
    for (const [args, code, message] of cases) {
      const outcome = await users([...args, '--data', file], { stdin: 'short\n' })
      expect({ args, code: outcome.code }).toEqual({ args, code })
      const errors = outcome.stderr.trimEnd().split('\n')
      expect(errors.at(-1)).toContain(message)
      expect(errors.at(-1)).toStartWith('rock-legends users: ')
    }
    const memory = await users(['list', '--data', ':memory:'])
    expect(memory.code).toBe(2)
    expect(memory.stderr).toContain('use --url and --api-key')
  })

  test('a stale lock (its process is gone) is taken over; list on a file that does not exist creates nothing', async () => {
    const absent = await users(['list', '--data', file, '--json'])
    expect(absent).toMatchObject({ code: 0 })
    expect(JSON.parse(absent.stdout)).toEqual({ data: [], total: 0 })
    expect(() => statSync(file)).toThrow()
    await users(['add', '--email', 'ana@rock-legends.com', '--name', 'Ana', '--data', file])
    writeFileSync(`${file}.lock`, '2147483646\nurl=http://127.0.0.1:1\nkey=stale\n', { mode: 0o600 })
    const list = await users(['list', '--data', file, '--json'])
    expect(list.code).toBe(0)
    expect(JSON.parse(list.stdout).total).toBe(1)
  })

  test('--help explains which way the command goes', async () => {
    const help = await users(['--help'])
    expect(help.code).toBe(0)
    for (const text of ['--url URL', 'that a running server owns', 'that no server owns', 'postgres://', ':memory:'])
      expect(help.stdout).toContain(text)
  })
})

describe('rock-legends users, the server running: through the server', () => {
  test('the lock names the server and its key: the command goes through it, and never writes the file itself', async () => {
    const server = await start(['--data', file])
    const lock = readFileSync(`${file}.lock`, 'utf8')
    expect(lock).toStartWith(`${server.process.pid}\n`)
    expect(lock).toContain(`url=${server.url}\n`)
    const added = await users(['add', '--email', 'ana@rock-legends.com', '--name', 'Ana', '--data', file, '--json'])
    expect(added.code).toBe(0)
    const { password } = JSON.parse(added.stdout)
    const { token } = await logIn(server.url, 'ana@rock-legends.com', password)
    expect(await me(server.url, token as string)).toBe(200)

    const disabled = await users(['disable', 'ana@rock-legends.com', '--data', file])
    expect(disabled.code).toBe(0)
    expect(disabled.stderr).toContain(
      `through the server at ${server.url}, which owns ${file} (pid ${server.process.pid})`,
    )
    // At once: the server's own token check refuses it from the next request on.
    expect(await me(server.url, token as string)).toBe(401)
    expect((await logIn(server.url, 'ana@rock-legends.com', password)).status).toBe(403)

    const reset = await users(['reset-password', 'ana@rock-legends.com', '--data', file, '--password-stdin'], {
      stdin: 'brand-new-password',
    })
    expect(reset.code).toBe(0)
    expect((await users(['enable', 'ana@rock-legends.com', '--data', file])).code).toBe(0)
    expect((await logIn(server.url, 'ana@rock-legends.com', 'brand-new-password')).status).toBe(200)
    // The lock is still the server's, and the server made every change: its access log shows the calls.
    expect(readFileSync(`${file}.lock`, 'utf8')).toBe(lock)
    await server.stop()
    const log = await server.stderr()
    for (const path of [
      '/__admin/users',
      '/__admin/users/disable',
      '/__admin/users/reset-password',
      '/__admin/users/enable',
    ])
      expect(log).toContain(`"path":"${path}"`)
    expect(log).not.toContain('rl_op_')
  })

  test('a flood of wrong keys from this machine locks out the guesses, not the command', async () => {
    const server = await start(['--data', file, '--api-key', SERVICE_KEY, '--log', 'off'])
    expect((await users(['add', '--email', 'ana@rock-legends.com', '--name', 'Ana', '--data', file])).code).toBe(0)
    // 101 wrong keys from loopback, the address the command comes from too: the brake is on for the whole machine.
    for (let i = 0; i <= 100; i++) {
      const wrong = await fetch(`${server.url}/__admin/users`, { headers: { 'x-api-key': `guess-${i}` } })
      expect(wrong.status).toBe(i < 100 ? 401 : 429)
    }
    // The operator's own service key waits for the window like any guess: it may be weak.
    expect((await fetch(`${server.url}/__admin/users`, { headers: { 'x-api-key': SERVICE_KEY } })).status).toBe(429)
    // The command goes through the server with the key the server made for it, which nobody can guess: it works.
    const listed = await users(['list', '--data', file, '--json'])
    expect({ code: listed.code, stderr: listed.stderr }).toMatchObject({ code: 0 })
    expect(JSON.parse(listed.stdout)).toMatchObject({ data: [{ email: 'ana@rock-legends.com' }] })
    expect((await users(['disable', 'ana@rock-legends.com', '--data', file])).code).toBe(0)
  })

  test('--url with --api-key (or ROCK_LEGENDS_URL and ROCK_LEGENDS_API_KEYS) reaches a server over :memory:', async () => {
    const server = await start(['--data', ':memory:', '--api-key', SERVICE_KEY])
    const added = await users([
      'add',
      '--email',
      'ana@rock-legends.com',
      '--name',
      'Ana',
      '--url',
      server.url,
      '--api-key',
      SERVICE_KEY,
    ])
    expect(added.code).toBe(0)
    const env = { ROCK_LEGENDS_URL: server.url, ROCK_LEGENDS_API_KEYS: `${SERVICE_KEY},other` }
    const list = await users(['list', '--json'], { env })
    expect(list.code).toBe(0)
    expect(JSON.parse(list.stdout).data.map((user: { email: string }) => user.email)).toEqual(['ana@rock-legends.com'])
    const wrong = await users(['list', '--url', server.url, '--api-key', 'not-the-key'])
    expect(wrong.code).toBe(1)
    expect(wrong.stderr).toContain('does not accept this service key')
    const none = await users(['list', '--url', server.url])
    expect(none.code).toBe(2)
    const unreachable = await users(['list', '--url', 'http://127.0.0.1:1', '--api-key', SERVICE_KEY])
    expect(unreachable.code).toBe(1)
    expect(unreachable.stderr).toContain('cannot reach the server at http://127.0.0.1:1')
  })
})

const skipSql = skipWithoutPostgres()
let pg: TestPostgres
beforeAll(async () => {
  if (!skipSql) pg = await testPostgres()
})

describe.skipIf(skipSql)('rock-legends users over PostgreSQL: the database directly', () => {
  // The replicas stopped after their test; its database is emptied for the next test once they have (`emptyDatabase`:
  // the same start as a new copy its replicas migrate, for less of PostgreSQL's work).
  afterEach(async () => {
    for (const server of running.splice(0)) await server.stop()
  })

  test('with replicas running, a change made in the database holds on each at its next request', async () => {
    const database = await pg.emptyDatabase()
    const url = pg.url(database)
    const [a, b] = [await start(['--data', url]), await start(['--data', url])]
    const added = await users(['add', '--email', 'ana@rock-legends.com', '--name', 'Ana', '--data', url, '--json'])
    expect(added.code).toBe(0)
    const { password } = JSON.parse(added.stdout)
    const { token } = await logIn((a as RunningBinary).url, 'ana@rock-legends.com', password)
    expect(await me((b as RunningBinary).url, token as string)).toBe(200)
    const disabled = await users(['disable', 'ana@rock-legends.com', '--data', url])
    expect(disabled.code).toBe(0)
    expect(disabled.stderr).toContain('in the database at')
    expect(disabled.stderr).not.toContain('through the server')
    for (const replica of [a, b]) expect(await me((replica as RunningBinary).url, token as string)).toBe(401)
    expect((await users(['enable', 'ana@rock-legends.com', '--data', url])).code).toBe(0)
    const list = await users(['list', '--data', url, '--json'])
    expect(JSON.parse(list.stdout)).toMatchObject({ total: 1, data: [{ email: 'ana@rock-legends.com' }] })
    expect(await me((a as RunningBinary).url, token as string)).toBe(200)
  })
})
