import { copyFile, mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { writeCatalogue } from './catalogue.ts'
import type { CannedResponse } from './ceiling.ts'
import { jsonServerArtistCount, writeJsonServerDb } from './json-server-db.ts'
import { artistCount, CREATE_SCRIPT, createArtists, recordResponse, startStore } from './rock-legends.ts'
import { type ServerProcess, startCeiling, startJsonServer } from './server-process.ts'
import { type Load, type LoadRun, loadServer } from './wrk.ts'

/**
 * The servers compared, in the order of the report: rock-legends as users start it (the default pretty access log,
 * into a file) and with `--log off`.
 */
export const TARGETS = ['ceiling', 'rock-legends', 'rock-legends --log off', 'json-server'] as const
/** One of the compared servers. */
export type Target = (typeof TARGETS)[number]
/** The compared servers that hold a store: all but the ceiling. */
const STORES = ['rock-legends', 'rock-legends --log off', 'json-server'] as const
type Store = (typeof STORES)[number]

/** Artists (5 albums each) in every store of the comparison. */
export const COMPARE_ARTISTS = 1_000

/**
 * Settings of the comparison: wrk connections for reads and creates, seconds per measured run, rounds (each target
 * once per round), the timed warm-up of reads and the warm-up creates sent before a store's first measured create.
 */
export const COMPARE_SETTINGS = {
  readConnections: 32,
  createConnections: 32,
  seconds: 5,
  rounds: 6,
  warmUpSeconds: 2,
  warmUpCreates: 32,
}

/** A ratio the report shows: the rate of `of` over that of `over`, held against `goal` when it has one. */
export interface Ratio {
  of: Target
  over: Target
  goal?: number
}

/** A request measured on every target, and the ratios between targets the report shows. */
export interface CompareCase {
  label: string
  method: 'GET' | 'POST'
  /** The path on rock-legends, which the ceiling serves too. */
  path: string
  /** The same request in json-server's API. */
  jsonServerPath: string
  ratios: readonly Ratio[]
}

/** The ratios of a read: the goals against the ceiling, json-server and the log's cost (≤ 10%), then context. */
const readRatios = (ceiling: number): Ratio[] => [
  { of: 'rock-legends', over: 'ceiling', goal: ceiling },
  { of: 'rock-legends', over: 'rock-legends --log off', goal: 0.9 },
  { of: 'rock-legends', over: 'json-server', goal: 10 },
  { of: 'rock-legends --log off', over: 'ceiling' },
]

const MIDDLE = COMPARE_ARTISTS / 2
/** The requests of the comparison. */
const COMPARE_CASES: readonly CompareCase[] = [
  {
    label: 'Get one artist',
    method: 'GET',
    path: `/api/v1/artists/${MIDDLE}`,
    jsonServerPath: `/artists/${MIDDLE}`,
    ratios: readRatios(0.85),
  },
  {
    label: 'List page',
    method: 'GET',
    path: '/api/v1/artists?limit=10&offset=0',
    jsonServerPath: '/artists?_page=1&_per_page=10',
    ratios: readRatios(0.75),
  },
  {
    label: 'Create an artist',
    method: 'POST',
    path: '/api/v1/artists',
    jsonServerPath: '/artists',
    ratios: [
      { of: 'rock-legends', over: 'json-server', goal: 3 },
      { of: 'rock-legends', over: 'rock-legends --log off', goal: 0.9 },
      { of: 'rock-legends --log off', over: 'json-server' },
    ],
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

/** What the access log of rock-legends in its default configuration held, counted after the server stopped. */
export interface AccessLogCheck {
  /** Lines for the request of the case, over every server that served it. */
  lines: number
  /** Requests wrk completed in the measured runs, warm-ups and checks not counted: the lines must be at least as many. */
  measuredRequests: number
}

/** Everything the comparison measured. */
export interface Comparison {
  results: CompareResult[]
  /** Per case label. */
  accessLogs: Record<string, AccessLogCheck>
}

type Targets = Record<Target, ServerProcess>
type Stores = Record<Store, ServerProcess>

const noRuns = (): Record<Target, CompareRun[]> => ({
  ceiling: [],
  'rock-legends': [],
  'rock-legends --log off': [],
  'json-server': [],
})

/** Where a case is served on `target`. */
const pathOn = (target: Target, c: CompareCase) => (target === 'json-server' ? c.jsonServerPath : c.path)

/** The order of the targets in round `round`: rotated each round, so none always runs first or last. */
const orderOf = (round: number) => TARGETS.map((_, i) => TARGETS[(i + round) % TARGETS.length] as Target)

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
  if (target === 'json-server') return jsonServerArtistCount(server.url)
  if (target !== 'ceiling') return artistCount(server.url)
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
 * rock-legends' answers to every case for the ceiling (the create last, so the reads see the seeded store). The
 * recorded server runs in the default configuration, so its answers carry an `X-Request-Id` that the ceiling sends too.
 */
async function prepare(dir: string): Promise<Fixture> {
  const catalogue = join(dir, 'catalogue.json')
  const jsonServerDb = join(dir, 'json-server-db.json')
  await writeCatalogue(catalogue, COMPARE_ARTISTS)
  const server = await startStore(join(dir, 'recording'), catalogue)
  try {
    await writeJsonServerDb(server.url, jsonServerDb)
    const responses: CannedResponse[] = []
    for (const c of COMPARE_CASES) responses.push(await recordResponse(server.url, c.method, c.path))
    return { dir, catalogue, jsonServerDb, responses }
  } finally {
    await server.stop()
  }
}

/** Starts both configurations of rock-legends and json-server on fresh copies of the fixture's data, in `dir`. */
async function startStores(fixture: Fixture, dir: string): Promise<Stores> {
  const jsonServerDir = join(dir, 'json-server')
  await mkdir(jsonServerDir, { recursive: true })
  await copyFile(fixture.jsonServerDb, join(jsonServerDir, 'db.json'))
  const started: ServerProcess[] = []
  const start = async (server: Promise<ServerProcess>) => {
    try {
      started.push(await server)
      return started.at(-1) as ServerProcess
    } catch (error) {
      await Promise.all(started.map((each) => each.stop()))
      throw error
    }
  }
  return {
    'rock-legends': await start(startStore(join(dir, 'rock-legends'), fixture.catalogue)),
    'rock-legends --log off': await start(startStore(join(dir, 'rock-legends-log-off'), fixture.catalogue, 'off')),
    'json-server': await start(startJsonServer(join(jsonServerDir, 'db.json'), jsonServerDir)),
  }
}

const stopAll = (stores: Stores) => Promise.all(STORES.map((store) => stores[store].stop()))

/** Counts the access lines of `c` in the log of a stopped server, adding them to `check`. */
async function countAccessLines(server: ServerProcess, c: CompareCase, check: AccessLogCheck): Promise<void> {
  if (!server.logFile) return
  const text = await Bun.file(server.logFile).text()
  const prefix = `${c.method} ${c.path} `
  for (let at = text.indexOf(prefix); at >= 0; at = text.indexOf(prefix, at + prefix.length)) {
    if (at === 0 || text[at - 1] === '\n') check.lines++
  }
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

/** The reads: the same servers throughout, warmed up, then the targets take turns round after round. */
async function measureReads(targets: Targets, c: CompareCase, progress: Progress): Promise<CompareResult> {
  for (const target of TARGETS) await loadServer(targets[target], loadOf(target, c, COMPARE_SETTINGS.warmUpSeconds))
  const runs = noRuns()
  for (let round = 0; round < COMPARE_SETTINGS.rounds; round++)
    for (const target of orderOf(round)) {
      const run = await measureRun(target, targets[target], c)
      runs[target].push(run)
      progress(`${c.label}, round ${round + 1}, ${target}: ${Math.round(run.requestsPerSecond)} req/s`)
    }
  return { ...c, runs }
}

/**
 * The creates: each round starts the stores afresh on copies of the seeded data, so that every round measures stores
 * of the same size; each is warmed up with one artist-read run and a few creates first.
 */
async function measureCreates(
  fixture: Fixture,
  ceiling: ServerProcess,
  progress: Progress,
): Promise<{ result: CompareResult; accessLog: AccessLogCheck }> {
  const c = COMPARE_CASES.find((each) => each.method === 'POST') as CompareCase
  const read = COMPARE_CASES[0] as CompareCase
  const runs = noRuns()
  const accessLog: AccessLogCheck = { lines: 0, measuredRequests: 0 }
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
      await stopAll(stores)
    }
    accessLog.measuredRequests += runs['rock-legends'].at(-1)?.requests ?? 0
    await countAccessLines(stores['rock-legends'], c, accessLog)
  }
  return { result: { ...c, runs }, accessLog }
}

/**
 * How long the comparison takes, roughly, in seconds: the reads' warm-ups and rounds, then the creates' rounds, which
 * also start three servers and warm four up (about 12 s).
 */
export const COMPARE_DURATION_SECONDS = (() => {
  const { rounds, seconds, warmUpSeconds } = COMPARE_SETTINGS
  const round = TARGETS.length * seconds
  const reads = COMPARE_CASES.filter((c) => c.method === 'GET').length
  return reads * (TARGETS.length * warmUpSeconds + rounds * round) + rounds * (round + 12)
})()

/**
 * Measures every case on the ceiling, rock-legends in its default configuration and with `--log off` (both durable),
 * and json-server, all holding the same {@link COMPARE_ARTISTS} artists, with the targets taking turns round after
 * round so that drift in the machine's load falls on all alike. Then counts the access lines the default
 * configuration wrote, once its servers have stopped (SIGTERM).
 */
export async function measureComparison(workDir: string, progress: Progress): Promise<Comparison> {
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
        for (const store of ['rock-legends', 'rock-legends --log off'] as const)
          await assertServes(targets[store], response, store)
      }
      await assertSameData(targets['json-server'], fixture.responses[0] as CannedResponse)
      for (const c of COMPARE_CASES.filter((each) => each.method === 'GET'))
        results.push(await measureReads(targets, c, progress))
    } finally {
      await stopAll(stores)
    }
    const accessLogs: Record<string, AccessLogCheck> = {}
    for (const result of results) {
      const check = { lines: 0, measuredRequests: 0 }
      for (const run of result.runs['rock-legends']) check.measuredRequests += run.requests
      await countAccessLines(stores['rock-legends'], result, check)
      accessLogs[result.label] = check
    }
    const creates = await measureCreates(fixture, ceiling, progress)
    results.push(creates.result)
    accessLogs[creates.result.label] = creates.accessLog
    for (const [label, check] of Object.entries(accessLogs))
      if (check.lines < check.measuredRequests)
        throw new Error(`${label}: the access log holds ${check.lines} lines for ${check.measuredRequests} requests`)
    return { results, accessLogs }
  } finally {
    await ceiling.stop()
  }
}
