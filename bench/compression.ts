/**
 * `bun bench/compression.ts [BEFORE] [--rounds N] [--seconds S]`: what compressing answers by `Accept-Encoding` does,
 * side by side with a build that compressed nothing. Compression should shrink what goes on the wire (a list page,
 * `/docs`' script of several megabytes) without slowing the answers it leaves alone (one artist, under 1 KiB) or
 * costing the answers it compresses more than their bytes save.
 *
 * BEFORE is a committed build (74661e1, the last that compressed nothing, by default; built from `git archive` in a
 * temporary directory, bench/two-builds.ts), AFTER this working tree's `dist/rock-legends` (built first when older
 * than its sources). Both serve the same 1,000 generated artists (JSON data files), as users start them (durable
 * writes, the pretty access log into a file). Three parts:
 *
 * - **Sizes:** the bytes of each answer's body on the wire (fetched with `decompress: false`) and its
 *   `Content-Encoding`, for GET one artist, a list page of 100, `/docs`' script, `/openapi.json` and `/`, asked as a
 *   browser asks (`gzip, deflate, br, zstd`), with `gzip` alone, and with no `Accept-Encoding`.
 * - **Levels:** each coding at a few levels on the bodies compressed per request (the list page of 100 and
 *   `/openapi.json`, as AFTER sends them uncompressed), in this process: the size and the CPU time per kilobyte, to
 *   hold the quick levels of src/http/compression.ts (zstd 3, br 4, gzip 6) against the others.
 * - **Speed:** `wrk -t2 -c32` with a browser's `Accept-Encoding` on GET one artist and on the list page of 100. Every
 *   round starts the servers afresh, warms each up on both requests (so that the list page's compressed forms are
 *   kept), then loads them all at once, each by its own wrk, so that they share whatever else the machine does at
 *   that moment; the order they start in is rotated every round. A third server, a second BEFORE, is the control:
 *   its ratio to BEFORE is what noise alone gives. Prints each server's median req/s, CPU per request (/proc) and
 *   bytes per answer on the wire (wrk's count, headers included), and each ratio as the median of its per-round
 *   ratios.
 *
 * On a shared 2-core machine only the ratios of one run mean anything: each server gets a share of the cores, and
 * the same build measured an hour later differs by more than most changes do.
 *
 * @example
 * bun bench/compression.ts
 * bun bench/compression.ts HEAD~3 --rounds 8 --seconds 3
 */
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import zlib from 'node:zlib'
import { SCALAR_VERSION } from '../src/docs/scalar.ts'
import { ensureBinary } from '../test/support/binary.ts'
import { writeCatalogue } from './catalogue.ts'
import { measuredOn } from './machine.ts'
import { type Column, count, median, table } from './markdown.ts'
import { startStore } from './rock-legends.ts'
import type { ServerProcess } from './server-process.ts'
import { baselineBinary } from './two-builds.ts'
import { addRound, type Load, loadRound, loadServer, type SideBySideRuns, sideBySideTables } from './wrk.ts'

const USAGE = 'usage: bun bench/compression.ts [BEFORE] [--rounds N] [--seconds S]'
const { values, positionals } = parseArgs({
  args: process.argv.slice(2),
  options: { rounds: { type: 'string', default: '5' }, seconds: { type: 'string', default: '5' } },
  allowPositionals: true,
})
if (positionals.length > 1) throw new Error(USAGE)
const BEFORE = positionals[0] ?? '74661e1'
const rounds = Number(values.rounds)
const seconds = Number(values.seconds)
if (!(rounds >= 1 && seconds >= 1)) throw new Error(USAGE)

const progress = (line: string) => process.stderr.write(`compression: ${line}\n`)
/** Artists of the generated catalogue every server holds, as in bench/two-builds.ts. */
const ARTISTS = 1000
/** What a browser sends: Chrome's and Firefox's `Accept-Encoding`. */
const BROWSER = 'gzip, deflate, br, zstd'

const REQUESTS = [
  { label: 'GET one artist', path: `/api/v1/artists/${ARTISTS / 2}` },
  { label: 'List page of 100', path: '/api/v1/artists?limit=100&offset=0' },
  { label: "`/docs`' script", path: `/docs/assets/scalar-api-reference-${SCALAR_VERSION}.js` },
  { label: '`/openapi.json`', path: '/openapi.json' },
  { label: '`/`, the catalogue page', path: '/' },
] as const
/** Each `Accept-Encoding` asked with, by its label; none sends no header at all, as `curl` does by default. */
const ACCEPTS: readonly [label: string, header: string | undefined][] = [
  [`\`${BROWSER}\` (a browser)`, BROWSER],
  ['`gzip`', 'gzip'],
  ['none', undefined],
]

