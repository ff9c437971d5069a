import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import {
  appendFileSync,
  chmodSync,
  chownSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs'
import { join } from 'node:path'
import {
  AS_NOBODY,
  canDropPrivileges,
  ensureBinary,
  NOBODY,
  commandSucceeds as ok,
  type RunningBinary,
  removeDir,
  runBinary,
  startBinary,
  tempDir,
} from '../support/binary.ts'

// Real faults against the compiled executable: a disk that fills up (a tiny tmpfs), files made immutable
// (`chattr +i`, which stops even root) and permissions (the server run as `nobody` with `setpriv`, since root
// ignores permission bits). Each mechanism is probed first; where the machine lacks it (no root, no tmpfs mounts,
// a file system without attributes) its tests are skipped and say why. The same faults are injected in-process, on
// every machine, by test/disk/injected-failures.test.ts.

const KEY = 'fault-key'

function probe(check: (dir: string) => boolean): boolean {
  const dir = tempDir('rock-legends-probe-')
  try {
    return check(dir)
  } catch {
    return false
  } finally {
    ok(['umount', join(dir, 'mnt')])
    ok(['chattr', '-i', join(dir, 'file')])
    removeDir(dir)
  }
}

const canMountTmpfs = probe((dir) => {
  mkdirSync(join(dir, 'mnt'))
  return ok(['mount', '-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', join(dir, 'mnt')])
})
const canChattr = probe((dir) => {
  writeFileSync(join(dir, 'file'), '')
  return ok(['chattr', '+i', join(dir, 'file')])
})

let dir: string
let running: RunningBinary[] = []
beforeAll(() => ensureBinary(), 120_000)
beforeEach(() => {
  dir = tempDir('rock-legends-faults-')
})
afterEach(async () => {
  await Promise.all(running.map((server) => server.stop('SIGKILL')))
  running = []
  ok(['umount', '-l', join(dir, 'mnt')])
  ok(['chattr', '-R', '-i', dir])
  removeDir(dir)
})

async function start(data: string, args: string[] = [], wrapper: string[] = []) {
  const server = await startBinary(['--port', '0', '--data', data, '--api-key', KEY, '--log', 'off', ...args], {
    wrapper,
  })
  running.push(server)
  return server
}

async function stop(server: RunningBinary, signal: NodeJS.Signals = 'SIGTERM') {
  running = running.filter((each) => each !== server)
  return server.stop(signal)
}

const post = (url: string, path: string, body: unknown) =>
  fetch(`${url}${path}`, {
    method: 'POST',
    headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })

async function names(url: string) {
  const page = (await (await fetch(`${url}/api/v1/artists?limit=100`)).json()) as { data: { name: string }[] }
  return page.data.map((artist) => artist.name)
}

async function expectStoreUnavailable(response: Response) {
  expect(response.status).toBe(503)
  expect(response.headers.get('content-type')).toBe('application/problem+json')
  const problem = (await response.json()) as { type: string; detail: string }
  expect(problem.type).toBe('/problems/store-unavailable')
  expect(problem.detail).not.toMatch(/ENOSPC|EPERM|EACCES|\/tmp\//)
}

describe.skipIf(!canMountTmpfs)('a full disk (a tmpfs of 512 KiB; needs root)', () => {
  /** Fills the file system at `mount` with 4 KiB files until it is full, then frees one: about a page is left. */
  function fill(mount: string) {
    const block = Buffer.alloc(4096, 120)
    for (let i = 0; ; i++) {
      try {
        writeFileSync(join(mount, `filler-${i}`), block)
      } catch {
        rmSync(join(mount, `filler-${i}`), { force: true })
        rmSync(join(mount, 'filler-0'))
        return
      }
    }
  }
  const unfill = (mount: string) => {
    for (const name of readdirSync(mount)) if (name.startsWith('filler-')) rmSync(join(mount, name))
  }

  test('a write that does not fit → 503; earlier writes intact; writes resume once there is room; a crash loses nothing', async () => {
    const mount = join(dir, 'mnt')
    mkdirSync(mount)
    expect(ok(['mount', '-t', 'tmpfs', '-o', 'size=512k', 'tmpfs', mount])).toBe(true)
    const file = join(mount, 'db.json')
    const server = await start(file)
    expect((await post(server.url, '/api/v1/artists', { name: 'Kept' })).status).toBe(201)
    expect((await post(server.url, '/api/v1/artists/1/albums', { name: 'Kept album', year: 1970 })).status).toBe(201)
    fill(mount)
    // Larger than the room left: the disk takes part of it, then refuses the rest.
    const big = { name: 'Refused', description: 'x'.repeat(9000) }
    await expectStoreUnavailable(await post(server.url, '/api/v1/artists', big))
    await expectStoreUnavailable(await post(server.url, '/api/v1/artists', big))
    expect(await names(server.url)).toEqual(['Kept'])
    unfill(mount)
    expect((await post(server.url, '/api/v1/artists', { name: 'After', description: 'y'.repeat(9000) })).status).toBe(
      201,
    )
    expect(await names(server.url)).toEqual(['Kept', 'After'])
    // A crash right now: only the journal and the data file as they are on disk come back.
    await stop(server, 'SIGKILL')
    const again = await start(file)
    expect(await names(again.url)).toEqual(['Kept', 'After'])
    const albums = (await (await fetch(`${again.url}/api/v1/artists/1/albums`)).json()) as { data: { name: string }[] }
    expect(albums.data.map((album) => album.name)).toEqual(['Kept album'])
    expect(await stop(again)).toBe(0)
  })

  test('a disk too full to create the data file stops start-up with exit 2 and one line', async () => {
    const mount = join(dir, 'mnt')
    mkdirSync(mount)
    expect(ok(['mount', '-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', mount])).toBe(true)
    fill(mount)
    writeFileSync(join(mount, 'last'), Buffer.alloc(4096)) // the page fill() left
    const { code, stdout, stderr } = await runBinary(['--port', '0', '--data', join(mount, 'db.json')])
    expect(code).toBe(2)
    expect(stdout).toBe('')
    expect(stderr.trim().split('\n')).toHaveLength(1)
    expect(stderr).toContain(join(mount, 'db.json'))
    expect(stderr).toMatch(/ENOSPC|no space/i)
  })
})

describe.skipIf(!canChattr)('an immutable file (chattr +i; needs root and ext4 or the like)', () => {
  test('the journal made immutable while serving → 503; writes resume once it is not; a crash loses nothing', async () => {
    const file = join(dir, 'db.json')
    const server = await start(file)
    expect((await post(server.url, '/api/v1/artists', { name: 'Kept' })).status).toBe(201)
    expect(ok(['chattr', '+i', `${file}.journal`])).toBe(true)
    await expectStoreUnavailable(await post(server.url, '/api/v1/artists', { name: 'Refused' }))
    expect(await names(server.url)).toEqual(['Kept'])
    expect(ok(['chattr', '-i', `${file}.journal`])).toBe(true)
    expect((await post(server.url, '/api/v1/artists', { name: 'After' })).status).toBe(201)
    await stop(server, 'SIGKILL')
    const again = await start(file)
    expect(await names(again.url)).toEqual(['Kept', 'After'])
  })

  test('the data file made immutable while serving: writes are kept in the journal; stopping says it could not fold them, exit 1; the next start has them all', async () => {
    const file = join(dir, 'db.json')
    const server = await start(file)
    expect((await post(server.url, '/api/v1/artists', { name: 'A' })).status).toBe(201)
    expect(ok(['chattr', '+i', file])).toBe(true)
    expect((await post(server.url, '/api/v1/artists', { name: 'B' })).status).toBe(201)
    const before = readFileSync(file, 'utf8')
    expect(await stop(server)).toBe(1)
    const stderr = (await server.stderr()).trim()
    expect(stderr.split('\n')).toHaveLength(1)
    expect(stderr).toContain(`could not fold ${file}.journal into ${file}`)
    expect(stderr).toContain('nothing is lost')
    expect(readFileSync(file, 'utf8')).toBe(before)
    expect(ok(['chattr', '-i', file])).toBe(true)
    const again = await start(file)
    expect(await names(again.url)).toEqual(['A', 'B'])
    expect(await stop(again)).toBe(0)
  })

  test.each(['db.json', 'db.json.journal'])(
    'an immutable %s at start stops start-up with exit 2 and one line; nothing is touched',
    async (name) => {
      const file = join(dir, 'db.json')
      const first = await start(file)
      await post(first.url, '/api/v1/artists', { name: 'A' })
      await stop(first, 'SIGKILL')
      const bytes = readFileSync(join(dir, name), 'utf8')
      expect(ok(['chattr', '+i', join(dir, name)])).toBe(true)
      const { code, stdout, stderr } = await runBinary(['--port', '0', '--data', file])
      expect(code).toBe(2)
      expect(stdout).toBe('')
      expect(stderr.trim().split('\n')).toHaveLength(1)
      expect(stderr).toContain(`${join(dir, name)} is read-only`)
      expect(readFileSync(join(dir, name), 'utf8')).toBe(bytes)
    },
  )
})

describe('permissions, as an unprivileged user (setpriv; needs root to drop to nobody)', () => {
  const given = (path: string) => chownSync(path, NOBODY, NOBODY)
  const runAsNobody = (args: string[]) => runBinary(['--port', '0', ...args], { wrapper: AS_NOBODY })

  beforeEach(() => {
    // tempDir makes a 0700 directory of root's: let nobody in.
    chmodSync(dir, 0o755)
  })

  test.skipIf(!canDropPrivileges)(
    'a read-only data file stops start-up with exit 2 and one line; it is left untouched',
    async () => {
      const file = join(dir, 'db.json')
      writeFileSync(
        file,
        '{"version":1,"counters":{"artists":0,"albums":0,"users":0,"credentials":0},"artists":[],"albums":[],"users":[],"credentials":[]}\n',
      )
      given(dir)
      given(file)
      chmodSync(file, 0o444)
      const { code, stderr } = await runAsNobody(['--data', file])
      expect(code).toBe(2)
      expect(stderr.trim().split('\n')).toHaveLength(1)
      expect(stderr).toContain(`${file} is read-only (EACCES)`)
      expect(statSync(file).mode & 0o777).toBe(0o444)
    },
  )

  test.skipIf(!canDropPrivileges)(
    'a data directory it may not write in stops start-up with exit 2 and one line, no stack',
    async () => {
      const data = join(dir, 'theirs')
      mkdirSync(data, 0o755)
      const { code, stderr } = await runAsNobody(['--data', join(data, 'db.json')])
      expect(code).toBe(2)
      expect(stderr.trim().split('\n')).toHaveLength(1)
      expect(stderr).toContain(`cannot write in ${data}`)
      expect(stderr).toContain('EACCES')
      expect(stderr).not.toMatch(/\bat .+:\d+/)
    },
  )

  test.skipIf(!canDropPrivileges)(
    'a missing data directory is created; under a parent it may not write in, exit 2 and one line',
    async () => {
      given(dir)
      const created = join(dir, 'a', 'b', 'db.json')
      const server = await startBinary(['--port', '0', '--data', created, '--log', 'off'], { wrapper: AS_NOBODY })
      running.push(server)
      expect(statSync(created).uid).toBe(NOBODY)
      expect(statSync(created).mode & 0o777).toBe(0o600)
      mkdirSync(join(dir, 'locked'), 0o555)
      const { code, stderr } = await runAsNobody(['--data', join(dir, 'locked', 'sub', 'db.json')])
      expect(code).toBe(2)
      expect(stderr.trim().split('\n')).toHaveLength(1)
      expect(stderr).toContain(`cannot create the directory ${join(dir, 'locked', 'sub')}`)
    },
  )

  test.skipIf(!canDropPrivileges)(
    'the directory made read-only while serving: appends go on (the journal is open), a reset is refused with 503 until it is writable again',
    async () => {
      given(dir)
      const file = join(dir, 'db.json')
      const server = await start(file, ['--allow-reset'], AS_NOBODY)
      expect((await post(server.url, '/api/v1/artists', { name: 'A' })).status).toBe(201)
      chmodSync(dir, 0o555)
      expect((await post(server.url, '/api/v1/artists', { name: 'B' })).status).toBe(201)
      await expectStoreUnavailable(await post(server.url, '/__admin/reset', {}))
      expect(await names(server.url)).toEqual(['A', 'B'])
      chmodSync(dir, 0o755)
      const reset = await fetch(`${server.url}/__admin/reset`, { method: 'POST', headers: { 'x-api-key': KEY } })
      expect(reset.status).toBe(204)
      expect(await names(server.url)).toEqual([])
      expect(await stop(server)).toBe(0)
    },
  )
})

describe('damaged files at start', () => {
  const EMPTY =
    '{"version":1,"counters":{"artists":1,"albums":0,"users":0,"credentials":0},"artists":[{"id":1,"name":"A","description":null,"image":null,"band":null}],"albums":[],"users":[],"credentials":[]}\n'
  const entry = (id: number) =>
    `${JSON.stringify({ counters: { artists: id, albums: 0, users: 0, credentials: 0 }, artists: [{ id, name: `J${id}`, description: null, image: null, band: null }] })}\n`

  test('a journal damaged in the middle stops start-up with exit 2 and one line naming it; both files are left as they were', async () => {
    const file = join(dir, 'db.json')
    writeFileSync(file, EMPTY)
    const journal = `${entry(2).slice(0, 40)}\n${entry(3)}`
    writeFileSync(`${file}.journal`, journal)
    const { code, stderr } = await runBinary(['--port', '0', '--data', file])
    expect(code).toBe(2)
    expect(stderr.trim().split('\n')).toHaveLength(1)
    expect(stderr).toContain(`${file}.journal is damaged`)
    expect(readFileSync(file, 'utf8')).toBe(EMPTY)
    expect(readFileSync(`${file}.journal`, 'utf8')).toBe(journal)
  })

  test('a journal whose last append was cut short by a crash: that unacknowledged tail is dropped, the rest is served', async () => {
    const file = join(dir, 'db.json')
    writeFileSync(file, EMPTY)
    writeFileSync(`${file}.journal`, entry(2))
    appendFileSync(`${file}.journal`, entry(3).slice(0, 50))
    const server = await start(file)
    expect(await names(server.url)).toEqual(['A', 'J2'])
    expect((await post(server.url, '/api/v1/artists', { name: 'Next' })).status).toBe(201)
    expect(await names(server.url)).toEqual(['A', 'J2', 'Next'])
  })

  test('a journal without its data file stops start-up with exit 2; the journal is left as it was', async () => {
    const file = join(dir, 'db.json')
    writeFileSync(`${file}.journal`, entry(1))
    const { code, stderr } = await runBinary(['--port', '0', '--data', file])
    expect(code).toBe(2)
    expect(stderr).toContain(`${file}.journal exists but ${file} does not`)
    expect(readFileSync(`${file}.journal`, 'utf8')).toBe(entry(1))
  })
})

afterAll(() => {
  // Nothing mounted may outlive the run, even if a test failed half-way.
  ok(['umount', '-l', join(dir ?? '/nonexistent', 'mnt')])
})
