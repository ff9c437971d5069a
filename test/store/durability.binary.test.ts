import { afterAll, beforeAll, expect, test } from 'bun:test'
import { join } from 'node:path'
import { ensureBinary, removeDir, startBinary, tempDir } from '../support/binary.ts'

// Power-cut drill: writers hammer the executable, it is killed with SIGKILL at a random moment, and every write it
// had acknowledged must be there after a restart. The data file must load every time.
const ROUNDS = 20
const WRITERS = 16
const KEY = 'crash-key'

let dir: string
beforeAll(async () => {
  await ensureBinary()
  dir = tempDir('rock-legends-crash-')
}, 120_000)
afterAll(() => removeDir(dir))

/** Creates artists until the server stops answering; returns the ids (and names) it acknowledged. */
async function writer(url: string, writerId: number, acknowledged: Map<number, string>) {
  for (let i = 0; ; i++) {
    const name = `writer ${writerId} #${i}`
    try {
      const response = await fetch(`${url}/api/v1/artists`, {
        method: 'POST',
        headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
        body: JSON.stringify({ name }),
      })
      if (response.status !== 201) throw new Error(`unexpected ${response.status}: ${await response.text()}`)
      const { id } = (await response.json()) as { id: number }
      acknowledged.set(id, name)
    } catch (error) {
      if ((error as Error).message.startsWith('unexpected')) throw error
      return // the server is gone
    }
  }
}

test(`${ROUNDS} rounds of ${WRITERS} concurrent writers and kill -9 lose no acknowledged write`, async () => {
  const file = join(dir, 'db.json')
  const acknowledged = new Map<number, string>()
  for (let round = 0; round < ROUNDS; round++) {
    // Every other round compacts after a few kilobytes of journal, so kills also land in the middle of compactions.
    const env: Record<string, string> = round % 2 ? { ROCK_LEGENDS_COMPACT_AFTER: '4096' } : {}
    const server = await startBinary(['--port', '0', '--data', file, '--api-key', KEY, '--log', 'off'], { env })
    let ended = false
    const writers = Promise.all(Array.from({ length: WRITERS }, (_, i) => writer(server.url, i, acknowledged))).finally(
      () => {
        ended = true
      },
    )
    // Killed at a random moment of a round under way: after a random number of acknowledged writes, 32 to 400 (about
    // what 20 to 200 ms give on an idle machine; a fixed sleep would leave rounds with none on a busy one), and a
    // few ms more.
    const target = acknowledged.size + Math.round(WRITERS * (2 + Math.random() * 23))
    while (acknowledged.size < target && !ended) await Bun.sleep(1)
    await Bun.sleep(Math.random() * 20)
    await server.stop('SIGKILL')
    await writers
  }
  // One last start: the file must load, and hold every acknowledged artist under its id.
  const server = await startBinary(['--port', '0', '--data', file, '--log', 'off'])
  try {
    const stored = new Map<number, string>()
    for (let offset = 0; ; offset += 100) {
      const page = (await (await fetch(`${server.url}/api/v1/artists?limit=100&offset=${offset}`)).json()) as {
        data: { id: number; name: string }[]
        meta: { next: string | null }
      }
      for (const artist of page.data) stored.set(artist.id, artist.name)
      if (!page.meta.next) break
    }
    expect(acknowledged.size).toBeGreaterThan(ROUNDS * WRITERS)
    const lost = [...acknowledged].filter(([id, name]) => stored.get(id) !== name)
    expect(lost).toEqual([])
  } finally {
    await server.stop()
  }
}, 180_000)
