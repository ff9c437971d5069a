#!/usr/bin/env bun
/**
 * Fixture start-up from Node, through the npm package as a user installs it: `bun run pack` (this machine's
 * platform), then a project made as docs/testing-with-rock-legends.md says (`npm init -y`, the platform tarballs as
 * optional dependencies, the main tarball as a dev dependency), then, in one Node process, rounds of:
 *
 * - `await startServer({ seed: true })`: the child process spawned, the built-in catalogue seeded, its ready line read
 *   (what a test file's `before` pays), then `await server.stop()` (SIGTERM, the process gone);
 * - `await startServer()`: the same with an empty store;
 * - `await server.reset()` on one server started with `{ seed: true, allowReset: true }` (what `beforeEach` pays);
 * - for context, the installed executable spawned with `child_process.spawn` and `--seed`, without the package, until
 *   its ready line: what the package adds to it.
 *
 * The cases take turns, round after round, after one warm-up round. One more case, from here: a new `node` process
 * that imports the package and awaits `startServer({ seed: true })`, timed from its spawn to the line it prints then
 * (what `node --test` pays per file: it runs each file in a process of its own).
 *
 *   bun bench/node-startup.ts [--runs N] [--write]     (--write records the table in bench/RESULTS.md)
 */
import { readdirSync, rmSync, writeFileSync } from 'node:fs'
import { loadavg } from 'node:os'
import { join } from 'node:path'
import { describeMachine } from './machine.ts'
import { installPackedProject, sh } from './npm-project.ts'
import { writeNamedSection } from './results-file.ts'

const WORK = join(import.meta.dir, '.work', 'node-startup')
const PROJECT = join(WORK, 'my-tests')

/** The project, with the platform packages npm installed into it. */
async function installProject() {
  const installed = await installPackedProject(PROJECT)
  return { ...installed, platforms: readdirSync(join(PROJECT, 'node_modules/@rock-legends')) }
}

/** Runs in the project, under Node: prints one JSON object of the in-process cases' times, in milliseconds. */
const IN_PROCESS = `import { spawn } from 'node:child_process'
import { startServer } from 'rock-legends'
const [runs, binary] = [Number(process.argv[2]), process.argv[3]]
const times = { seeded: [], seededStop: [], empty: [], emptyStop: [], reset: [], direct: [] }
/** The executable spawned as the package spawns it, without the package: until its ready line. */
const spawnDirect = () =>
  new Promise((resolve, reject) => {
    const args = ['--host', '127.0.0.1', '--port', '0', '--data', ':memory:', '--seed', '--log', 'off']
    const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'inherit'] })
    let text = ''
    child.on('error', reject)
    child.stdout.on('data', (chunk) => {
      text += chunk
      if (text.includes('\\n')) resolve(child)
    })
  })
const resettable = await startServer({ seed: true, allowReset: true })
const time = async (work) => {
  const started = performance.now()
  const value = await work()
  return [performance.now() - started, value]
}
for (let round = -1; round < runs; round++) {
  const [seeded, server] = await time(() => startServer({ seed: true }))
  const [seededStop] = await time(() => server.stop())
  const [empty, bare] = await time(() => startServer())
  const [emptyStop] = await time(() => bare.stop())
  const [reset] = await time(() => resettable.reset())
  const [direct, child] = await time(spawnDirect)
  await new Promise((resolve) => child.once('exit', resolve).kill('SIGTERM'))
  if (round < 0) continue // the warm-up round
  Object.entries({ seeded, seededStop, empty, emptyStop, reset, direct }).forEach(([name, ms]) => times[name].push(ms))
}
await resettable.stop()
console.log(JSON.stringify(times))
`

/** Runs in the project, under Node, once per process: prints a line once the seeded server serves. */
const NEW_PROCESS = `import { startServer } from 'rock-legends'
const server = await startServer({ seed: true })
console.log('ready')
await server.stop()
`