/** The body of `path` as it comes off the wire, and its coding, asked with `accept`. */
async function onTheWire(base: string, path: string, accept: string | undefined) {
  const headers: Record<string, string> = accept === undefined ? {} : { 'accept-encoding': accept }
  // Without `decompress: false`, fetch would send an `Accept-Encoding` of its own and decode the body.
  const response = await fetch(`${base}${path}`, { headers, decompress: false })
  const body = new Uint8Array(await response.arrayBuffer())
  if (response.status !== 200) throw new Error(`GET ${path} answered ${response.status}`)
  return { body, coding: response.headers.get('content-encoding') ?? 'none' }
}

const bytes = (n: number) => `${count(n)} B`

/** The sizes table: each request, each `Accept-Encoding`, on both builds. */
async function sizes(before: string, after: string): Promise<string> {
  const columns: Column[] = [
    ['Request', 'left'],
    ['Accept-Encoding', 'left'],
    ['Before: body on the wire (coding)', 'right'],
    ['After: body on the wire (coding)', 'right'],
    ['After / before', 'right'],
  ]
  const rows: string[][] = []
  for (const { label, path } of REQUESTS)
    for (const [accept, header] of ACCEPTS) {
      const was = await onTheWire(before, path, header)
      const is = await onTheWire(after, path, header)
      rows.push([
        label,
        accept,
        `${bytes(was.body.byteLength)} (${was.coding})`,
        `${bytes(is.body.byteLength)} (${is.coding})`,
        `${(is.body.byteLength / was.body.byteLength).toFixed(2)}×`,
      ])
    }
  return table(columns, rows)
}

/** A coding at a level, as the server calls it. */
interface Level {
  coding: string
  level: number
  compress(body: Uint8Array<ArrayBuffer>): Uint8Array
}

const brotli = (level: number) => (body: Uint8Array<ArrayBuffer>) =>
  zlib.brotliCompressSync(body, {
    params: { [zlib.constants.BROTLI_PARAM_QUALITY]: level, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: body.byteLength },
  })

/** Each coding at a few levels, the quick levels the server uses (zstd 3, br 4, gzip 6) among them. */
const LEVELS: readonly Level[] = [
  ...[1, 3, 6, 12].map((level) => ({
    coding: 'zstd',
    level,
    compress: (body: Uint8Array<ArrayBuffer>) => Bun.zstdCompressSync(body, { level }),
  })),
  ...[1, 4, 6, 11].map((level) => ({ coding: 'br', level, compress: brotli(level) })),
  ...([1, 6, 9] as const).map((level) => ({
    coding: 'gzip',
    level,
    compress: (body: Uint8Array<ArrayBuffer>) => Bun.gzipSync(body, { level }),
  })),
]

/**
 * The levels table: for each body compressed per request, each coding and level's size and CPU time per kilobyte of
 * input, the median of 15 rounds of enough repetitions to take about 20 ms (after one warm-up round).
 */
async function levels(after: string): Promise<string> {
  const bodies = [REQUESTS[1], REQUESTS[3]]
  const columns: Column[] = [
    ['Body (uncompressed)', 'left'],
    ['Coding, level', 'left'],
    ['Compressed', 'right'],
    ['Of the body', 'right'],
    ['Time per kB of body', 'right'],
  ]
  const rows: string[][] = []
  for (const { label, path } of bodies) {
    const { body } = await onTheWire(after, path, undefined)
    for (const { coding, level, compress } of LEVELS) {
      const size = compress(body).byteLength
      const once = performance.now()
      compress(body)
      const repeat = Math.max(1, Math.ceil(20 / Math.max(performance.now() - once, 0.01)))
      const times: number[] = []
      for (let round = -1; round < 15; round++) {
        const start = process.cpuUsage()
        for (let i = 0; i < repeat; i++) compress(body)
        const { user, system } = process.cpuUsage(start)
        if (round >= 0) times.push((user + system) / repeat)
      }
      rows.push([
        `${label}, ${bytes(body.byteLength)}`,
        `${coding} ${level}`,
        bytes(size),
        `${((100 * size) / body.byteLength).toFixed(1)}%`,
        `${((median(times) * 1000) / body.byteLength).toFixed(2)} µs`,
      ])
    }
  }
  return table(columns, rows)
}

/** The servers loaded side by side: each build, and the control, a second BEFORE. */
const SERVERS = ['before', 'after', 'before, again'] as const
/** The requests loaded with wrk, as a browser asks them. */
const LOADED = REQUESTS.slice(0, 2)

