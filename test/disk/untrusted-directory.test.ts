import { afterEach, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { chmodSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import {
  AS_NOBODY,
  canDropPrivileges,
  ensureBinary,
  NOBODY,
  type RunningBinary,
  removeDir,
  runBinary,
  startBinary,
  tempDir,
} from '../support/binary.ts'

// Through the compiled executable: a data directory other users may write in, and files planted there by one of them,
// stop start-up with exit 2 and one line; a sticky shared directory (like /tmp) holding our own files works. The same
// attacks are made in-process, one file at a time, in test/store/planted-files.test.ts.

let dir: string
let running: RunningBinary[] = []
beforeAll(() => ensureBinary(), 120_000)
beforeEach(() => {
  dir = tempDir('rock-legends-shared-')
})
afterEach(async () => {
  await Promise.all(running.map((server) => server.stop('SIGKILL')))
  running = []
  removeDir(dir)
})

/** A directory anyone may write in, with `mode`. */
function shared(mode: number): string {
  chmodSync(dir, 0o755)
  const path = join(dir, 'shared')
  mkdirSync(path)
  chmodSync(path, mode)
  return path
}

async function expectRefused(args: string[], message: string, wrapper: string[] = []) {
  const { code, stdout, stderr } = await runBinary(['--port', '0', '--log', 'off', ...args], { wrapper })
  expect(code).toBe(2)
  expect(stdout).toBe('')
  expect(stderr.trim().split('\n')).toHaveLength(1)
  expect(stderr).toStartWith('rock-legends: ')
  expect(stderr).toContain(message)
  expect(stderr).not.toMatch(/\bat .+:\d+/)
}

describe('a data directory other users may write in', () => {
  test.each([
    ['0777', 0o777],
    ['0775', 0o775],
  ])(
    'mode %s, not sticky: exit 2 and one line saying why and how to fix it; nothing is created',
    async (shown, mode) => {
      const data = shared(mode)
      await expectRefused(
        ['--data', join(data, 'db.json')],
        `${data}, the directory of ${join(data, 'db.json')}, may be written by other users (mode ${shown}) and is not sticky`,
      )
      expect(statSync(join(data, 'db.json'), { throwIfNoEntry: false })).toBeUndefined()
    },
  )

  test('sticky (mode 1777, like /tmp) with our own files: it serves, saves, and starts again', async () => {
    const data = shared(0o1777)
    const file = join(data, 'db.json')
    const server = await startBinary(['--port', '0', '--data', file, '--api-key', 'k', '--log', 'off'])
    running.push(server)
    const created = await fetch(`${server.url}/api/v1/artists`, {
      method: 'POST',
      headers: { 'x-api-key': 'k', 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Kept' }),
    })
    expect(created.status).toBe(201)
    running = []
    expect(await server.stop()).toBe(0)
    expect(JSON.parse(readFileSync(file, 'utf8')).artists).toHaveLength(1)
    const again = await startBinary(['--port', '0', '--data', file, '--log', 'off'])
    running.push(again)
    expect(((await (await fetch(`${again.url}/api/v1/artists`)).json()) as { data: unknown[] }).data).toHaveLength(1)
  })

  test('a link planted at the journal: exit 2 and one line naming it; the file it points to is untouched', async () => {
    const data = shared(0o1777)
    const file = join(data, 'db.json')
    const victim = join(dir, 'victim')
    writeFileSync(victim, 'untouched\n')
    symlinkSync(victim, `${file}.journal`)
    await expectRefused(['--data', file], `${file}.journal is a symbolic link`)
    expect(readFileSync(victim, 'utf8')).toBe('untouched\n')
  })

  test.skipIf(!canDropPrivileges)(
    'sticky, with a journal another user put there first (the server runs as nobody): exit 2, the journal left as it was',
    async () => {
      const data = shared(0o1777)
      const file = join(data, 'db.json')
      writeFileSync(`${file}.journal`, '')
      await expectRefused(
        ['--data', file],
        `${file}.journal belongs to another user (uid 0, this process runs as uid ${NOBODY})`,
        AS_NOBODY,
      )
      expect(statSync(`${file}.journal`).size).toBe(0)
      expect(statSync(file, { throwIfNoEntry: false })).toBeUndefined()
    },
  )
})
