#!/usr/bin/env bun
// Soak: 60 s of mixed reads and writes at 256 connections against the compiled executable on 127.0.0.1, then
// checks that every acknowledged write is there (and still there after a restart), and how resident memory moved.
//
//   bun run bench:soak                      # 60 s, 256 connections; appends its figures to bench/RESULTS.md
//   bun bench/soak.ts --seconds 10 --connections 64 --no-record   # a quick try, printed only
//
// Not part of `bun test`. Each connection is one loop of requests, each waiting for the previous answer: 80% reads
// (a list page, an artist, an artist's albums, an album), 20% writes with the service key. A loop first creates
// its own artists and albums (up to 8 and 8), then replaces its own artists: once every loop has its records the
// store stops growing, so memory that still grows after that is the server's, not the data's. A write is
// "acknowledged" when it got its 201 or 200; it is then expected, field for field, in the final read-back.

import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { spawnSync } from 'bun'
import { ensureBinary } from '../test/support/binary.ts'
import { describeMachine } from './machine.ts'
import { table } from './markdown.ts'

const ROOT = join(import.meta.dir, '..')
const RESULTS = join(ROOT, 'bench/RESULTS.md')
const MARKER = '<!-- Everything below this line is kept when `bun run bench` rewrites this file. -->'
const SECTION = '## Soak: 60 s of mixed reads and writes at 256 connections'
const KEY = 'soak-service-key'

function option(name: string, fallback: number): number {
  const at = process.argv.indexOf(`--${name}`)
  return at >= 0 ? Number(process.argv[at + 1]) : fallback
}
const SECONDS = option('seconds', 60)
const CONNECTIONS = option('connections', 256)
const RECORD = !process.argv.includes('--no-record')
const WARM_UP_S = Math.min(15, SECONDS / 4)
const SAMPLE_MS = 2000
const OWN_ARTISTS = 8
const OWN_ALBUMS = 8

interface Artist {
  id: number
  name: string
  description: string | null
  image: string | null
  band: string | null
}
interface Album {
  id: number
  artistId: number
  name: string
  year: number | null
  image: string | null
}

// --- the server ------------------------------------------------------------------------------------------------

async function start(binary: string, data: string) {
  const child = Bun.spawn(
    [binary, '--port', '0', '--host', '127.0.0.1', '--data', data, '--seed', '--api-key', KEY, '--log', 'off'],
    {
      stdout: 'pipe',
      stderr: 'inherit',
    },
  )
  const reader = child.stdout.getReader()
  let line = ''
  while (!line.includes('\n')) {
    const { value, done } = await reader.read()
    if (done) throw new Error('the server exited before it was ready')
    line += new TextDecoder().decode(value)
  }
  reader.releaseLock()
  const url = /listening on (http:\/\/\S+)/.exec(line)?.[1]
  if (!url) throw new Error(`unexpected ready line: ${line}`)
  return { child, url }
}

const rssMiB = (pid: number) => {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  return Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? Number.NaN) / 1024
}

/** Established TCP connections to `port`, as `ss` counts them (the server's side). */
function connectionsTo(port: number): number {
  const out = spawnSync(['ss', '-Htn', 'state', 'established', `( sport = :${port} )`], { stdout: 'pipe' })
  return out.exitCode === 0 ? out.stdout.toString().trim().split('\n').filter(Boolean).length : Number.NaN
}

// --- the load ----------------------------------------------------------------------------------------------------

interface Tally {
  requests: number
  reads: number
  writes: number
  acknowledged: number
  errors: number
  samples: string[]
  latencies: { reads: number[]; writes: number[] }
}

const tally: Tally = {
  requests: 0,
  reads: 0,
  writes: 0,
  acknowledged: 0,
  errors: 0,
  samples: [],
  latencies: { reads: [], writes: [] },
}
/** The last acknowledged state of every record the load created or replaced, by id. */
const artists = new Map<number, Artist>()
const albums = new Map<number, Album>()

const random = (n: number) => Math.floor(Math.random() * n)
const json = { 'content-type': 'application/json', 'x-api-key': KEY }

