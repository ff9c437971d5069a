import { mkdir, rm, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { writeCatalogue } from './catalogue.ts'
import { startRockLegends } from './server-process.ts'
import { runWrk, type WrkResult } from './wrk.ts'

/** Store sizes, in seeded artists, at which writes are measured. */
export const WRITE_STORE_SIZES = [100, 10_000] as const

/**
 * Settings of the write runs. The run is short, and the warm-up a few requests rather than a timed run, because
 * every request adds an artist: the store grows while it is measured, and the report says by how much.
 */
export const WRITE_SETTINGS = { connections: 32, seconds: 5, warmUpRequests: 32 }

const API_KEY = 'bench-key'
const POST_SCRIPT = join(import.meta.dir, 'wrk', 'post-artist.lua')
const WARM_UP_BODY = JSON.stringify({ name: 'Warm-up Artist', band: 'Bench Band' })

/** The durable write run at one store size. */
export interface WriteResult {
  seeded: number
  seededAlbums: number
  /** Artists in the store when the measured run started (after the warm-up) and when it ended. */
  artistsBefore: number
  artistsAfter: number
  /** Size of the data file once the server stopped. */
  fileBytes: number
  run: WrkResult
}

/** Creates one artist, checking that the API key is accepted before wrk counts anything. */
async function createArtist(url: string): Promise<void> {
  const response = await fetch(`${url}/api/v1/artists`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': API_KEY },
    body: WARM_UP_BODY,
  })
  if (response.status !== 201)
    throw new Error(`POST /api/v1/artists answered ${response.status}: ${await response.text()}`)
}

async function artistCount(url: string): Promise<number> {
  const response = await fetch(`${url}/api/v1/artists?limit=1`)
  const page = (await response.json()) as { meta?: { total?: unknown } }
  if (typeof page.meta?.total !== 'number') throw new Error(`cannot read the artist count: ${JSON.stringify(page)}`)
  return page.meta.total
}

/**
 * Seeds a fresh data file with `seeded` artists, then measures `POST /api/v1/artists` with an API key from 32
 * connections; every answer comes after the artist was fsynced. The data directory is removed afterwards.
 */
export async function measureWrites(workDir: string, seeded: number): Promise<WriteResult> {
  const dir = join(workDir, `writes-${seeded}`)
  await mkdir(dir, { recursive: true })
  try {
    const catalogue = join(dir, 'catalogue.json')
    const dataFile = join(dir, 'db.json')
    const seededAlbums = await writeCatalogue(catalogue, seeded)
    const server = await startRockLegends([`--seed=${catalogue}`, '--data', dataFile, '--api-key', API_KEY])
    let result: Omit<WriteResult, 'fileBytes'>
    try {
      const seededCount = await artistCount(server.url)
      if (seededCount !== seeded) throw new Error(`the store holds ${seededCount} artists, not ${seeded}`)
      const warmUps = Array.from({ length: WRITE_SETTINGS.warmUpRequests }, () => createArtist(server.url))
      await Promise.all(warmUps)
      const artistsBefore = await artistCount(server.url)
      const run = await runWrk({
        url: `${server.url}/api/v1/artists`,
        connections: WRITE_SETTINGS.connections,
        seconds: WRITE_SETTINGS.seconds,
        script: POST_SCRIPT,
        scriptArgs: [API_KEY],
      })
      result = { seeded, seededAlbums, artistsBefore, artistsAfter: await artistCount(server.url), run }
    } finally {
      await server.stop()
    }
    return { ...result, fileBytes: (await stat(dataFile)).size }
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}
