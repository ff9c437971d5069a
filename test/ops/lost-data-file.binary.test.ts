import { describe, expect, test } from 'bun:test'
import { existsSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { binaryFixtures, runBinary } from '../support/binary.ts'

// The accident: the data file (and its journal) went missing while the server was stopped. The next start, with
// the unit's flags (`--seed` among them), used to serve a new store of demo artists while the scheduled backups of
// the real data rotated away. Now it is refused, saying how to restore, and nothing is created.

const KEY = 'rl_lost_data_file_test_key_0123456789'
const { directory, serve, stop } = binaryFixtures('rock-legends-lost-', KEY)

/** Creates an artist through `url` with the service key. */
const create = (url: string, name: string) =>
  fetch(`${url}/api/v1/artists`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': KEY },
    body: JSON.stringify({ name }),
  })

const names = async (url: string) =>
  ((await (await fetch(`${url}/api/v1/artists?limit=100`)).json()) as { data: { name: string }[] }).data.map(
    ({ name }) => name,
  )

/** A place where a server ran with scheduled backups, wrote `Mi Banda`, was backed up and stopped. */
async function servedPlace() {
  const dir = directory()
  const data = join(dir, 'db.json')
  const backups = join(dir, 'backups')
  const flags = ['--seed', '--backup-every', '1s', '--backup-dir', backups]
  const server = await serve(data, flags)
  expect((await create(server.url, 'Mi Banda')).status).toBe(201)
  const deadline = Date.now() + 10_000
  while (Date.now() < deadline && (!existsSync(backups) || readdirSync(backups).length === 0)) await Bun.sleep(100)
  // One backup more, taken after the write for certain.
  await Bun.sleep(1200)
  await stop(server)
  return { dir, data, backups, flags }
}

describe('a start over a data file that was lost', () => {
  test('is refused, --seed or not, naming the newest backup and the command that restores it', async () => {
    const { data, backups, flags } = await servedPlace()
    rmSync(data)
    rmSync(`${data}.journal`, { force: true })
    const kept = readdirSync(backups).sort()
    for (const args of [flags, ['--backup-every', '1h', '--backup-dir', backups]]) {
      const started = await runBinary(['--data', data, '--port', '0', '--api-key', KEY, '--log', 'off', ...args])
      expect(started.code).toBe(2)
      const newest = kept.at(-1) as string
      expect(started.stderr).toContain(`${data} is missing, but it existed: ${backups} holds ${kept.length} backup`)
      expect(started.stderr).toContain(`rock-legends restore ${join(backups, newest)} --data ${data}`)
      expect(started.stderr).toContain('--allow-new-data')
      expect(started.stderr).not.toContain('    at ')
      // Nothing was made in the lost file's place, and every backup is still there.
      expect(existsSync(data)).toBe(false)
      expect(readdirSync(backups).sort()).toEqual(kept)
    }
    // The command it names brings the data back.
    const newest = join(backups, kept.at(-1) as string)
    const restored = await runBinary(['restore', newest, '--data', data])
    expect({ code: restored.code, stderr: restored.stderr }).toMatchObject({ code: 0 })
    const server = await serve(data, flags)
    expect(await names(server.url)).toContain('Mi Banda')
  }, 60_000)

  test('--allow-new-data starts a new store there on purpose, which --seed then fills', async () => {
    const { data, flags } = await servedPlace()
    rmSync(data)
    rmSync(`${data}.journal`, { force: true })
    const server = await serve(data, [...flags, '--allow-new-data'])
    const listed = await names(server.url)
    expect(listed).not.toContain('Mi Banda')
    expect(listed).toContain('Luis Alberto Spinetta')
  }, 60_000)

  test('a lock file left by a server that did not stop cleanly shows it existed too', async () => {
    const dir = directory()
    const data = join(dir, 'db.json')
    const server = await serve(data)
    expect((await create(server.url, 'Mi Banda')).status).toBe(201)
    await stop(server, 'SIGKILL')
    expect(existsSync(`${data}.lock`)).toBe(true)
    rmSync(data)
    rmSync(`${data}.journal`, { force: true })
    const started = await runBinary(['--data', data, '--port', '0', '--log', 'off'])
    expect(started.code).toBe(2)
    expect(started.stderr).toContain(`its lock file ${data}.lock remains`)
    expect(started.stderr).toContain(`rock-legends restore BACKUP --data ${data}`)
    // Nor does `users add`, which may make a data file before a first start: the lock, its sign, stays.
    const added = await runBinary(['users', 'add', '--email', 'ana@rock-legends.com', '--name', 'Ana', '--data', data])
    expect(added.code).toBe(1)
    expect(added.stderr).toContain(`${data} is missing, but it existed`)
    expect(existsSync(data)).toBe(false)
    expect(existsSync(`${data}.lock`)).toBe(true)
  }, 30_000)

  test('a first start in a new place makes the data file and seeds it, as before', async () => {
    const dir = directory()
    const data = join(dir, 'db.json')
    // A backup directory that holds something else is no sign.
    const backups = join(dir, 'backups')
    await Bun.write(join(backups, 'notes.txt'), 'not a backup')
    const server = await serve(data, ['--seed', '--backup-every', '1h', '--backup-dir', backups])
    expect(await names(server.url)).toContain('Luis Alberto Spinetta')
    expect(existsSync(data)).toBe(true)
  }, 30_000)

  test('--seed leaves alone a data file that held data, though it holds none now', async () => {
    const dir = directory()
    const data = join(dir, 'db.json')
    const counters = { artists: 40, albums: 100, users: 2, credentials: 5 }
    writeFileSync(data, JSON.stringify({ version: 1, counters, artists: [], albums: [], users: [], credentials: [] }))
    const server = await serve(data, ['--seed'])
    expect(await names(server.url)).toEqual([])
  }, 30_000)
})
