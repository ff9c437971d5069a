import { afterEach, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Server } from 'bun'
import {
  commandSucceeds,
  ensureBinary,
  type RunningBinary,
  removeDir,
  runBinary,
  startBinary,
  tempDir,
} from '../support/binary.ts'

// `rock-legends users` over a data file whose lock is stale: the server that wrote it is gone, and whatever now
// listens at the address it recorded is not that server. The command must decide whether a server owns the file by
// asking the kernel whether the lock is held, never by whether the pid it names is running (a pid is reused; in a
// container the command itself is pid 1, like the server was), and must send nothing (a new password, an operator
// key) to the address of a lock nobody holds: it makes the change in the file itself, and says so.

const OPERATOR_KEY = 'operator-key-never-to-leave'
const canUnsharePid = commandSucceeds(['unshare', '--pid', '--fork', 'true'])

/** Runs `rock-legends users …args` to completion, with `stdin` piped in, under `wrapper` if given. */
const users = (args: string[], options: { stdin?: string; wrapper?: string[] } = {}) =>
  runBinary(['users', ...args], options)

/** Whatever now listens on the port a dead server had: it answers everything like that server would, and records it. */
function impostor() {
  const seen: { method: string; path: string; key: string | null; body: string }[] = []
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(request) {
      seen.push({
        method: request.method,
        path: new URL(request.url).pathname,
        key: request.headers.get('x-api-key'),
        body: await request.text(),
      })
      const user = { id: 1, name: 'Ana', email: 'ana@rock-legends.com', created_at: '2024-01-01T00:00:00.000Z' }
      if (request.method === 'GET') return Response.json({ data: [user], meta: { total: 1 } })
      return Response.json({ user, revoked_tokens: 0, changed: true })
    },
  })
  return { server, seen, url: `http://127.0.0.1:${server.port}` }
}

async function logIn(url: string, password: string) {
  const response = await fetch(`${url}/api/v1/user/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'ana@rock-legends.com', password }),
  })
  return response.status
}

let dir: string
let file: string
let fake: ReturnType<typeof impostor>
const running: RunningBinary[] = []
const servers: Server<unknown>[] = []

beforeAll(() => ensureBinary(), 120_000)
beforeEach(async () => {
  dir = tempDir('rock-legends-users-lock-')
  file = join(dir, 'db.json')
  fake = impostor()
  servers.push(fake.server)
  const added = await users(
    ['add', '--email', 'ana@rock-legends.com', '--name', 'Ana', '--data', file, '--password-stdin'],
    {
      stdin: 'old-password-1\n',
    },
  )
  expect(added.code).toBe(0)
})
afterEach(async () => {
  for (const server of running.splice(0)) await server.stop('SIGKILL')
  for (const server of servers.splice(0)) server.stop(true)
  removeDir(dir)
})

/** Resets Ana's password with the operator's key given, and checks it went into the file, not to the impostor. */
async function resetAndCheck(wrapper: string[] = []) {
  const reset = await users(
    ['reset-password', 'ana@rock-legends.com', '--data', file, '--password-stdin', '--api-key', OPERATOR_KEY],
    { stdin: 'brand-new-password\n', wrapper },
  )
  const list = await users(['list', '--data', file, '--json'], { wrapper })
  expect(fake.seen).toEqual([])
  expect(reset.code).toBe(0)
  expect(reset.stderr).toContain(`reset-password in ${file} (no server owns it)`)
  expect(list.code).toBe(0)
  expect(JSON.parse(list.stdout)).toMatchObject({ total: 1, data: [{ email: 'ana@rock-legends.com' }] })
  const server = await startBinary(['--port', '0', '--data', file, '--log', 'off'])
  running.push(server)
  expect(await logIn(server.url, 'brand-new-password')).toBe(200)
  expect(await logIn(server.url, 'old-password-1')).toBe(401)
}

describe('rock-legends users over a stale lock whose address now answers someone else', () => {
  test('the lock names a process that is gone: nothing is sent there, the change is stored in the file', async () => {
    writeFileSync(`${file}.lock`, `${Bun.spawnSync(['true']).pid}\nurl=${fake.url}\nkey=stale-key\n`, { mode: 0o600 })
    await resetAndCheck()
  })

  test('the lock names a pid now given to another process (not a server): nothing is sent there', async () => {
    // This test's own process runs, and holds no lock: a reused pid.
    writeFileSync(`${file}.lock`, `${process.pid}\nurl=${fake.url}\nkey=stale-key\n`, { mode: 0o600 })
    await resetAndCheck()
  })

  test.skipIf(!canUnsharePid)(
    'in a container (the command is pid 1, as the dead server was): nothing is sent there (needs unshare)',
    async () => {
      writeFileSync(`${file}.lock`, `1\nurl=${fake.url}\nkey=stale-key\n`, { mode: 0o600 })
      await resetAndCheck(['unshare', '--pid', '--fork'])
    },
  )

  test('a server holds the lock but its text names a dead process and another address: refused, nothing sent, the file untouched', async () => {
    const server = await startBinary(['--port', '0', '--data', file, '--log', 'off'])
    running.push(server)
    // The text is not what says who holds the lock (the kernel does), so it cannot be trusted to say where that is.
    writeFileSync(`${file}.lock`, `${Bun.spawnSync(['true']).pid}\nurl=${fake.url}\nkey=stale-key\n`)
    const before = readFileSync(file, 'utf8')
    const reset = await users(['reset-password', 'ana@rock-legends.com', '--data', file, '--password-stdin'], {
      stdin: 'brand-new-password\n',
    })
    expect(fake.seen).toEqual([])
    expect(reset.code).toBe(1)
    expect(reset.stderr).toContain('is locked by a running process')
    expect(reset.stderr).toContain('give --url and --api-key')
    expect(readFileSync(file, 'utf8')).toBe(before)
    expect(await logIn(server.url, 'old-password-1')).toBe(200)
  })
})
