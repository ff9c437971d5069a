import { copyFile, mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { writeCatalogue } from './catalogue.ts'
import type { CannedResponse } from './ceiling.ts'
import { jsonServerArtistCount, writeJsonServerDb } from './json-server-db.ts'
import { artistCount, CREATE_REQUEST, CREATE_SCRIPT, createArtists, startStore } from './rock-legends.ts'
import { type ServerProcess, startCeiling, startJsonServer } from './server-process.ts'
import { type Load, type LoadRun, loadServer } from './wrk.ts'

/** The servers compared, in the order of the report. */
export const TARGETS = ['ceiling', 'rock-legends', 'json-server'] as const
/** One of the compared servers. */
export type Target = (typeof TARGETS)[number]

/** Artists (5 albums each) in every store of the comparison. */
export const COMPARE_ARTISTS = 1_000

/**
 * Settings of the comparison: wrk connections for reads and creates, seconds per measured run, rounds (each target
 * once per round), the timed warm-up of reads and the warm-up creates sent before a store's first measured create.
 */
export const COMPARE_SETTINGS = {
  readConnections: 64,
  createConnections: 32,
  seconds: 5,
  rounds: 6,
  warmUpSeconds: 2,
  warmUpCreates: 32,
}

/** A request measured on every target, and its goals as the rate of rock-legends over the others'. */
export interface CompareCase {
  label: string
  method: 'GET' | 'POST'
  /** The path on rock-legends, which the ceiling serves too. */
  path: string
  /** The same request in json-server's API. */
  jsonServerPath: string
  goals: { ceiling?: number; jsonServer: number }
}

const MIDDLE = COMPARE_ARTISTS / 2
/** The requests of the comparison. */
const COMPARE_CASES: readonly CompareCase[] = [
  {
    label: 'Get one artist',
    method: 'GET',
    path: `/api/v1/artists/${MIDDLE}`,
    jsonServerPath: `/artists/${MIDDLE}`,
    goals: { ceiling: 0.9, jsonServer: 10 },
  },
  {
    label: 'List page',
    method: 'GET',
    path: '/api/v1/artists?limit=10&offset=0',
    jsonServerPath: '/artists?_page=1&_per_page=10',
    goals: { ceiling: 0.8, jsonServer: 10 },
  },
  {
    label: 'Create an artist',
    method: 'POST',
    path: '/api/v1/artists',
    jsonServerPath: '/artists',
    goals: { jsonServer: 3 },
  },
]

/** One measured run on one target; for creates on a store, also its artists before and after. */
export interface CompareRun extends LoadRun {
  artistsBefore?: number
  artistsAfter?: number
}

/** The runs of one case per target, round by round: `runs[t][i]` ran in round i. */
export interface CompareResult extends CompareCase {
  runs: Record<Target, CompareRun[]>
}

type Targets = Record<Target, ServerProcess>

/** Where a case is served on `target`. */
const pathOn = (target: Target, c: CompareCase) => (target === 'json-server' ? c.jsonServerPath : c.path)

/** The order of the targets in round `round`: rotated each round, so none always runs first or last. */
const orderOf = (round: number) => TARGETS.map((_, i) => TARGETS[(i + round) % TARGETS.length] as Target)

async function record(base: string, { method, path }: CompareCase): Promise<CannedResponse> {
  const response = await fetch(`${base}${path}`, method === 'POST' ? CREATE_REQUEST : {})
  if (response.status !== (method === 'POST' ? 201 : 200))
    throw new Error(`${method} ${path} answered ${response.status}: ${await response.text()}`)
  // Every header but the two Bun.serve writes itself, so the ceiling sends the same bytes (security headers too).
  const headers: Record<string, string> = {}
  for (const [name, value] of response.headers) if (name !== 'date' && name !== 'content-length') headers[name] = value
  const body = Buffer.from(await response.arrayBuffer()).toString('base64')
  return { method, path, status: response.status, headers, body }
}

/** Checks that `server` answers the recorded GET with the same status and bytes. */
async function assertServes(server: ServerProcess, expected: CannedResponse, name: string): Promise<void> {
  const response = await fetch(`${server.url}${expected.path}`)
  const body = Buffer.from(await response.arrayBuffer()).toString('base64')
  if (response.status !== expected.status || body !== expected.body)
    throw new Error(`${name} answers GET ${expected.path} differently from the recording`)
}

/** Checks that json-server serves the artists rock-legends does: the name of the one artist, and a full page. */
async function assertSameData(jsonServer: ServerProcess, oneArtist: CannedResponse): Promise<void> {
  const [one, list] = COMPARE_CASES
  const expected = JSON.parse(Buffer.from(oneArtist.body, 'base64').toString()) as { name: string }
  const artist = (await (await fetch(`${jsonServer.url}${one?.jsonServerPath}`)).json()) as { name?: string }
  const page = (await (await fetch(`${jsonServer.url}${list?.jsonServerPath}`)).json()) as { data?: unknown[] }
  if (artist.name !== expected.name || page.data?.length !== 10)
    throw new Error(`json-server does not serve the same artists: ${JSON.stringify(artist)}`)
}

/** The wrk run of `c` on `target`. */
function loadOf(target: Target, c: CompareCase, seconds: number): Load {
  const path = pathOn(target, c)
  return c.method === 'POST'
    ? { path, seconds, connections: COMPARE_SETTINGS.createConnections, ...CREATE_SCRIPT }
    : { path, seconds, connections: COMPARE_SETTINGS.readConnections }
}

/** Artists in the store of `target`, if it has one. */
function countArtists(target: Target, server: ServerProcess): Promise<number> | undefined {
  if (target === 'rock-legends') return artistCount(server.url)
  if (target === 'json-server') return jsonServerArtistCount(server.url)
  return undefined
}

/** The files a comparison works with, in its directory. */
interface Fixture {
  dir: string
  catalogue: string
  jsonServerDb: string
  responses: CannedResponse[]
}

/**
 * Seeds a store from a generated catalogue, exports the same artists and albums as json-server's db.json, and records
 * rock-legends' answers to every case for the ceiling (the create last, so the reads see the seeded store).
 */
async function prepare(dir: string): Promise<Fixture> {
  const catalogue = join(dir, 'catalogue.json')
  const jsonServerDb = join(dir, 'json-server-db.json')
  await writeCatalogue(catalogue, COMPARE_ARTISTS)
  const server = await startStore(join(dir, 'recording'), catalogue)
  try {
    await writeJsonServerDb(server.url, jsonServerDb)
    const responses: CannedResponse[] = []
    for (const c of COMPARE_CASES) responses.push(await record(server.url, c))
    return { dir, catalogue, jsonServerDb, responses }
  } finally {
    await server.stop()
  }
}

/** Starts rock-legends and json-server on fresh copies of the fixture's data, in `dir`. */
async function startStores(fixture: Fixture, dir: string): Promise<Omit<Targets, 'ceiling'>> {
  const jsonServerDir = join(dir, 'json-server')
  await mkdir(jsonServerDir, { recursive: true })
  await copyFile(fixture.jsonServerDb, join(jsonServerDir, 'db.json'))
  const rockLegends = await startStore(join(dir, 'rock-legends'), fixture.catalogue)
  const jsonServer = await startJsonServer(join(jsonServerDir, 'db.json'), jsonServerDir).catch(async (error) => {
    await rockLegends.stop()
    throw error
  })
  return { 'rock-legends': rockLegends, 'json-server': jsonServer }
}

type Progress = (line: string) => void

/** One measured run of `c` on `target`, with the store's artist count around it for creates. */
async function measureRun(target: Target, server: ServerProcess, c: CompareCase): Promise<CompareRun> {
  const counting = c.method === 'POST'
  const artistsBefore = counting ? await countArtists(target, server) : undefined
  const run = await loadServer(server, loadOf(target, c, COMPARE_SETTINGS.seconds))
  const artistsAfter = counting ? await countArtists(target, server) : undefined
  return { ...run, artistsBefore, artistsAfter }
}

/** The reads: the same three servers throughout, warmed up, then the targets take turns round after round. */
async function measureReads(targets: Targets, c: CompareCase, progress: Progress): Promise<CompareResult> {
  for (const target of TARGETS) await loadServer(targets[target], loadOf(target, c, COMPARE_SETTINGS.warmUpSeconds))
  const runs: Record<Target, CompareRun[]> = { ceiling: [], 'rock-legends': [], 'json-server': [] }
  for (let round = 0; round < COMPARE_SETTINGS.rounds; round++)
    for (const target of orderOf(round)) {
      const run = await measureRun(target, targets[target], c)
      runs[target].push(run)
      progress(`${c.label}, round ${round + 1}, ${target}: ${Math.round(run.requestsPerSecond)} req/s`)
    }
  return { ...c, runs }
}

/**
 * The creates: each round starts rock-legends and json-server afresh on copies of the seeded data, so that every round
 * measures stores of the same size; each is warmed up with one artist-read run and a few creates first.
 */
async function measureCreates(fixture: Fixture, ceiling: ServerProcess, progress: Progress): Promise<CompareResult> {
  const c = COMPARE_CASES.find((each) => each.method === 'POST') as CompareCase
  const read = COMPARE_CASES[0] as CompareCase
  const runs: Record<Target, CompareRun[]> = { ceiling: [], 'rock-legends': [], 'json-server': [] }
  for (let round = 0; round < COMPARE_SETTINGS.rounds; round++) {
    const stores = await startStores(fixture, join(fixture.dir, `creates-${round}`))
    const targets: Targets = { ceiling, ...stores }
    try {
      for (const target of TARGETS) {
        await loadServer(targets[target], loadOf(target, read, 1))
        await createArtists(`${targets[target].url}${pathOn(target, c)}`, COMPARE_SETTINGS.warmUpCreates)
      }
      for (const target of orderOf(round)) {
        const run = await measureRun(target, targets[target], c)
        runs[target].push(run)
        progress(`${c.label}, round ${round + 1}, ${target}: ${Math.round(run.requestsPerSecond)} req/s`)
      }
    } finally {
      await Promise.all([stores['rock-legends'].stop(), stores['json-server'].stop()])
    }
  }
  return { ...c, runs }
}

/**
 * How long the comparison takes, roughly, in seconds: the reads' warm-ups and rounds, then the creates' rounds, which
 * also start two servers and warm three up (about 10 s).
 */
export const COMPARE_DURATION_SECONDS = (() => {
  const { rounds, seconds, warmUpSeconds } = COMPARE_SETTINGS
  const round = TARGETS.length * seconds
  const reads = COMPARE_CASES.filter((c) => c.method === 'GET').length
  return reads * (TARGETS.length * warmUpSeconds + rounds * round) + rounds * (round + 10)
})()

/**
 * Measures every case on the ceiling, rock-legends (durable) and json-server, all holding the same
 * {@link COMPARE_ARTISTS} artists, with the targets taking turns round after round so that drift in the machine's load
 * falls on all alike.
 */
export async function measureComparison(workDir: string, progress: Progress): Promise<CompareResult[]> {
  const dir = join(workDir, 'compare')
  await mkdir(dir, { recursive: true })
  const fixture = await prepare(dir)
  const responsesFile = join(dir, 'responses.json')
  await Bun.write(responsesFile, JSON.stringify(fixture.responses))
  const ceiling = await startCeiling(responsesFile)
  try {
    const stores = await startStores(fixture, join(dir, 'reads'))
    const targets: Targets = { ceiling, ...stores }
    const results: CompareResult[] = []
    try {
      const reads = fixture.responses.filter((response) => response.method === 'GET')
      for (const response of reads) {
        await assertServes(ceiling, response, 'the ceiling')
        await assertServes(targets['rock-legends'], response, 'rock-legends')
      }
      await assertSameData(targets['json-server'], fixture.responses[0] as CannedResponse)
      for (const c of COMPARE_CASES.filter((each) => each.method === 'GET'))
        results.push(await measureReads(targets, c, progress))
    } finally {
      await Promise.all([stores['rock-legends'].stop(), stores['json-server'].stop()])
    }
    results.push(await measureCreates(fixture, ceiling, progress))
    return results
  } finally {
    await ceiling.stop()
  }
}