/** From the spawn of `node new-process.mjs` to its line: Node's start, the import, and the seeded start. */
async function timeNewProcess(): Promise<number> {
  const started = performance.now()
  const child = Bun.spawn(['node', 'new-process.mjs'], { cwd: PROJECT, stdout: 'pipe', stderr: 'inherit' })
  const reader = child.stdout.getReader()
  let text = ''
  while (!text.includes('ready')) {
    const { value, done } = await reader.read()
    if (done) throw new Error('node new-process.mjs exited before its server was ready')
    text += new TextDecoder().decode(value)
  }
  const elapsed = performance.now() - started
  reader.releaseLock()
  if ((await child.exited) !== 0) throw new Error('node new-process.mjs failed')
  return elapsed
}

const percentile = (times: number[], p: number) => {
  const sorted = [...times].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number
}
const ms = (value: number) => `${value.toFixed(1)} ms`

if (import.meta.main) {
  const args = process.argv.slice(2)
  const runsFlag = args.indexOf('--runs')
  const runs = runsFlag >= 0 ? Number(args[runsFlag + 1]) : 30
  if (!Number.isInteger(runs) || runs < 1) throw new Error('--runs takes a whole number of rounds')
  const installed = await installProject()
  writeFileSync(join(PROJECT, 'in-process.mjs'), IN_PROCESS)
  writeFileSync(join(PROJECT, 'new-process.mjs'), NEW_PROCESS)

  const loadBefore = loadavg()[0] as number
  // Taking turns at a coarser grain: the in-process rounds in one Node process, then as many new processes.
  const binary = join(PROJECT, 'node_modules/@rock-legends', installed.platforms[0] ?? '', 'bin/rock-legends')
  const times = JSON.parse(sh(`node in-process.mjs ${runs} ${binary}`, PROJECT)) as Record<string, number[]>
  await timeNewProcess() // warm-up
  const fresh: number[] = []
  for (let run = 0; run < runs; run++) fresh.push(await timeNewProcess())
  const loadAfter = loadavg()[0] as number

  const rows: [string, number[]][] = [
    ['`await startServer({ seed: true })`: spawned, seeded, ready', times.seeded ?? []],
    ['`await server.stop()` of that server: SIGTERM, process gone', times.seededStop ?? []],
    ['`await startServer()`: empty store in memory', times.empty ?? []],
    ['`await server.reset()`: back to the seeded catalogue', times.reset ?? []],
    [
      'context: the same executable, `--seed`, spawned from Node without the package, until its ready line',
      times.direct ?? [],
    ],
    ['context: a new `node` process, `import`, `startServer({ seed: true })`', fresh],
  ]
  const machine = await describeMachine('')
  const when = new Date().toISOString().slice(0, 16).replace('T', ' ')
  const section = [
    '## Fixture start-up from Node, through the npm package',
    '',
    `Measured ${when} UTC with \`bun bench/node-startup.ts --runs ${runs}\` (bench/node-startup.ts) on ${machine.cpu}, ${machine.cores} cores, ${machine.memory}, ${machine.kernel}; Node ${installed.node}, npm ${installed.npm}. The package is \`bun run pack\`'s tarballs (${installed.platforms.map((name) => `@rock-legends/${name}`).join(', ')}), installed as docs/testing-with-rock-legends.md says into a project made with \`npm init -y\`; the times are taken in Node with \`performance.now()\` around each call, ${runs} rounds after one warm-up round, the cases taking turns within a round. The last row is timed from the spawn of \`node\` to the line it prints once its server is ready. One-minute load average ${loadBefore.toFixed(2)} before and ${loadAfter.toFixed(2)} after (the machine is shared).`,
    '',
    '| Case | Median | p10 | p90 |',
    '| ---- | -----: | --: | --: |',
    ...rows.map(
      ([name, values]) =>
        `| ${name} | ${ms(percentile(values, 50))} | ${ms(percentile(values, 10))} | ${ms(percentile(values, 90))} |`,
    ),
  ].join('\n')
  process.stdout.write(`${section}\n`)
  if (args.includes('--write')) await writeNamedSection('node-startup', section)
  rmSync(WORK, { recursive: true, force: true })
}
