import { afterEach, beforeAll, describe, expect, test } from 'bun:test'
import { ensureBinary, type RunningBinary, startBinary } from '../support/binary.ts'

// The access log is written in batches; a stop must not lose the lines still waiting for one.
const REQUESTS = 300

let running: RunningBinary[] = []
beforeAll(() => ensureBinary(), 120_000)
afterEach(async () => {
  await Promise.all(running.map((server) => server.stop('SIGKILL')))
  running = []
})

/** Sends `count` reads, a few at a time, and returns the `X-Request-Id` of each answer. */
async function sendReads(base: string, count: number): Promise<string[]> {
  const ids: string[] = []
  for (let sent = 0; sent < count; sent += 25) {
    const batch = Array.from({ length: Math.min(25, count - sent) }, async (_, i) => {
      const response = await fetch(`${base}/api/v1/artists?limit=2&offset=${sent + i}`)
      await response.arrayBuffer()
      expect(response.status).toBe(200)
      return response.headers.get('x-request-id') as string
    })
    ids.push(...(await Promise.all(batch)))
  }
  return ids
}

describe('the default pretty access log on a stop', () => {
  test.each(['SIGTERM', 'SIGINT'] as const)(
    '%s right after the answers: every request has its line',
    async (signal) => {
      const server = await startBinary(['--port', '0', '--data', ':memory:', '--seed'])
      running.push(server)
      const ids = await sendReads(server.url, REQUESTS)
      expect(new Set(ids).size).toBe(REQUESTS)
      running = []
      expect(await server.stop(signal)).toBe(0)
      const lines = (await server.stderr()).split('\n').filter((line) => line.startsWith('GET /api/v1/artists?'))
      expect(lines).toHaveLength(REQUESTS)
      const logged = new Set(lines.map((line) => line.slice(line.lastIndexOf(' ') + 1)))
      for (const id of ids) expect(logged.has(id)).toBe(true)
      for (const line of lines)
        expect(line).toMatch(
          /^GET \/api\/v1\/artists\?limit=2&offset=\d+ 200 \d+ B \d+\.\d ms 127\.0\.0\.1 "Bun\/[^"]+" \S+$/,
        )
    },
  )
})
