/**
 * `bun bench/fixtures.ts [--rounds N] [--seconds S]`: what `--fixtures` costs a read, side by side. Three
 * servers of `dist/rock-legends` over the same 1,000 generated artists (JSON data files): without `--fixtures`; with it,
 * read without the namespace header (the default namespace); and with it, read in a namespace (the header on every
 * request, `bench/wrk/namespace.lua`) that has written once (so it holds a catalogue of its own). `wrk -t2 -c32` on
 * GET one artist and a list page, the servers taking turns (the order rotated every round). Prints the median over
 * the rounds of the per-round ratios of req/s and of CPU per request, with the machine and its load.
 *
 * Without `--fixtures` nothing of the fixtures runs (the app is built over the store itself, and Bun routes the
 * requests as before); the first ratio shows what the flag costs when it is on.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { writeCatalogue } from './catalogue.ts'
import { measuredOn } from './machine.ts'
import { type ServerProcess, startRockLegends } from './server-process.ts'
import { addRound, loadRound, loadServer, type SideBySideRuns, sideBySideTables } from './wrk.ts'

const { values } = parseArgs({
  args: process.argv.slice(2),
  options: { rounds: { type: 'string', default: '6' }, seconds: { type: 'string', default: '3' } },
})
const rounds = Number(values.rounds)
const seconds = Number(values.seconds)
const KEY = 'bench-fixtures-key'
const NAMESPACE = join(import.meta.dir, 'wrk', 'namespace.lua')

const CASES = [
  { label: 'Get one artist', path: '/api/v1/artists/500' },
  { label: 'List page', path: '/api/v1/artists?limit=10&offset=0' },
]

const progress = (line: string) => process.stderr.write(`fixtures: ${line}\n`)

const dir = await mkdtemp(join(tmpdir(), 'rl-fixtures-bench-'))
const servers: Record<string, ServerProcess> = {}
try {
  const catalogue = join(dir, 'catalogue.json')
  await writeCatalogue(catalogue, 1000)
  const start = (name: string, extra: string[]) =>
    startRockLegends([
      `--seed=${catalogue}`,
      '--data',
      join(dir, `${name}.json`),
      '--api-key',
      KEY,
      '--log',
      'off',
      ...extra,
    ])
  servers.plain = await start('plain', [])
  servers['--fixtures'] = await start('fixtures', ['--fixtures'])
  const namespaced = await start('namespaced', ['--fixtures'])
  // The namespace writes once, so that its reads go to a catalogue of its own, as a test's would.
  const created = await fetch(`${namespaced.url}/api/v1/artists`, {
    method: 'POST',
    headers: { 'x-api-key': KEY, 'content-type': 'application/json', 'Rock-Legends-Namespace': 'bench' },
    body: JSON.stringify({ name: 'Bench' }),
  })
  if (created.status !== 201) throw new Error(`the namespace's write answered ${created.status}`)
  servers['--fixtures, in a namespace'] = namespaced
  const scriptFor = (name: string) =>
    name === '--fixtures, in a namespace' ? { script: NAMESPACE, scriptArgs: ['bench'] } : {}
  const names = Object.keys(servers)
  const loadAverage = loadavg()[0] ?? 0
  const runs: SideBySideRuns = {}
  for (const c of CASES) {
    for (const name of names)
      await loadServer(servers[name] as ServerProcess, {
        path: c.path,
        seconds: 2,
        connections: 32,
        ...scriptFor(name),
      })
    for (let round = 0; round < rounds; round++) {
      const load = (name: string) => ({ path: c.path, seconds, connections: 32, ...scriptFor(name) })
      addRound(runs, c.label, await loadRound(servers, load, round, false))
      progress(`${c.label}: round ${round + 1} of ${rounds}`)
    }
  }
  const command = `bun bench/fixtures.ts --rounds ${rounds} --seconds ${seconds}`
  console.log(`${await measuredOn(command, loadAverage, 'the servers taking turns')}\n`)
  const ratios = names.slice(1).map((name) => [name, 'plain'] as const)
  console.log(
    sideBySideTables(
      CASES.map((c) => c.label),
      names,
      ratios,
      runs,
    ).join('\n'),
  )
} finally {
  await Promise.all(Object.values(servers).map((server) => server.stop()))
  await rm(dir, { recursive: true, force: true })
}