async function timed(kind: 'reads' | 'writes', request: () => Promise<Response>, expected: number) {
  const started = performance.now()
  let problem: string | undefined
  let body: unknown
  try {
    const response = await request()
    const text = await response.text()
    if (response.status !== expected) problem = `${response.status} ${text.slice(0, 200)}`
    else body = text ? JSON.parse(text) : undefined
  } catch (error) {
    problem = (error as Error).message
  }
  const ms = performance.now() - started
  tally.requests += 1
  tally[kind] += 1
  // A sample of latencies is enough for percentiles, and keeps the load generator's own memory flat.
  if (tally.latencies[kind].length < 200_000) tally.latencies[kind].push(ms)
  if (problem !== undefined) {
    tally.errors += 1
    if (tally.samples.length < 10) tally.samples.push(problem)
    return undefined
  }
  if (kind === 'writes') tally.acknowledged += 1
  return body
}

async function loop(url: string, worker: number, until: number, seeded: { artists: number[]; albums: number }) {
  const own: number[] = []
  let ownAlbums = 0
  for (let i = 0; performance.now() < until; i++) {
    if (Math.random() < 0.8) {
      const known = [...seeded.artists, ...own]
      const artist = known[random(known.length)] as number
      const pick = random(4)
      if (pick === 0)
        await timed('reads', () => fetch(`${url}/api/v1/artists?limit=${1 + random(50)}&offset=${random(40)}`), 200)
      else if (pick === 1) await timed('reads', () => fetch(`${url}/api/v1/artists/${artist}`), 200)
      else if (pick === 2) await timed('reads', () => fetch(`${url}/api/v1/artists/${artist}/albums?limit=20`), 200)
      else {
        const album = 1 + random(seeded.albums)
        // Seeded albums belong to known artists; ask through the artist the album names itself.
        const found = (await timed(
          'reads',
          () => fetch(`${url}/api/v1/artists/${seededAlbumArtist(album)}/albums/${album}`),
          200,
        )) as Album | undefined
        if (found && found.id !== album) {
          tally.errors += 1
          tally.samples.push(`album ${album} answered as ${found.id}`)
        }
      }
      continue
    }
    const name = `Soak ${worker}.${i}`
    if (own.length < OWN_ARTISTS) {
      const body = { name, band: `Band ${worker}`, description: `Created by connection ${worker}, request ${i}.` }
      const created = (await timed(
        'writes',
        () => fetch(`${url}/api/v1/artists`, { method: 'POST', headers: json, body: JSON.stringify(body) }),
        201,
      )) as Artist | undefined
      if (created) {
        own.push(created.id)
        artists.set(created.id, created)
      }
    } else if (ownAlbums < OWN_ALBUMS && Math.random() < 0.5) {
      const artistId = own[random(own.length)] as number
      const body = { name: `${name} album`, year: 1970 + random(50) }
      const created = (await timed(
        'writes',
        () =>
          fetch(`${url}/api/v1/artists/${artistId}/albums`, {
            method: 'POST',
            headers: json,
            body: JSON.stringify(body),
          }),
        201,
      )) as Album | undefined
      if (created) {
        ownAlbums += 1
        albums.set(created.id, created)
      }
    } else {
      const id = own[random(own.length)] as number
      const body = { name: `${name} (replaced)`, band: null, description: 'x'.repeat(random(400)) }
      const replaced = (await timed(
        'writes',
        () => fetch(`${url}/api/v1/artists/${id}`, { method: 'PUT', headers: json, body: JSON.stringify(body) }),
        200,
      )) as Artist | undefined
      if (replaced) artists.set(replaced.id, replaced)
    }
  }
}

let albumArtists: number[] = []
const seededAlbumArtist = (album: number) => albumArtists[album] as number

// --- the read-back -------------------------------------------------------------------------------------------------

