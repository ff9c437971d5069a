/**
 * `bun bench/metrics.ts [BEFORE_EXECUTABLE] [--rounds N] [--seconds S] [--together] [--record]`: what `--metrics`
 * costs a read, side by side. Servers of `dist/rock-legends` (or `BENCH_BINARY`) over the same 1,000
 * generated artists (JSON data files): the default configuration (the pretty access log into a file) without and with
 * `--metrics`, and `--log off` without and with `--metrics`; given a BEFORE executable (built from another commit),
 * the same four of it too, named `before …` (and this build's `after …`), so that a change is measured against its
 * base in the same run. `wrk -t2 -c32` on GET one artist and a list page, the servers taking turns (the order rotated every
 * round), or with `--together` all loaded at once, each by its own wrk (on a shared machine the CPU ratios then scatter
 * less). A fifth server, a second `--log off`, is the control: its ratio to the first is what noise alone gives. Each
 * server with metrics is scraped once per round, as Prometheus would. Prints the median over the rounds of
 * the per-round ratios of req/s and of CPU per request (/proc), with the machine and its load; `--record` also writes
 * them into bench/RESULTS.md, section "metrics-turns" or "metrics-together".
 *
 * Without `--metrics` nothing of the metrics is built or hooked (test/metrics/metrics.test.ts checks that); the ratios
 * show what the flag costs when it is on. The goal: at least 0.95× of the same server without it.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { writeCatalogue } from './catalogue.ts'
import { measuredOn } from './machine.ts'
import { writeNamedSection } from './results-file.ts'
import { BINARY, type ServerProcess, startRockLegends } from './server-process.ts'
import { addRound, loadRound, loadServer, type SideBySideRuns, sideBySideTables } from './wrk.ts'

const { values, positionals } = parseArgs({
  args: process.argv.slice(2),
  options: {
    rounds: { type: 'string', default: '8' },
    seconds: { type: 'string', default: '3' },
    together: { type: 'boolean', default: false },
    record: { type: 'boolean', default: false },
  },
  allowPositionals: true,
})
const rounds = Number(values.rounds)
const seconds = Number(values.seconds)
const together = values.together === true
const before = positionals[0]
/** The builds measured, each with the prefix of its servers' names. */
const BUILDS: [string, string][] = before
  ? [
      ['before ', before],
      ['after ', BINARY],
    ]
  : [['', BINARY]]
const last = BUILDS[BUILDS.length - 1]?.[0] ?? ''

const CASES = [
  { label: 'Get one artist', path: '/api/v1/artists/500' },
  { label: 'List page', path: '/api/v1/artists?limit=10&offset=0' },
]
/**
 * Each ratio: a server with metrics over the same build without; a control, a second `--log off` server over the
 * first, which shows how far two identical servers differ on this machine at this moment; with a BEFORE build, each
 * configuration of this build over the same of that one.
 */
const RATIOS: [string, string][] = [
  ...BUILDS.flatMap(([p]): [string, string][] => [
    [`${p}default --metrics`, `${p}default`],
    [`${p}--log off --metrics`, `${p}--log off`],
  ]),
  ['--log off, again', `${last}--log off`],
  ...(before
    ? (['default', 'default --metrics', '--log off', '--log off --metrics'].map((name) => [
        `after ${name}`,
        `before ${name}`,
      ]) as [string, string][])
    : []),
]

const progress = (line: string) => process.stderr.write(`metrics: ${line}\n`)

/** A port free a moment ago on loopback, for a metrics listener. */
function freePort(): number {
  const probe = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
  const { port } = probe
  probe.stop(true)
  return port
}

const dir = await mkdtemp(join(tmpdir(), 'rl-metrics-bench-'))
const servers: Record<string, ServerProcess> = {}
const scrapes: Record<string, string> = {}
try {
  const catalogue = join(dir, 'catalogue.json')
  await writeCatalogue(catalogue, 1000)
  const start = async (name: string, log: boolean, metrics: boolean, binary = BINARY) => {
    const file = name.replaceAll(/\W+/g, '-')
    const port = freePort()
    const extra = metrics ? ['--metrics', `127.0.0.1:${port}`] : []
    servers[name] = await startRockLegends(
      [`--seed=${catalogue}`, '--data', join(dir, `${file}.json`), ...extra],
      log ? join(dir, `${file}.log`) : undefined,
      binary,
    )
    if (metrics) scrapes[name] = `http://127.0.0.1:${port}/metrics`
  }
  for (const [p, binary] of BUILDS) {
    await start(`${p}default`, true, false, binary)
    await start(`${p}default --metrics`, true, true, binary)
    await start(`${p}--log off`, false, false, binary)
    await start(`${p}--log off --metrics`, false, true, binary)
  }
  await start('--log off, again', false, false)
  const names = Object.keys(servers)
  const scrapeAll = () => Promise.all(Object.values(scrapes).map(async (url) => (await fetch(url)).text()))
  const loadAverage = loadavg()[0] ?? 0
  const runs: SideBySideRuns = {}
  for (const c of CASES) {
    for (const name of names)
      await loadServer(servers[name] as ServerProcess, { path: c.path, seconds: 2, connections: 32 })
    for (let round = 0; round < rounds; round++) {
      const load = () => ({ path: c.path, seconds, connections: 32 })
      addRound(runs, c.label, await loadRound(servers, load, round, together))
      await scrapeAll()
      progress(`${c.label}: round ${round + 1} of ${rounds}`)
    }
  }
  // The servers with metrics did count what they served.
  for (const text of await scrapeAll())
    if (
      !/rock_legends_http_requests_total\{method="GET",route="\/api\/v1\/artists\/:artistId",status="200"\} \d{4,}/.test(
        text,
      )
    )
      throw new Error(`a server with --metrics did not count the reads:\n${text.slice(0, 2000)}`)
  const command = `bun bench/metrics.ts${before ? ' BEFORE' : ''} --rounds ${rounds} --seconds ${seconds}${together ? ' --together' : ''}`
  const out: string[] = []
  const how = together ? 'the servers of a round loaded all at once' : 'the servers taking turns'
  out.push(await measuredOn(command, loadAverage, how), '')
  out.push(
    ...sideBySideTables(
      CASES.map((c) => c.label),
      names,
      RATIOS,
      runs,
    ),
  )
  console.log(out.join('\n'))
  if (values.record) await writeNamedSection(`metrics-${together ? 'together' : 'turns'}`, out.join('\n'))
} finally {
  await Promise.all(Object.values(servers).map((server) => server.stop()))
  await rm(dir, { recursive: true, force: true })
}