const loadOf = (path: string, seconds: number): Load => ({
  path,
  seconds,
  connections: 32,
  headers: { 'accept-encoding': BROWSER },
})

/** The speed tables: req/s and CPU per request, the ratios, and the bytes per answer as wrk counted them. */
async function speed(binaries: Record<(typeof SERVERS)[number], string>, catalogue: string, dir: string) {
  const runs: SideBySideRuns = {}
  for (let round = 0; round < rounds; round++) {
    const started: Record<string, ServerProcess> = {}
    const roundDir = join(dir, `round-${round}`)
    // Started, warmed and handed to wrk in an order rotated every round, so that no server is always first.
    const order = SERVERS.map((_, i) => SERVERS[(i + round) % SERVERS.length] as (typeof SERVERS)[number])
    try {
      for (const name of order)
        started[name] = await startStore(
          join(roundDir, name.replaceAll(/\W+/g, '-')),
          catalogue,
          'default',
          binaries[name],
        )
      for (const name of order)
        for (const { path } of LOADED) await loadServer(started[name] as ServerProcess, loadOf(path, 1))
      for (const { label, path } of LOADED)
        addRound(runs, label, await loadRound(started, () => loadOf(path, seconds), round, true))
    } finally {
      await Promise.all(Object.values(started).map((server) => server.stop()))
      rmSync(roundDir, { recursive: true, force: true })
    }
    progress(`round ${round + 1} of ${rounds}`)
  }
  const labels = LOADED.map(({ label }) => label)
  const wire = table(
    [
      ['Request', 'left'],
      ['Server', 'left'],
      ['Bytes per answer on the wire, headers included (wrk, median)', 'right'],
    ],
    labels.flatMap((label) =>
      SERVERS.map((name) => {
        const list = runs[label]?.[name] ?? []
        return [label, name, bytes(median(list.map((run) => run.bytesRead / run.requests)))]
      }),
    ),
  )
  const ratios: [string, string][] = [
    ['after', 'before'],
    ['before, again', 'before'],
  ]
  return [...sideBySideTables(labels, SERVERS, ratios, runs), '', wire].join('\n')
}

const dir = mkdtempSync(join(tmpdir(), 'rl-compression-'))
let baseline: Awaited<ReturnType<typeof baselineBinary>> | undefined
try {
  progress(`building ${BEFORE}`)
  baseline = await baselineBinary(BEFORE)
  progress('building this working tree')
  // Copied aside, so that a rebuild by other work meanwhile does not change what is measured.
  const after = join(dir, 'after-rock-legends')
  copyFileSync(await ensureBinary(), after)
  const head = (await Bun.$`git rev-parse --short HEAD`.cwd(join(import.meta.dir, '..')).text()).trim()
  const catalogue = join(dir, 'catalogue.json')
  await writeCatalogue(catalogue, ARTISTS)

  progress('sizes and levels')
  const pair = {
    before: await startStore(join(dir, 'sizes-before'), catalogue, 'off', baseline.binary),
    after: await startStore(join(dir, 'sizes-after'), catalogue, 'off', after),
  }
  let sizesTable: string
  let levelsTable: string
  try {
    sizesTable = await sizes(pair.before.url, pair.after.url)
    levelsTable = await levels(pair.after.url)
  } finally {
    await Promise.all([pair.before.stop(), pair.after.stop()])
  }

  const loadBefore = loadavg()[0] ?? 0
  const speedTables = await speed({ before: baseline.binary, after, 'before, again': baseline.binary }, catalogue, dir)
  const command = `bun bench/compression.ts ${BEFORE} --rounds ${rounds} --seconds ${seconds}`
  console.log(
    [
      '',
      await measuredOn(command, loadBefore, 'the servers of a round loaded all at once, each by its own wrk'),
      '',
      `Before: commit ${baseline.commit}; after: this working tree (at ${head}). ${ARTISTS.toLocaleString('en')} generated artists.`,
      '',
      '**Sizes**',
      '',
      sizesTable,
      '',
      `**Levels** (in this process, Bun ${Bun.version}; CPU time per kilobyte of the uncompressed body)`,
      '',
      levelsTable,
      '',
      `**Speed:** \`wrk -t2 -c32 -H 'accept-encoding: ${BROWSER}'\`, ${rounds} rounds of ${seconds} s`,
      '',
      speedTables,
    ].join('\n'),
  )
} finally {
  if (baseline) rmSync(baseline.dir, { recursive: true, force: true })
  rmSync(dir, { recursive: true, force: true })
}
