import { join } from 'node:path'
import type { CannedResponse } from './ceiling.ts'
import { type ServerProcess, startCeiling, startRockLegends } from './server-process.ts'
import { runWrk, type WrkResult } from './wrk.ts'

/** A read request measured against rock-legends and the ceiling, with its goal as a fraction of the ceiling. */
export interface ReadCase {
  label: string
  path: string
  goal: number
}

/** The read requests of the benchmark. */
const READ_CASES: readonly ReadCase[] = [
  { label: 'One artist', path: '/api/v1/artists/1', goal: 0.9 },
  { label: 'List page', path: '/api/v1/artists?limit=10&offset=0', goal: 0.75 },
]

/** wrk settings shared by every read run, whichever the target. */
export const READ_SETTINGS = { connections: 64, seconds: 8, warmUpSeconds: 2, rounds: 5 }

/** How long the read runs take, in seconds: each case, on both targets. */
export const READ_DURATION_SECONDS =
  READ_CASES.length * 2 * (READ_SETTINGS.warmUpSeconds + READ_SETTINGS.rounds * READ_SETTINGS.seconds)

/** One wrk run and the CPU time the target spent on it per request, in microseconds. */
export interface ReadRun extends WrkResult {
  cpuMicrosPerRequest: number
}

/** The runs of one read case, round by round (`ceiling[i]` and `server[i]` ran back to back). */
export interface ReadResult extends ReadCase {
  ceiling: ReadRun[]
  server: ReadRun[]
}

async function record(server: ServerProcess, path: string): Promise<CannedResponse> {
  const response = await fetch(`${server.url}${path}`)
  if (response.status !== 200) throw new Error(`GET ${path} answered ${response.status}: ${await response.text()}`)
  return {
    path,
    status: response.status,
    contentType: response.headers.get('content-type') ?? '',
    body: Buffer.from(await response.arrayBuffer()).toString('base64'),
  }
}

async function assertServes(server: ServerProcess, expected: CannedResponse): Promise<void> {
  const response = await fetch(`${server.url}${expected.path}`)
  const body = Buffer.from(await response.arrayBuffer()).toString('base64')
  if (response.status !== expected.status || response.headers.get('content-type') !== expected.contentType)
    throw new Error(`the ceiling answers ${expected.path} with a different status or content type`)
  if (body !== expected.body) throw new Error(`the ceiling answers ${expected.path} with different bytes`)
}

/** Runs wrk against `target`. CPU time per request is steadier than requests/s when other work shares the cores. */
async function measure(target: ServerProcess, path: string, seconds: number): Promise<ReadRun> {
  const cpuBefore = await target.cpuSeconds()
  const run = await runWrk({ url: `${target.url}${path}`, connections: READ_SETTINGS.connections, seconds })
  const cpu = (await target.cpuSeconds()) - cpuBefore
  return { ...run, cpuMicrosPerRequest: (cpu * 1e6) / run.requests }
}

/**
 * Measures every read case on the compiled server (built-in catalogue) and on the ceiling, which serves the very
 * responses recorded from it. Each target is warmed up, then the two alternate for several rounds, swapping which
 * goes first, so that drift in the machine's load falls on both alike.
 */
export async function measureReads(workDir: string, progress: (line: string) => void): Promise<ReadResult[]> {
  const server = await startRockLegends(['--seed', '--data', join(workDir, 'reads-db.json')])
  let ceiling: ServerProcess | undefined
  try {
    const responses = await Promise.all(READ_CASES.map((c) => record(server, c.path)))
    const responsesFile = join(workDir, 'responses.json')
    await Bun.write(responsesFile, JSON.stringify(responses))
    ceiling = await startCeiling(responsesFile)
    for (const response of responses) await assertServes(ceiling, response)

    const results: ReadResult[] = []
    for (const readCase of READ_CASES) {
      const targets = { ceiling, server }
      for (const target of Object.values(targets)) await measure(target, readCase.path, READ_SETTINGS.warmUpSeconds)
      const result: ReadResult = { ...readCase, ceiling: [], server: [] }
      for (let round = 0; round < READ_SETTINGS.rounds; round++) {
        const order = round % 2 === 0 ? (['ceiling', 'server'] as const) : (['server', 'ceiling'] as const)
        for (const name of order) {
          const run = await measure(targets[name], readCase.path, READ_SETTINGS.seconds)
          result[name].push(run)
          progress(`${readCase.label}, round ${round + 1}, ${name}: ${Math.round(run.requestsPerSecond)} req/s`)
        }
      }
      results.push(result)
    }
    return results
  } finally {
    await ceiling?.stop()
    await server.stop()
  }
}
