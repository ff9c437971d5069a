/**
 * The artist history through the compiled executable: two replicas over one PostgreSQL database list each other's
 * changes in one history, and a server over a data file keeps it across a restart (SIGTERM, then a new start) and
 * across a `kill -9` (the journal).
 */
import { afterAll, afterEach, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { type RunningBinary, removeDir, startBinary, tempDir } from '../support/binary.ts'
import { skipWithoutPostgres, type TestPostgres, testPostgres } from '../support/postgres.ts'

const skip = skipWithoutPostgres()
const KEY = 'replica-history-key'
const asService = { 'x-api-key': KEY, 'content-type': 'application/json' }

let postgres: TestPostgres
const running: RunningBinary[] = []
const dirs: string[] = []

afterEach(async () => {
  await Promise.all(running.splice(0).map((replica) => replica.stop().catch(() => 0)))
})
afterAll(() => {
  for (const dir of dirs) removeDir(dir)
})

async function start(data: string) {
  const server = await startBinary(['--data', data, '--port', '0', '--api-key', KEY, '--log', 'off'])
  running.push(server)
  return server
}

const send = async (server: RunningBinary, method: string, path: string, body: object) => {
  const answer = await fetch(`${server.url}${path}`, { method, headers: asService, body: JSON.stringify(body) })
  expect(answer.status).toBeLessThan(300)
  return (await answer.json()) as { id: number }
}

const history = async (server: RunningBinary, artistId: number) => {
  const answer = await fetch(`${server.url}/api/v1/artists/${artistId}/history?limit=100`)
  expect(answer.status).toBe(200)
  const page = (await answer.json()) as { data: { kind: string; by: string; artist?: { name: string } }[] }
  return page.data.map((change) => `${change.kind} ${change.by} ${change.artist?.name ?? ''}`.trim())
}

describe.skipIf(skip)('two replicas over one PostgreSQL', () => {
  test("each lists the other's changes in one history, newest first", async () => {
    postgres ??= await testPostgres()
    const url = postgres.url(await postgres.emptyDatabase())
    const [a, b] = [await start(url), await start(url)]
    const artist = await send(a, 'POST', '/api/v1/artists', { name: 'Fito' })
    await send(b, 'PUT', `/api/v1/artists/${artist.id}`, { name: 'Fito Páez' })
    await send(a, 'POST', `/api/v1/artists/${artist.id}/albums`, { name: 'Giros', year: 1985 })
    await send(b, 'PUT', `/api/v1/artists/${artist.id}`, { name: 'Fito Páez', band: 'solo' })
    const expected = [
      'artist-updated service Fito Páez',
      'album-created service',
      'artist-updated service Fito Páez',
      'artist-created service Fito',
    ]
    expect(await history(a, artist.id)).toEqual(expected)
    expect(await history(b, artist.id)).toEqual(expected)
  })
})

describe('a server over a data file', () => {
  test('keeps the history across a restart and across kill -9', async () => {
    const dir = tempDir()
    dirs.push(dir)
    const file = join(dir, 'db.json')
    const first = await start(file)
    const artist = await send(first, 'POST', '/api/v1/artists', { name: 'Pappo' })
    await send(first, 'PUT', `/api/v1/artists/${artist.id}`, { name: 'Pappo Napolitano' })
    await first.stop()
    const second = await start(file)
    expect(await history(second, artist.id)).toEqual([
      'artist-updated service Pappo Napolitano',
      'artist-created service Pappo',
    ])
    await send(second, 'PUT', `/api/v1/artists/${artist.id}`, { name: 'Pappo' })
    await second.stop('SIGKILL')
    const third = await start(file)
    expect((await history(third, artist.id))[0]).toBe('artist-updated service Pappo')
  })
})
