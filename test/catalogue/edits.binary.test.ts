/**
 * The compiled executable over a JSON data file: a `PATCH` of an artist, a `PUT` and a `DELETE` of albums survive a
 * restart, after a clean stop (the data file) and after `kill -9` (the journal).
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { join } from 'node:path'
import { ensureBinary, removeDir, startBinary, tempDir } from '../support/binary.ts'

const KEY = 'edits-key'
const WRITE = { 'x-api-key': KEY, 'content-type': 'application/json' }
const MERGE_PATCH = { 'x-api-key': KEY, 'content-type': 'application/merge-patch+json' }

let dir: string
beforeAll(async () => {
  await ensureBinary()
  dir = tempDir('rock-legends-edits-')
}, 120_000)
afterAll(() => removeDir(dir))

const start = (file: string) => startBinary(['--port', '0', '--data', file, '--api-key', KEY, '--log', 'off'])

test.each([
  ['a clean stop', 'SIGTERM'],
  ['kill -9', 'SIGKILL'],
] as const)(
  'a PATCH and an album PUT and DELETE survive %s',
  async (_, signal) => {
    const file = join(dir, `${signal}.json`)
    const first = await start(file)
    const send = (method: string, path: string, headers: Record<string, string>, body?: object) =>
      fetch(`${first.url}${path}`, { method, headers, body: body && JSON.stringify(body) })
    const artist = (await (
      await send('POST', '/api/v1/artists', WRITE, { name: 'Moris', band: 'Los Beatniks', description: 'Pioneer.' })
    ).json()) as { id: number }
    const albums = `/api/v1/artists/${artist.id}/albums`
    const kept = (await (await send('POST', albums, WRITE, { name: '30 minutos de vida', year: 1970 })).json()) as {
      id: number
    }
    const removed = (await (await send('POST', albums, WRITE, { name: 'Ciudad de guitarras callejeras' })).json()) as {
      id: number
    }
    expect((await send('PATCH', `/api/v1/artists/${artist.id}`, MERGE_PATCH, { description: null })).status).toBe(200)
    expect((await send('PUT', `${albums}/${kept.id}`, WRITE, { name: '30 minutos de vida', year: 1971 })).status).toBe(
      200,
    )
    expect((await send('DELETE', `${albums}/${removed.id}`, { 'x-api-key': KEY })).status).toBe(204)
    await first.stop(signal)

    const second = await start(file)
    try {
      const read = async (path: string) => {
        const response = await fetch(`${second.url}${path}`)
        // biome-ignore lint/suspicious/noExplicitAny: the test reads whatever JSON an answer holds
        const json: any = response.status === 200 ? await response.json() : undefined
        return { status: response.status, json }
      }
      expect((await read(`/api/v1/artists/${artist.id}`)).json).toEqual({
        id: artist.id,
        name: 'Moris',
        band: 'Los Beatniks',
      })
      expect((await read(albums)).json.data).toEqual([
        { id: kept.id, artistId: artist.id, name: '30 minutos de vida', year: 1971, kind: 'studio' },
      ])
      expect((await read(`${albums}/${removed.id}`)).status).toBe(404)
      // Ids are never given again, a removed album's included.
      const next = await fetch(`${second.url}${albums}`, {
        method: 'POST',
        headers: WRITE,
        body: JSON.stringify({ name: 'Moris y sus amigos' }),
      })
      expect(((await next.json()) as { id: number }).id).toBe(removed.id + 1)
    } finally {
      await second.stop()
    }
  },
  60_000,
)
