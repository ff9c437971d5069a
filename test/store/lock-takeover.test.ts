import { afterEach, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { type Subprocess, spawn } from 'bun'
import { ensureBinary, type RunningBinary, removeDir, startBinary, tempDir } from '../support/binary.ts'

// Many servers started at once over one data file whose lock is stale: left by a process that is gone (kill -9, a
// power cut), or empty (a crash between creating the lock and writing the pid in it). Exactly one may serve; every
// other must stop with the "in use" error; and every write a server acknowledged must be in the file afterwards. A
// takeover that removes the stale lock and creates its own lets two of them through: each removes the other's.

const KEY = 'lock-takeover-key'
/** Servers started together, and rounds of them per case: the race is a matter of microseconds. */
const STARTS = 8
const ROUNDS = 4
const LOCKED = 'is in use by another rock-legends process'

type Started =
  | { serving: true; url: string; child: Subprocess<'ignore', 'pipe', 'pipe'> }
  | { serving: false; code: number; stderr: string }

/** Waits for the ready line of `child`, or for its exit. */
async function outcome(child: Subprocess<'ignore', 'pipe', 'pipe'>): Promise<Started> {
  const stderr = new Response(child.stderr).text()
  const reader = child.stdout.getReader()
  const decoder = new TextDecoder()
  let stdout = ''
  while (!stdout.includes('\n')) {
    const { value, done } = await reader.read()
    if (done) return { serving: false, code: await child.exited, stderr: await stderr }
    stdout += decoder.decode(value)
  }
  reader.releaseLock()
  const url = /^rock-legends listening on (http:\/\/\S+)$/m.exec(stdout)?.[1]
  if (!url) throw new Error(`unexpected ready line: ${stdout}`)
  return { serving: true, url, child }
}

/** Starts {@link STARTS} executables over `file` at the same moment. */
async function startTogether(file: string): Promise<Started[]> {
  const binary = await ensureBinary()
  const children = Array.from({ length: STARTS }, () =>
    spawn([binary, '--port', '0', '--data', file, '--api-key', KEY, '--log', 'off'], {
      env: { PATH: process.env.PATH ?? '' },
      stdin: 'ignore',
      stdout: 'pipe',
      stderr: 'pipe',
    }),
  )
  return Promise.all(children.map(outcome))
}

const post = (url: string, name: string) =>
  fetch(`${url}/api/v1/artists`, {
    method: 'POST',
    headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
    body: JSON.stringify({ name }),
  })

let dir: string
let file: string
const running: RunningBinary[] = []
beforeAll(() => ensureBinary(), 120_000)
beforeEach(() => {
  dir = tempDir('rock-legends-lock-')
  file = join(dir, 'db.json')
  // The file a server that served over it left beside its lock: without it, the lock would say the file was lost.
  const counters = { artists: 0, albums: 0, users: 0, credentials: 0 }
  writeFileSync(file, JSON.stringify({ version: 1, counters, artists: [], albums: [], users: [], credentials: [] }))
})
afterEach(async () => {
  for (const server of running.splice(0)) await server.stop('SIGKILL')
  removeDir(dir)
})

describe(`${STARTS} servers started at once over a stale lock`, () => {
  test.each([
    ['left by a process that is gone', () => `${Bun.spawnSync(['true']).pid}\nurl=http://127.0.0.1:1\nkey=stale\n`],
    // What follows the pid is read whole by a takeover that reads, then removes: a long text widens its window.
    [
      'left by a process that is gone, long',
      () => `${Bun.spawnSync(['true']).pid}\nurl=http://127.0.0.1:1\nkey=stale\n${'#'.repeat(32 << 20)}\n`,
    ],
    ['empty (a crash before the pid was written)', () => ''],
  ])(
    '%s: exactly one serves, the others stop with the locked error, and no acknowledged write is lost',
    async (_, stale) => {
      const acknowledged: string[] = []
      const rounds: { serving: number; refusals: string[] }[] = []
      for (let round = 0; round < ROUNDS; round++) {
        writeFileSync(`${file}.lock`, stale(), { mode: 0o600 })
        const started = await startTogether(file)
        const serving = started.filter((each) => each.serving)
        // Every server that serves takes writes: with two, one of them writes a file the other overwrites.
        for (const [i, server] of serving.entries())
          for (let write = 0; write < 3; write++) {
            const name = `round ${round} server ${i} write ${write}`
            if ((await post(server.url, name)).status === 201) acknowledged.push(name)
          }
        for (const server of serving) {
          server.child.kill('SIGTERM')
          expect(await server.child.exited).toBe(0)
        }
        const refusals = started.flatMap((each) =>
          each.serving || (each.code === 2 && each.stderr.includes(LOCKED))
            ? []
            : [`exit ${each.code}: ${each.stderr}`],
        )
        rounds.push({ serving: serving.length, refusals })
        // A server that stopped cleanly leaves no lock behind.
        expect(existsSync(`${file}.lock`)).toBe(false)
      }
      const server = await startBinary(['--port', '0', '--data', file, '--log', 'off'])
      running.push(server)
      const page = (await (await fetch(`${server.url}/api/v1/artists?limit=100`)).json()) as {
        data: { name: string }[]
      }
      const kept = new Set(page.data.map((artist) => artist.name))
      expect({ rounds, lost: acknowledged.filter((name) => !kept.has(name)) }).toEqual({
        rounds: Array.from({ length: ROUNDS }, () => ({ serving: 1, refusals: [] })),
        lost: [],
      })
      expect(acknowledged).toHaveLength(3 * ROUNDS)
    },
    120_000,
  )
})

describe('the lock a server holds', () => {
  test('is the kernel’s: after kill -9 the file stays, names the dead server, and the next start takes it over at once', async () => {
    const first = await startBinary(['--port', '0', '--data', file, '--api-key', KEY, '--log', 'off'])
    running.push(first)
    expect((await post(first.url, 'Before the crash')).status).toBe(201)
    const lock = readFileSync(`${file}.lock`, 'utf8')
    expect(lock).toStartWith(`${first.process.pid}\nurl=${first.url}\nkey=`)
    expect(statSync(`${file}.lock`).mode & 0o777).toBe(0o600)
    await first.stop('SIGKILL')
    expect(readFileSync(`${file}.lock`, 'utf8')).toBe(lock)
    const second = await startBinary(['--port', '0', '--data', file, '--log', 'off'])
    running.push(second)
    expect(readFileSync(`${file}.lock`, 'utf8')).toStartWith(`${second.process.pid}\nurl=${second.url}\nkey=`)
    const page = (await (await fetch(`${second.url}/api/v1/artists`)).json()) as { data: { name: string }[] }
    expect(page.data.map((artist) => artist.name)).toEqual(['Before the crash'])
  })

  test('is held whatever the file says: emptied, or naming a dead process, it still refuses a second server', async () => {
    const first = await startBinary(['--port', '0', '--data', file, '--log', 'off'])
    running.push(first)
    for (const text of ['', `${Bun.spawnSync(['true']).pid}\n`]) {
      writeFileSync(`${file}.lock`, text)
      const second = spawn([await ensureBinary(), '--port', '0', '--data', file, '--log', 'off'], {
        env: { PATH: process.env.PATH ?? '' },
        stdout: 'pipe',
        stderr: 'pipe',
      })
      expect(await second.exited).toBe(2)
      expect(await new Response(second.stderr).text()).toContain(LOCKED)
    }
    expect((await fetch(`${first.url}/healthz`)).status).toBe(200)
  })
})
