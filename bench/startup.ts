#!/usr/bin/env bun
/**
 * Start-up benchmark: the time from spawning a process to its first served `GET /healthz`, for the compiled
 * rock-legends (empty store, built-in catalogue, 10,000 artists) beside the floor, a bare `Bun.serve` run with
 * `bun -e`, and the CPU time (user and system) each process used from its spawn to its exit. Each run spawns the
 * process, reads its ready line for the port, sends one request, and stops it; the cases take turns, run after run,
 * so a noisy moment on a shared machine hits them all alike. bench/startup-cpu.ts compares two builds' CPU per start.
 *
 *   bun bench/startup.ts [--runs N] [--write]     (--write records the table in bench/RESULTS.md)
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { loadavg } from 'node:os'
import { join } from 'node:path'
import { writeCatalogue } from './catalogue.ts'
import { describeMachine } from './machine.ts'
import { BINARY } from './server-process.ts'

const WORK = join(import.meta.dir, '.work', 'startup')
const RESULTS = join(import.meta.dir, 'RESULTS.md')
const BEGIN = '<!-- startup:begin -->'
const END = '<!-- startup:end -->'
const ROOT = join(import.meta.dir, '..')

/** A command as one would type it from the repository's root. */
const shown = (command: string[]) =>
  command
    .map((part) => part.replaceAll(`${ROOT}/`, ''))
    .map((part) => (/[\s'();]/.test(part) ? `"${part}"` : part))
    .join(' ')

/** One thing whose start-up is timed. */
export interface StartupCase {
  name: string
  /** The command; `{n}` is replaced by the run's number (for a fresh data file per run). */
  command: string[]
  /** Prepares what the case needs (once, before any run), e.g. a data file. */
  prepare?: () => Promise<void>
}

/** The times of one case, in milliseconds, in run order. */
export interface StartupResult {
  name: string
  command: string
  times: number[]
  /** The CPU time (user + system) of each run's process, from its spawn to its exit. */
  cpu: number[]
}

/** One start: milliseconds to the first served `/healthz`, and the process's CPU time (user, system) until it exited. */
export interface OneStart {
  ms: number
  userMs: number
  systemMs: number
}

// The floor: the least a Bun process can do before it serves a request.
const BARE_SERVE = `const s = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => Response.json({ status: 'ok' }) }); console.log('listening on http://127.0.0.1:' + s.port)`

/** Compiles `entry` (a file, or `-e` code written to one) into `outfile`, as `bun run build` would. */
async function compile(entry: string, outfile: string, bytecode: boolean) {
  const flags = [
    '--compile',
    '--format',
    'esm',
    '--splitting',
    '--minify-syntax',
    '--minify-whitespace',
    ...(bytecode ? ['--bytecode'] : []),
  ]
  const build = Bun.spawn(['bun', 'build', entry, ...flags, '--outfile', outfile], { stdout: 'ignore', stderr: 'pipe' })
  if ((await build.exited) !== 0) throw new Error(`cannot compile ${entry}: ${await new Response(build.stderr).text()}`)
}

/**
 * The cases of the report: the floor, then rock-legends from empty to 10,000 artists. Three more give context: the
 * floor compiled into an executable like ours, the framework alone (Elysia with as many validated routes as ours),
 * and rock-legends compiled without `--bytecode`.
 */
export function startupCases(binary = BINARY, artists = 10_000): StartupCase[] {
  const big = join(WORK, `artists-${artists}.json`)
  const bare = join(WORK, 'bare-serve')
  const elysia = join(WORK, 'bare-elysia')
  const plain = join(WORK, 'rock-legends-no-bytecode')
  const serve = ['--host', '127.0.0.1', '--port', '0', '--log', 'off']
  return [
    { name: 'floor: `bun -e` bare Bun.serve', command: ['bun', '-e', BARE_SERVE] },
    {
      name: 'context: the same bare Bun.serve, compiled',
      command: [bare],
      prepare: async () => {
        await Bun.write(`${bare}.ts`, BARE_SERVE)
        await compile(`${bare}.ts`, bare, true)
      },
    },
    {
      name: 'context: bare Elysia with 23 TypeBox-validated routes (bench/bare-elysia.ts), compiled',
      command: [elysia],
      prepare: () => compile(join(import.meta.dir, 'bare-elysia.ts'), elysia, true),
    },
    { name: 'rock-legends, empty store in memory', command: [binary, ...serve, '--data', ':memory:'] },
    {
      name: 'context: rock-legends compiled without `--bytecode`, empty store in memory',
      command: [plain, ...serve, '--data', ':memory:'],
      prepare: () => compile(join(import.meta.dir, '../src/main.ts'), plain, false),
    },
    { name: 'rock-legends, new empty data file', command: [binary, ...serve, '--data', join(WORK, 'empty-{n}.json')] },
    { name: 'rock-legends, built-in catalogue in memory', command: [binary, ...serve, '--data', ':memory:', '--seed'] },
    {
      name: `rock-legends, data file of ${artists.toLocaleString('en')} artists`,
      command: [binary, ...serve, '--data', big],
      prepare: () => seedDataFile(binary, big, artists),
    },
  ]
}

/** Writes a data file holding `artists` artists (and their albums), through the server itself. */
async function seedDataFile(binary: string, file: string, artists: number) {
  rmSync(file, { force: true })
  const catalogue = join(WORK, `catalogue-${artists}.json`)
  await writeCatalogue(catalogue, artists)
  const seed = Bun.spawn([binary, '--port', '0', '--log', 'off', '--data', file, `--seed=${catalogue}`], {
    stdout: 'pipe',
    stderr: 'inherit',
  })
  await new Response(seed.stdout).body?.getReader().read()
  seed.kill('SIGTERM')
  if ((await seed.exited) !== 0) throw new Error(`seeding ${file} failed`)
}

/** Spawns `command`, waits for its ready line, gets one 200 from `/healthz`; the milliseconds that took. */
export async function timeOneStart(command: string[]): Promise<number> {
  return (await oneStart(command)).ms
}

/**
 * Spawns `command`, waits for its ready line, gets one 200 from `/healthz` (the milliseconds that took), stops it
 * with SIGTERM and, once it has exited, reads the CPU time it used in all (`resourceUsage`: every thread of it, the
 * JIT's and the collector's included).
 */
export async function oneStart(command: string[]): Promise<OneStart> {
  const started = performance.now()
  const child = Bun.spawn(command, { stdin: 'ignore', stdout: 'pipe', stderr: 'inherit' })
  let ms = Number.NaN
  try {
    const reader = child.stdout.getReader()
    const decoder = new TextDecoder()
    let text = ''
    let url: string | undefined
    while (!url) {
      const { value, done } = await reader.read()
      if (done) throw new Error(`${command.join(' ')} exited before it was ready`)
      text += decoder.decode(value, { stream: true })
      url = /listening on (http:\/\/\S+)/.exec(text)?.[1]
    }
    const response = await fetch(`${url}/healthz`)
    await response.arrayBuffer()
    if (response.status !== 200) throw new Error(`${command.join(' ')}: /healthz answered ${response.status}`)
    ms = performance.now() - started
  } finally {
    child.kill('SIGTERM')
    await child.exited
  }
  const usage = child.resourceUsage()
  if (!usage) throw new Error(`${command.join(' ')}: no resource usage`)
  // Microseconds.
  return { ms, userMs: Number(usage.cpuTime.user) / 1000, systemMs: Number(usage.cpuTime.system) / 1000 }
}

/** Times every case `runs` times, taking turns, after one warm-up run each (page cache, runtime download). */
export async function measureStartup(cases: StartupCase[], runs: number): Promise<StartupResult[]> {
  mkdirSync(WORK, { recursive: true })
  for (const each of cases) await each.prepare?.()
  const command = (each: StartupCase, n: number) => each.command.map((part) => part.replace('{n}', String(n)))
  for (const each of cases) await timeOneStart(command(each, -1))
  const results = cases.map((each) => ({
    name: each.name,
    command: shown(each.command),
    times: [] as number[],
    cpu: [] as number[],
  }))
  for (let run = 0; run < runs; run++)
    for (const [i, each] of cases.entries()) {
      const start = await oneStart(command(each, run))
      results[i]?.times.push(start.ms)
      results[i]?.cpu.push(start.userMs + start.systemMs)
    }
  return results
}

export const percentile = (times: number[], p: number) => {
  const sorted = [...times].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number
}
const ms = (value: number) => `${value.toFixed(1)} ms`

/** The Markdown table of a run, with the floor's median as the unit of the ratio. */
export function startupTable(results: StartupResult[]): string {
  const floor = percentile(results[0]?.times ?? [1], 50)
  const rows = results.map((result) => {
    const median = percentile(result.times, 50)
    return `| ${result.name} | ${ms(median)} | ${ms(percentile(result.times, 10))} | ${ms(percentile(result.times, 90))} | ${(median / floor).toFixed(2)}× | ${ms(percentile(result.cpu, 50))} |`
  })
  return [
    '| Case | Median | p10 | p90 | Median vs floor | CPU per start (median) |',
    '| ---- | -----: | --: | --: | --------------: | ---------------------: |',
    ...rows,
  ].join('\n')
}

if (import.meta.main) {
  const args = process.argv.slice(2)
  const runsFlag = args.indexOf('--runs')
  const runs = runsFlag >= 0 ? Number(args[runsFlag + 1]) : 30
  const cases = startupCases()
  const loadBefore = loadavg()[0] as number
  const results = await measureStartup(cases, runs)
  const loadAfter = loadavg()[0] as number
  const machine = await describeMachine('')
  const table = startupTable(results)
  const when = new Date().toISOString().slice(0, 16).replace('T', ' ')
  const section = [
    BEGIN,
    '## Start-up: process start to the first served request',
    '',
    `Measured ${when} UTC with \`bun bench/startup.ts --runs ${runs}\` (bench/startup.ts) on ${machine.cpu}, ${machine.cores} cores, ${machine.memory}, ${machine.kernel}, Bun ${machine.bun}. Each run spawns the process, reads the port from its ready line, and times until \`GET /healthz\` has answered 200, then stops it with SIGTERM; its CPU per start is the user and system time the process used from its spawn to its exit (\`resourceUsage\`); ${runs} runs per case after one warm-up, the cases taking turns. One-minute load average ${loadBefore.toFixed(2)} before and ${loadAfter.toFixed(2)} after (the machine is shared). Goal: an empty store within 2× of the floor.`,
    '',
    table,
    '',
    'Commands (`dist/rock-legends` is `bun run build`):',
    '',
    ...results.map((result) => `- ${result.name}: \`${result.command}\``),
    END,
  ].join('\n')
  process.stdout.write(`${section}\n`)
  if (args.includes('--write')) {
    const current = readFileSync(RESULTS, 'utf8')
    const start = current.indexOf(BEGIN)
    const next =
      start >= 0
        ? `${current.slice(0, start)}${section}${current.slice(current.indexOf(END) + END.length)}`
        : `${current.trimEnd()}\n\n${section}\n`
    writeFileSync(RESULTS, next)
  }
  rmSync(WORK, { recursive: true, force: true })
}