async function readBack(url: string) {
  const stored = new Map<number, Artist>()
  for (let next: string | null = '/api/v1/artists?limit=100'; next; ) {
    const page = (await (await fetch(`${url}${next}`)).json()) as { data: Artist[]; meta: { next: string | null } }
    for (const artist of page.data) stored.set(artist.id, artist)
    next = page.meta.next
  }
  const storedAlbums = new Map<number, Album>()
  const owners = new Set([...albums.values()].map((album) => album.artistId))
  for (const artistId of owners) {
    const page = (await (await fetch(`${url}/api/v1/artists/${artistId}/albums?limit=100`)).json()) as { data: Album[] }
    for (const album of page.data) storedAlbums.set(album.id, album)
  }
  const missing: string[] = []
  for (const [id, artist] of artists)
    if (JSON.stringify(stored.get(id)) !== JSON.stringify(artist)) missing.push(`artist ${id}`)
  for (const [id, album] of albums)
    if (JSON.stringify(storedAlbums.get(id)) !== JSON.stringify(album)) missing.push(`album ${id}`)
  return { artists: stored.size, missing }
}

// --- the run -------------------------------------------------------------------------------------------------------

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? Number.NaN
}

/** Least-squares slope of `points`, in y units per x unit. */
function slope(points: [number, number][]) {
  const n = points.length
  const mx = points.reduce((sum, [x]) => sum + x, 0) / n
  const my = points.reduce((sum, [, y]) => sum + y, 0) / n
  const sxy = points.reduce((sum, [x, y]) => sum + (x - mx) * (y - my), 0)
  const sxx = points.reduce((sum, [x]) => sum + (x - mx) ** 2, 0)
  return sxx === 0 ? 0 : sxy / sxx
}

