import { mkdir, readdir, rm, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { writeCatalogue } from './catalogue.ts'
import { API_KEY, artistCount, CREATE_BODY, CREATE_SCRIPT, createArtists, startStore } from './rock-legends.ts'
import type { Memory, ServerProcess } from './server-process.ts'
import { type Load, type LoadRun, loadServer } from './wrk.ts'

/** Store sizes of the scale benchmark, in artists (5 albums each). */
const SCALE_SIZES = [100, 1_000, 10_000, 100_000] as const

/**
 * Settings of the scale benchmark: start-ups timed per size, read rounds (each size once per round), wrk connections
 * and seconds of the read and write runs, the timed warm-up of each read and the warm-up creates.
 */
export const SCALE_SETTINGS = {
  startups: 5,
  readRounds: 3,
  readConnections: 64,
  readSeconds: 4,
  writeConnections: 32,
  writeSeconds: 5,
  warmUpSeconds: 2,
  warmUpCreates: 32,
}

const PUT_SCRIPT = join(import.meta.dir, 'wrk', 'put-artist.lua')

/** Milliseconds from spawning the process to its ready line, and to its first 200 from `GET /healthz`. */
export interface StartupTime {
  readyMs: number
  healthyMs: number
}

/** A write run, with the store's artists before and after it. */
export interface WriteRun extends LoadRun {
  artistsBefore: number
  artistsAfter: number
}

/** What the scale benchmark measured at one store size. Sizes are bytes; `startups` and reads are in round order. */
export interface ScaleResult {
  artists: number
  albums: number
  /** Milliseconds from spawning with `--seed=FILE` on an empty store to the ready line (the store written). */
  seedMs: number
  /** Start-ups on the seeded store, without `--seed`. */
  startups: StartupTime[]
  /** The store's files once seeded, and after the write runs. */
  dataBytes: number
  dataBytesAfterWrites: number
  /** The server's resident memory once every size's reads are done, and right after its write runs. */
  memoryAfterReads: Memory
  memoryAfterWrites: Memory
  oneArtist: LoadRun[]
  listPage: LoadRun[]
  /** Replaces of random existing artists (`PUT /api/v1/artists/{id}`): the store keeps its size. */
  replaces: WriteRun
  /** Creates (`POST /api/v1/artists`): the store grows while they are measured. */
  creates: WriteRun
}

/** The paths of the read runs at `artists` artists: the artist in the middle, and the last full list page. */
export const scaleReadPaths = (artists: number) => ({
  oneArtist: `/api/v1/artists/${Math.ceil(artists / 2)}`,
  listPage: `/api/v1/artists?limit=10&offset=${artists - 10}`,
})

/** A seeded store of one size, and the server currently running on it. */
interface Store {
  artists: number
  albums: number
  dir: string
  seedMs: number
  dataBytes: number
  startups: StartupTime[]
  server?: ServerProcess
}

type Progress = (line: string) => void

/** The total size of the files in `dir` (the data file and whatever the store keeps beside it). */
async function directoryBytes(dir: string): Promise<number> {
  const files = await readdir(dir)
  const sizes = await Promise.all(files.map(async (file) => (await stat(join(dir, file))).size))
  return sizes.reduce((total, size) => total + size, 0)
}

/** Writes a catalogue of `artists` artists in `dir`, seeds a store from it and stops the server again. */
async function seedStore(dir: string, artists: number): Promise<Store> {
  const catalogue = join(dir, 'catalogue.json')
  const albums = await writeCatalogue(catalogue, artists)
  const storeDir = join(dir, 'store')
  const seeding = await startStore(storeDir, catalogue, 'off')
  const seeded = await artistCount(seeding.url).finally(() => seeding.stop())
  if (seeded !== artists) throw new Error(`the store holds ${seeded} artists, not ${artists}`)
  await rm(catalogue)
  const dataBytes = await directoryBytes(storeDir)
  return { artists, albums, dir: storeDir, seedMs: seeding.readyMs, dataBytes, startups: [] }
}

/** Stops the store's server, if any, starts a new one and times it up to its first answered `GET /healthz`. */
async function restart(store: Store): Promise<void> {
  await store.server?.stop()
  const server = await startStore(store.dir, undefined, 'off')
  store.server = server
  const response = await fetch(`${server.url}/healthz`)
  await response.arrayBuffer()
  const healthyMs = performance.now() - server.spawnedAt
  if (response.status !== 200) throw new Error(`GET /healthz answered ${response.status}`)
  store.startups.push({ readyMs: server.readyMs, healthyMs })
}

/** The running server of `store`. */
function serverOf(store: Store): ServerProcess {
  if (!store.server) throw new Error(`the store of ${store.artists} artists is not running`)
  return store.server
}

/** The stores in the order of round `round`: rotated each round, so that none always runs first or last. */
const orderOf = <T>(items: readonly T[], round: number) => items.map((_, i) => items[(i + round) % items.length] as T)

/** Reads each store's middle artist and last list page, warmed up, the stores taking turns round after round. */
async function measureReads(stores: readonly Store[], progress: Progress) {
  const { readRounds, readConnections, readSeconds, warmUpSeconds } = SCALE_SETTINGS
  const runs = new Map(stores.map((store) => [store, { oneArtist: [] as LoadRun[], listPage: [] as LoadRun[] }]))
  const read = (store: Store, path: string, seconds: number) =>
    loadServer(serverOf(store), { path, connections: readConnections, seconds })
  for (const store of stores)
    for (const path of Object.values(scaleReadPaths(store.artists))) await read(store, path, warmUpSeconds)
  for (let round = 0; round < readRounds; round++) {
    progress(`scale: reads, round ${round + 1} of ${readRounds}`)
    for (const store of orderOf(stores, round)) {
      const paths = scaleReadPaths(store.artists)
      const result = runs.get(store)
      result?.oneArtist.push(await read(store, paths.oneArtist, readSeconds))
      result?.listPage.push(await read(store, paths.listPage, readSeconds))
    }
  }
  return runs
}

/** Runs `load` on `server` with the store's artist count before and after. */
async function measureWrites(server: ServerProcess, load: Load): Promise<WriteRun> {
  const artistsBefore = await artistCount(server.url)
  const run = await loadServer(server, load)
  return { ...run, artistsBefore, artistsAfter: await artistCount(server.url) }
}

/** Replaces, then creates, on the store's server after a few warm-up creates; then stops it. */
async function measureWritesOn(store: Store) {
  const server = serverOf(store)
  try {
    await createArtists(`${server.url}/api/v1/artists`, SCALE_SETTINGS.warmUpCreates)
    const writes = { connections: SCALE_SETTINGS.writeConnections, seconds: SCALE_SETTINGS.writeSeconds }
    const replaces = await measureWrites(server, {
      path: '/',
      ...writes,
      script: PUT_SCRIPT,
      scriptArgs: [API_KEY, String(store.artists), CREATE_BODY],
    })
    const creates = await measureWrites(server, { path: '/api/v1/artists', ...writes, ...CREATE_SCRIPT })
    return { replaces, creates, memoryAfterWrites: await server.memory() }
  } finally {
    await server.stop()
    store.server = undefined
  }
}

/**
 * Seeds a store of every size of {@link SCALE_SIZES}, then, the sizes taking turns so that a noisy moment falls on all
 * alike: times start-ups without `--seed`, runs reads on the last start of each, and notes memory. Writes come last,
 * one size after another (each grows its store). The files are removed afterwards.
 */
export async function measureScale(workDir: string, progress: Progress): Promise<ScaleResult[]> {
  const dir = join(workDir, 'scale')
  const stores: Store[] = []
  try {
    for (const artists of SCALE_SIZES) {
      progress(`scale: seeding ${artists.toLocaleString('en-US')} artists`)
      const storeDir = join(dir, String(artists))
      await mkdir(storeDir, { recursive: true })
      stores.push(await seedStore(storeDir, artists))
    }
    progress(`scale: ${SCALE_SETTINGS.startups} start-ups of each store`)
    for (let round = 0; round < SCALE_SETTINGS.startups; round++)
      for (const store of orderOf(stores, round)) await restart(store)
    const reads = await measureReads(stores, progress)
    const memoryAfterReads = await Promise.all(stores.map((store) => serverOf(store).memory()))
    const results: ScaleResult[] = []
    for (const [i, store] of stores.entries()) {
      progress(`scale: writes on ${store.artists.toLocaleString('en-US')} artists`)
      const writes = await measureWritesOn(store)
      results.push({
        artists: store.artists,
        albums: store.albums,
        seedMs: store.seedMs,
        startups: store.startups,
        dataBytes: store.dataBytes,
        ...(reads.get(store) as Pick<ScaleResult, 'oneArtist' | 'listPage'>),
        memoryAfterReads: memoryAfterReads[i] as Memory,
        ...writes,
        dataBytesAfterWrites: await directoryBytes(store.dir),
      })
    }
    return results
  } finally {
    await Promise.all(stores.map((store) => store.server?.stop()))
    await rm(dir, { recursive: true, force: true })
  }
}
