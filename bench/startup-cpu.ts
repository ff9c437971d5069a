#!/usr/bin/env bun
/**
 * CPU per start, two builds side by side: what one start of the compiled server costs the machine, from its spawn
 * to its exit (ready line, one `GET /healthz`, SIGTERM), as the user and system time of the process (every thread:
 * the JIT's and the collector's too). A test suite that starts the executable hundreds of times on two cores pays
 * this, not the wall time. BEFORE is a committed build (HEAD by default, built from `git archive` in a temporary
 * directory), AFTER `dist/rock-legends` (built first when older than its sources); every case runs on both, the two
 * taking turns run after run (order alternated), so a noisy moment on a shared machine hits both alike.
 *
 *   bun bench/startup-cpu.ts [--runs N] [--baseline REF | --before EXECUTABLE] [--after EXECUTABLE]
 */
import { mkdirSync, rmSync } from 'node:fs'
import { loadavg } from 'node:os'
import { join } from 'node:path'
import { ensureBinary } from '../test/support/binary.ts'
import { describeMachine } from './machine.ts'
import { type OneStart, oneStart, percentile } from './startup.ts'
import { baselineBinary } from './two-builds.ts'

const WORK = join(import.meta.dir, '.work', 'startup-cpu')

/** What a case runs, given the executable (and its own scratch directory). */
interface CpuCase {
  name: string
  args: (dir: string, run: number) => string[]
  /** Prepares what the case needs, once per executable. */
  prepare?: (binary: string, dir: string) => Promise<void>
  /** The process prints one line and exits: no ready line, no request. */
  oneShot?: boolean
}

const SERVE = ['--host', '127.0.0.1', '--port', '0', '--log', 'off']

const CASES: CpuCase[] = [
  { name: 'empty store in memory', args: () => [...SERVE, '--data', ':memory:'] },
  { name: 'built-in catalogue in memory (`--seed`)', args: () => [...SERVE, '--data', ':memory:', '--seed'] },
  {
    name: 'data file holding the built-in catalogue',
    args: (dir) => [...SERVE, '--data', join(dir, 'seeded.json')],
    prepare: async (binary, dir) => {
      // One start with --seed writes the file; later starts open it as it is.
      await oneStart([binary, ...SERVE, '--data', join(dir, 'seeded.json'), '--seed'])
    },
  },
  { name: 'new empty data file', args: (dir, run) => [...SERVE, '--data', join(dir, `empty-${run}.json`)] },
  {
    name: 'fixture controls over the built-in catalogue (`--seed --fixtures`)',
    args: () => [...SERVE, '--data', ':memory:', '--seed', '--fixtures', '--api-key', 'bench-key'],
  },
  { name: 'context: `--version` (loads the code, serves nothing)', args: () => ['--version'], oneShot: true },
]

/** Runs `command` to its exit; its CPU time. */
async function oneShot(command: string[]): Promise<OneStart> {
  const started = performance.now()
  const child = Bun.spawn(command, { stdin: 'ignore', stdout: 'ignore', stderr: 'inherit' })
  if ((await child.exited) !== 0) throw new Error(`${command.join(' ')} failed`)
  const usage = child.resourceUsage()
  if (!usage) throw new Error(`${command.join(' ')}: no resource usage`)
  return {
    ms: performance.now() - started,
    userMs: Number(usage.cpuTime.user) / 1000,
    systemMs: Number(usage.cpuTime.system) / 1000,
  }
}

function option(args: string[], name: string): string | undefined {
  const at = args.indexOf(name)
  return at >= 0 ? args[at + 1] : undefined
}

if (import.meta.main) {
  const args = process.argv.slice(2)
  const runs = Number(option(args, '--runs') ?? 30)
  const after = option(args, '--after') ?? (await ensureBinary())
  const given = option(args, '--before')
  const baseline = given ? undefined : await baselineBinary(option(args, '--baseline') ?? 'HEAD')
  const before = given ?? (baseline?.binary as string)
  const builds = [
    { label: 'before', binary: before, dir: join(WORK, 'before') },
    { label: 'after', binary: after, dir: join(WORK, 'after') },
  ]
  rmSync(WORK, { recursive: true, force: true })
  for (const build of builds) {
    mkdirSync(build.dir, { recursive: true })
    for (const each of CASES) await each.prepare?.(build.binary, build.dir)
  }
  const start = (each: CpuCase, build: (typeof builds)[number], run: number) => {
    const command = [build.binary, ...each.args(build.dir, run)]
    return each.oneShot ? oneShot(command) : oneStart(command)
  }
  // One warm-up run of each (page cache).
  for (const each of CASES) for (const build of builds) await start(each, build, -1)
  const loadBefore = loadavg()[0] as number
  const samples = CASES.map(() => builds.map(() => [] as OneStart[]))
  for (let run = 0; run < runs; run++)
    for (const [c, each] of CASES.entries())
      for (const b of run % 2 ? [1, 0] : [0, 1]) samples[c]?.[b]?.push(await start(each, builds[b] as never, run))
  const loadAfter = loadavg()[0] as number
  const machine = await describeMachine('')
  const median = (values: number[]) => percentile(values, 50)
  const cpu = (list: OneStart[]) => median(list.map((one) => one.userMs + one.systemMs))
  const split = (list: OneStart[]) =>
    `${median(list.map((one) => one.userMs)).toFixed(1)} + ${median(list.map((one) => one.systemMs)).toFixed(1)}`
  const rows = CASES.map((each, c) => {
    const [b, a] = samples[c] as [OneStart[], OneStart[]]
    const wall = (list: OneStart[]) => `${median(list.map((one) => one.ms)).toFixed(1)} ms`
    return `| ${each.name} | ${cpu(b).toFixed(1)} ms (${split(b)}) | ${cpu(a).toFixed(1)} ms (${split(a)}) | ${(cpu(a) / cpu(b)).toFixed(2)}× | ${wall(b)} | ${wall(a)} |`
  })
  const when = new Date().toISOString().slice(0, 16).replace('T', ' ')
  const report = [
    '## Start-up: CPU per start, two builds side by side',
    '',
    `Measured ${when} UTC with \`bun bench/startup-cpu.ts --runs ${runs}\` on ${machine.cpu}, ${machine.cores} cores, ${machine.kernel}, Bun ${machine.bun}. Before: ${baseline ? `commit ${baseline.commit} (\`git archive\`, \`bun run build\`)` : before}; after: ${after}. Each run spawns the executable, waits for its ready line, gets \`GET /healthz\`, sends SIGTERM and waits for its exit; CPU is the user + system time of the process (\`resourceUsage\`), median of ${runs} runs, the two builds taking turns. Wall: spawn to the answer of \`/healthz\` (for \`--version\`, to its exit). One-minute load average ${loadBefore.toFixed(2)} before and ${loadAfter.toFixed(2)} after.`,
    '',
    '| Case | CPU before (user + sys) | CPU after (user + sys) | After / before | Wall before | Wall after |',
    '| ---- | ----------------------: | ---------------------: | -------------: | ----------: | ---------: |',
    ...rows,
  ].join('\n')
  process.stdout.write(`${report}\n`)
  rmSync(WORK, { recursive: true, force: true })
  if (baseline) rmSync(baseline.dir, { recursive: true, force: true })
}
