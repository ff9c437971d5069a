/**
 * `bun bench/hooks-ab.ts [BEFORE_EXECUTABLE] [--rounds N] [--seconds S] [--together]`: the price of the per-request
 * hooks and of the access log, side by side. The ceiling (bench/ceiling.ts: a bare `Bun.serve` answering the bytes recorded from rock-legends, request id
 * included), `dist/rock-legends` in its default configuration (the pretty access log into a file) and with `--log
 * off`, and, given a BEFORE executable (built from another commit), that one in both configurations too: all on the
 * same 1,000 generated artists (JSON data files, as users run it), `wrk -t2 -c32` on GET one artist and a list page,
 * the servers taking turns (the order rotated every round). Prints, per request and ratio, the median over the rounds
 * of the per-round ratios of req/s (runs back to back, which cancels most of the machine's drift), and of CPU per
 * request (/proc), with the machine and its load.
 *
 * With `--together`, the servers of a round are loaded all at once instead, each by its own wrk, so that they share
 * whatever else the machine is doing at that moment: on a machine shared with other work, whose load changes from
 * one second to the next, the per-round ratios then scatter far less. Each server gets a share of the cores, so its
 * req/s is lower than alone; the ratios, of req/s and of CPU per request, are what to read.
 *
 * @example
 * git worktree add /tmp/base HEAD && ln -s $PWD/node_modules /tmp/base/ && (cd /tmp/base && bun run build)
 * bun run build && bun bench/hooks-ab.ts /tmp/base/dist/rock-legends --rounds 8
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { writeCatalogue } from './catalogue.ts'
import type { CannedResponse } from './ceiling.ts'
import { describeMachine } from './machine.ts'
import { BINARY, type ServerProcess, startCeiling, startRockLegends } from './server-process.ts'
import { type LoadRun, loadServer, sideBySideTables, wrkVersion } from './wrk.ts'

const { values, positionals } = parseArgs({
  args: process.argv.slice(2),
  options: {
    rounds: { type: 'string', default: '8' },
    seconds: { type: 'string', default: '3' },
    together: { type: 'boolean', default: false },
  },
  allowPositionals: true,
})
const rounds = Number(values.rounds)
const seconds = Number(values.seconds)
const before = positionals[0]
const together = values.together === true

const CASES = [
  { label: 'Get one artist', path: '/api/v1/artists/500' },
  { label: 'List page', path: '/api/v1/artists?limit=10&offset=0' },
]

const progress = (line: string) => process.stderr.write(`hooks-ab: ${line}\n`)

const dir = await mkdtemp(join(tmpdir(), 'rl-hooks-ab-'))
const servers: Record<string, ServerProcess> = {}
try {
  const catalogue = join(dir, 'catalogue.json')
  await writeCatalogue(catalogue, 1000)
  const start = (name: string, binary: string, log: boolean) =>
    startRockLegends(
      [`--seed=${catalogue}`, '--data', join(dir, `${name.replaceAll(/\W+/g, '-')}.json`)],
      log ? join(dir, `${name.replaceAll(/\W+/g, '-')}.log`) : undefined,
      binary,
    )
  // The ceiling replays what the default configuration answers, as bench/compare.ts records it.
  const recording = await start('recording', BINARY, true)
  const responses: CannedResponse[] = []
  for (const c of CASES) {
    const response = await fetch(`${recording.url}${c.path}`)
    const headers: Record<string, string> = {}
    for (const [name, value] of response.headers)
      if (name !== 'date' && name !== 'content-length') headers[name] = value
    const body = Buffer.from(await response.arrayBuffer()).toString('base64')
    responses.push({ method: 'GET', path: c.path, status: response.status, headers, body })
  }
  await recording.stop()
  const responsesFile = join(dir, 'responses.json')
  await Bun.write(responsesFile, JSON.stringify(responses))
  servers.ceiling = await startCeiling(responsesFile)
  servers.after = await start('after', BINARY, true)
  servers['after --log off'] = await start('after-off', BINARY, false)
  if (before) {
    servers.before = await start('before', before, true)
    servers['before --log off'] = await start('before-off', before, false)
  }
  const names = Object.keys(servers)
  const loadAverage = loadavg()[0] ?? 0
  const runs: Record<string, Record<string, LoadRun[]>> = {}
  for (const c of CASES) {
    runs[c.label] = Object.fromEntries(names.map((name) => [name, []]))
    for (const name of names)
      await loadServer(servers[name] as ServerProcess, { path: c.path, seconds: 2, connections: 32 })
    for (let round = 0; round < rounds; round++) {
      if (together) {
        const all = await Promise.all(
          names.map((name) => loadServer(servers[name] as ServerProcess, { path: c.path, seconds, connections: 32 })),
        )
        names.forEach((name, i) => {
          runs[c.label]?.[name]?.push(all[i] as LoadRun)
        })
        progress(`${c.label}: round ${round + 1} of ${rounds}`)
        continue
      }
      for (let i = 0; i < names.length; i++) {
        const name = names[(i + round) % names.length] as string
        const run = await loadServer(servers[name] as ServerProcess, { path: c.path, seconds, connections: 32 })
        runs[c.label]?.[name]?.push(run)
      }
      progress(`${c.label}: round ${round + 1} of ${rounds}`)
    }
  }
  const ratios: [string, string][] = [
    ['after', 'ceiling'],
    ['after --log off', 'ceiling'],
    ['after', 'after --log off'],
  ]
  if (before)
    ratios.push(
      ['before', 'ceiling'],
      ['before --log off', 'ceiling'],
      ['before', 'before --log off'],
      ['after', 'before'],
    )
  const machine = await describeMachine(wrkVersion() ?? 'wrk')
  console.log(
    `Measured ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC with \`bun bench/hooks-ab.ts${before ? ' BEFORE' : ''} --rounds ${rounds} --seconds ${seconds}${together ? ' --together' : ''}\` (${together ? 'the servers of a round loaded all at once' : 'the servers taking turns'}) on ${machine.cpu}, ${machine.cores} cores, Bun ${Bun.version}; one-minute load average ${loadAverage.toFixed(2)} before and ${(loadavg()[0] ?? 0).toFixed(2)} after (the machine is shared).\n`,
  )
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