async function main() {
  // Built with `bun run build` unless it is newer than every source, and renamed into place: a benchmark running
  // beside this one never starts a half-written executable.
  const binary = await ensureBinary()
  const dir = mkdtempSync(join(tmpdir(), 'rock-legends-soak-'))
  const data = join(dir, 'db.json')
  const command = `bun run bench:soak (bench/soak.ts: ${SECONDS} s, ${CONNECTIONS} connections, 80% reads / 20% writes)`
  console.log(`${command}\nserver: ${binary} --port 0 --host 127.0.0.1 --data ${data} --seed --api-key … --log off`)
  let server = await start(binary, data)
  const port = Number(new URL(server.url).port)

  const list = (await (await fetch(`${server.url}/api/v1/artists?limit=100`)).json()) as { data: Artist[] }
  const seeded = { artists: list.data.map((artist) => artist.id), albums: 0 }
  albumArtists = [0]
  for (const id of seeded.artists) {
    const page = (await (await fetch(`${server.url}/api/v1/artists/${id}/albums?limit=100`)).json()) as {
      data: Album[]
    }
    for (const album of page.data) albumArtists[album.id] = id
  }
  seeded.albums = albumArtists.length - 1

  const started = performance.now()
  const until = started + SECONDS * 1000
  const samples: { at: number; rss: number; requests: number; connections: number }[] = []
  const sample = () =>
    samples.push({
      at: (performance.now() - started) / 1000,
      rss: rssMiB(server.child.pid),
      requests: tally.requests,
      connections: connectionsTo(port),
    })
  sample()
  const sampler = setInterval(sample, SAMPLE_MS)
  await Promise.all(Array.from({ length: CONNECTIONS }, (_, worker) => loop(server.url, worker, until, seeded)))
  clearInterval(sampler)
  sample()
  const elapsed = (performance.now() - started) / 1000

  const live = await readBack(server.url)
  const dataBytes = statSync(data).size + (statSync(`${data}.journal`, { throwIfNoEntry: false })?.size ?? 0)
  server.child.kill('SIGTERM')
  const stopCode = await server.child.exited
  server = await start(binary, data)
  const restarted = await readBack(server.url)
  server.child.kill('SIGTERM')
  await server.child.exited
  rmSync(dir, { recursive: true, force: true })

  const warm = samples.filter((each) => each.at >= WARM_UP_S)
  const rssWarm = warm[0]?.rss ?? Number.NaN
  const rssEnd = samples.at(-1)?.rss ?? Number.NaN
  const rssMax = Math.max(...samples.map((each) => each.rss))
  const perMinute = slope(warm.map((each) => [each.at / 60, each.rss]))
  const peakConnections = Math.max(...samples.map((each) => each.connections).filter(Number.isFinite))
  const machine = await describeMachine(
    'not used: the load comes from bench/soak.ts (Bun fetch, one loop per connection)',
  )
  const fmt = (n: number, digits = 1) =>
    n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })

  const lines = [
    SECTION,
    '',
    `Run ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC: \`${command}\`, against \`dist/rock-legends\` on 127.0.0.1 (seeded, a data file in a temporary directory, \`--log off\`). Machine: ${machine.cpu}, ${machine.cores} cores, ${machine.memory}, ${machine.kernel}, Bun ${machine.bun}; the load generator shares the cores with the server.`,
    '',
    table(
      [
        ['Figure', 'left'],
        ['Value', 'right'],
      ],
      [
        [`Duration`, `${fmt(elapsed)} s`],
        [`Requests`, `${tally.requests.toLocaleString('en-US')} (${fmt(tally.requests / elapsed, 0)} req/s)`],
        [`Reads / writes`, `${tally.reads.toLocaleString('en-US')} / ${tally.writes.toLocaleString('en-US')}`],
        [`Errors (every request was valid)`, `${tally.errors}`],
        [
          `Latency p50 / p99, reads`,
          `${fmt(percentile(tally.latencies.reads, 50))} / ${fmt(percentile(tally.latencies.reads, 99))} ms`,
        ],
        [
          `Latency p50 / p99, writes`,
          `${fmt(percentile(tally.latencies.writes, 50))} / ${fmt(percentile(tally.latencies.writes, 99))} ms`,
        ],
        [`Connections established (peak of samples, \`ss\`)`, `${peakConnections}`],
        [`Writes acknowledged (201 or 200)`, `${tally.acknowledged.toLocaleString('en-US')}`],
        [
          `Records checked field by field: the last acknowledged state of every artist and album the load wrote`,
          `${(artists.size + albums.size).toLocaleString('en-US')}`,
        ],
        [`… missing or different at the end of the load`, `${live.missing.length}`],
        [`… missing or different after SIGTERM (exit ${stopCode}) and a restart`, `${restarted.missing.length}`],
        [`Artists stored at the end`, `${live.artists.toLocaleString('en-US')}`],
        [`Data file + journal at the end`, `${fmt(dataBytes / 2 ** 20)} MiB`],
        [
          `RSS after warm-up (${fmt(WARM_UP_S, 0)} s) / at the end / peak`,
          `${fmt(rssWarm)} / ${fmt(rssEnd)} / ${fmt(rssMax)} MiB`,
        ],
        [
          `RSS slope after warm-up (least squares over ${warm.length} samples)`,
          `${perMinute >= 0 ? '+' : ''}${fmt(perMinute, 2)} MiB/min`,
        ],
      ],
    ),
    '',
    `RSS every ${SAMPLE_MS / 1000} s (MiB): ${samples.map((each) => fmt(each.rss, 0)).join(', ')}.`,
  ]
  if (tally.samples.length > 0)
    lines.push('', `First errors: ${tally.samples.map((each) => `\`${each}\``).join('; ')}.`)
  const section = lines.join('\n')
  console.log(`\n${section}\n`)
  if (RECORD && SECONDS === 60 && CONNECTIONS === 256) record(section)
  const failed = tally.errors > 0 || live.missing.length > 0 || restarted.missing.length > 0
  process.exit(failed ? 1 : 0)
}

/** Puts `section` below the marker of bench/RESULTS.md, replacing an earlier soak section, keeping all else. */
function record(section: string) {
  const text = readFileSync(RESULTS, 'utf8')
  const at = text.indexOf(MARKER)
  if (at < 0) throw new Error(`${RESULTS} has no marker line; not writing`)
  const start = text.indexOf(`\n${SECTION}`, at)
  let next = start < 0 ? -1 : text.indexOf('\n## ', start + 1)
  if (next < 0) next = text.length
  const updated =
    start < 0 ? `${text.trimEnd()}\n\n${section}\n` : `${text.slice(0, start)}\n${section}\n${text.slice(next)}`
  writeFileSync(RESULTS, updated)
  console.log(`recorded in ${RESULTS}`)
}

await main()
