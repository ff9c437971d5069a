/**
 * `bun bench/two-builds.ts [BEFORE [AFTER]] [--mode http|request-path] [options]`: two builds of rock-legends side by
 * side, interleaved in one run, for checking what a change does to the numbers. On a shared 2-core machine whose load
 * moves from one second to the next, an absolute figure says little and the same build measured an hour later differs
 * by more than most changes do; the figures to read are the per-round ratios AFTER/BEFORE, of builds measured in the
 * same moments.
 *
 * BEFORE and AFTER are each a git revision, whose tree is taken with `git archive` and built in a temporary directory,
 * or (over HTTP) the path of an executable. BEFORE is HEAD by default, AFTER this working tree (`dist/rock-legends`,
 * built first when older than its sources). Executables are copied aside first, so that a rebuild by other work
 * meanwhile does not change what is measured.
 *
 * `--mode http` (the default): each build as users run it, over a JSON data file of 1,000 generated artists (durable
 * writes, the pretty access log into a file), `wrk -t2 -c32` on GET one artist, a list page and durable creates
 * (`--path PATH`: GET PATH alone). Every round starts every server afresh on fresh data, so that creates always start
 * from the same store and no server's luck with its process carries through the run, warms each up, then loads the
 * servers in turns, the order rotated every round; with `--together`, all at once, each by its own wrk, so that they
 * share whatever else the machine does at that moment (the ratios then scatter far less; each server gets a share of
 * the cores, so its rate is lower than alone). `--log-off` adds each build with `--log off` (what the access log
 * costs); `--ceiling` adds a bare `Bun.serve` answering the bytes recorded from AFTER (bench/ceiling.ts: what
 * everything but the socket costs). Prints each server's median req/s and CPU per request (/proc), and each ratio as
 * the median of its per-round ratios, by req/s and by CPU per request, which moves less with the machine's load.
 *
 * `--mode request-path`: what a request costs in JavaScript, in-process, without the socket work that makes up most of
 * a request over HTTP and most of its noise. `src/` of each revision (AFTER may be the working tree) is bundled with
 * the flags of package.json's `build` (Elysia compiles a hook from its text, so a minified hook can compile
 * differently from its source: test/http/release-hooks.test.ts), and each build's app answers
 * `app.handle(new Request(…))` for PATH (GET one artist by default) in four configurations: `--log off` (twice: the
 * second is the control, whose difference is what noise and order alone give), `--metrics`, the pretty access log
 * (into stderr: run with `2>/dev/null`), and both; one in-memory store of 1,000 generated artists serves them all.
 * Every round, after a full collection, runs the apps in turns of 1,000 requests (the order rotated) until each has
 * answered `--requests`, and adds up each app's CPU time. Prints each app's median CPU per request and the median of
 * its per-round difference from the same build's `--log off`.
 *
 * @example
 * bun run build && bun bench/two-builds.ts HEAD --log-off --together --rounds 10
 * bun bench/two-builds.ts HEAD~1 HEAD --path '/api/v1/artists?limit=100&offset=0'
 * bun bench/two-builds.ts HEAD --mode request-path --rounds 20 2>/dev/null
 */
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import pkg from '../package.json' with { type: 'json' }
import { seedStore } from '../src/seed/seed.ts'
import { openMemoryStore } from '../src/store/document/memory.ts'
import { ensureBinary } from '../test/support/binary.ts'
import { writeCatalogue } from './catalogue.ts'
import type { CannedResponse } from './ceiling.ts'
import { measuredOn } from './machine.ts'
import { median } from './markdown.ts'
import { CREATE_SCRIPT, createArtists, recordResponse, startStore } from './rock-legends.ts'
import { type ServerProcess, startCeiling } from './server-process.ts'
import { addRound, type Load, loadRound, loadServer, type SideBySideRuns, sideBySideTables } from './wrk.ts'

const ROOT = join(import.meta.dir, '..')

/** Runs `command` in `cwd`; its stdout, or an error with its stderr. */
async function run(command: string[], cwd = ROOT): Promise<string> {
  const child = Bun.spawn(command, { cwd, stdout: 'pipe', stderr: 'pipe' })
  const [out, err, code] = await Promise.all([
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
    child.exited,
  ])
  if (code !== 0) throw new Error(`${command.join(' ')} failed (${code}): ${err}`)
  return out.trim()
}

/**
 * The tree of the committed `ref`, taken with `git archive` into `dir` (its `node_modules` this tree's, which the
 * lock file pins alike on both sides of most changes); returns the short commit.
 */
async function treeOf(ref: string, dir: string): Promise<string> {
  const commit = await run(['git', 'rev-parse', '--short', `${ref}^{commit}`])
  mkdirSync(dir, { recursive: true })
  await run(['sh', '-c', `git archive ${commit} | tar -x -C '${dir}'`])
  await run(['ln', '-s', join(ROOT, 'node_modules'), join(dir, 'node_modules')])
  return commit
}

/**
 * The executable of the committed `ref`, built in a temporary directory, which the caller removes; with the commit it
 * was built from. Other benches that compare the working tree with a commit use it too.
 */
export async function baselineBinary(ref: string): Promise<{ binary: string; commit: string; dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'rock-legends-baseline-'))
  const commit = await treeOf(ref, dir)
  await run(['bun', 'run', 'build'], dir)
  return { binary: join(dir, 'dist', 'rock-legends'), commit, dir }
}

/** A build's name in the report. */
type BuildName = 'before' | 'after'

const isExecutable = (spec: string) => existsSync(spec) && statSync(spec).isFile()

/** The executable of `spec` (a revision, an executable, or this working tree when undefined), in `dir`. */
async function executableOf(name: BuildName, spec: string | undefined, dir: string) {
  const binary = join(dir, `${name}-rock-legends`)
  if (spec === undefined || isExecutable(spec)) {
    copyFileSync(spec ?? (await ensureBinary()), binary)
    return { name, what: spec ? `the executable ${spec}` : 'this working tree', binary }
  }
  const tree = join(dir, `${name}-tree`)
  const commit = await treeOf(spec, tree)
  await run(['bun', 'run', 'build'], tree)
  return { name, what: `commit ${commit}`, binary: join(tree, 'dist', 'rock-legends') }
}

/** The command line, read only when this file is run (other benches import {@link baselineBinary}). */
function commandLine() {
  const { values, positionals } = parseArgs({
    args: process.argv.slice(2),
    options: {
      mode: { type: 'string', default: 'http' },
      rounds: { type: 'string' },
      seconds: { type: 'string', default: '3' },
      together: { type: 'boolean', default: false },
      'log-off': { type: 'boolean', default: false },
      ceiling: { type: 'boolean', default: false },
      path: { type: 'string' },
      requests: { type: 'string', default: '50000' },
    },
    allowPositionals: true,
  })
  if (positionals.length > 2) throw new Error(USAGE)
  const [before = 'HEAD', after] = positionals
  /** The command as the report shows it, with the revisions or executables as given. */
  const command = (options: string) =>
    `bun bench/two-builds.ts ${[before, after].filter(Boolean).join(' ')} ${options}`.replaceAll(/\s+/g, ' ').trim()
  return { ...values, before, after, command }
}
type CommandLine = ReturnType<typeof commandLine>

const USAGE =
  'usage: bun bench/two-builds.ts [BEFORE [AFTER]] [--mode http|request-path] [--rounds N] [--seconds S] [--together] [--log-off] [--ceiling] [--path PATH] [--requests N]'
const progress = (line: string) => process.stderr.write(`two-builds: ${line}\n`)
/** Artists of the generated catalogue every server and app holds. */
const ARTISTS = 1000

/** A request over HTTP: a read of `path`, or, with `create`, a durable create there. */
interface HttpCase {
  label: string
  path: string
  create?: boolean
}

async function measureHttp(values: CommandLine, dir: string): Promise<string> {
  const rounds = Number(values.rounds ?? 6)
  const seconds = Number(values.seconds)
  const together = values.together === true
  const logOff = values['log-off'] === true
  const cases: HttpCase[] = values.path
    ? [{ label: `GET ${values.path}`, path: values.path }]
    : [
        { label: 'Get one artist', path: `/api/v1/artists/${ARTISTS / 2}` },
        { label: 'List page', path: '/api/v1/artists?limit=10&offset=0' },
        { label: 'Create an artist', path: '/api/v1/artists', create: true },
      ]
  const builds = [
    await executableOf('before', values.before, dir),
    await executableOf('after', values.after, dir),
  ] as const
  const catalogue = join(dir, 'catalogue.json')
  await writeCatalogue(catalogue, ARTISTS)
  const servers = builds.flatMap(({ name, binary }) => [
    { name, binary, log: 'default' as const },
    ...(logOff ? [{ name: `${name} --log off`, binary, log: 'off' as const }] : []),
  ])
  let ceiling: ServerProcess | undefined
  if (values.ceiling) {
    // The ceiling answers what AFTER in its default configuration answered, request id included; the create last,
    // so that the reads see the seeded store.
    const recording = await startStore(join(dir, 'recording'), catalogue, 'default', builds[1].binary)
    const responses: CannedResponse[] = []
    try {
      for (const c of cases) responses.push(await recordResponse(recording.url, c.create ? 'POST' : 'GET', c.path))
    } finally {
      await recording.stop()
    }
    await Bun.write(join(dir, 'responses.json'), JSON.stringify(responses))
    ceiling = await startCeiling(join(dir, 'responses.json'))
  }
  const names = [...(ceiling ? ['ceiling'] : []), ...servers.map((server) => server.name)]
  const loadBefore = loadavg()[0] ?? 0
  const runs: SideBySideRuns = {}
  const loadOf = (c: HttpCase, seconds: number): Load => ({
    path: c.path,
    seconds,
    connections: 32,
    ...(c.create ? CREATE_SCRIPT : {}),
  })
  try {
    for (let round = 0; round < rounds; round++) {
      const started: Record<string, ServerProcess> = ceiling ? { ceiling } : {}
      try {
        for (const server of servers)
          started[server.name] = await startStore(
            join(dir, `round-${round}`, server.name.replaceAll(/\W+/g, '-')),
            catalogue,
            server.log,
            server.binary,
          )
        for (const name of names) {
          const server = started[name] as ServerProcess
          await loadServer(server, loadOf(cases[0] as HttpCase, 1))
          if (cases.some((c) => c.create)) await createArtists(`${server.url}/api/v1/artists`, 32)
        }
        for (const c of cases)
          addRound(runs, c.label, await loadRound(started, () => loadOf(c, seconds), round, together))
      } finally {
        await Promise.all(servers.map((server) => started[server.name]?.stop()))
        // Its data files and access logs: a round of creates leaves tens of megabytes.
        rmSync(join(dir, `round-${round}`), { recursive: true, force: true })
      }
      progress(`round ${round + 1} of ${rounds}`)
    }
  } finally {
    await ceiling?.stop()
  }
  const ratios: [string, string][] = [
    ['after', 'before'],
    ...(logOff ? ([['after --log off', 'before --log off']] as [string, string][]) : []),
    ...(logOff ? builds.map(({ name }): [string, string] => [name, `${name} --log off`]) : []),
    ...(ceiling ? servers.map(({ name }): [string, string] => [name, 'ceiling']) : []),
  ]
  const options = [
    `--rounds ${rounds} --seconds ${seconds}`,
    together ? '--together' : '',
    logOff ? '--log-off' : '',
    ceiling ? '--ceiling' : '',
    values.path ? `--path '${values.path}'` : '',
  ]
  const how = together ? 'the servers of a round loaded all at once' : 'the servers taking turns'
  return [
    await measuredOn(values.command(options.join(' ')), loadBefore, how),
    '',
    `Before: ${builds[0].what}; after: ${builds[1].what}.`,
    '',
    ...sideBySideTables(
      cases.map((c) => c.label),
      names,
      ratios,
      runs,
    ),
  ].join('\n')
}

type Handler = { handle(request: Request): Promise<Response> }
interface BuiltModules {
  createApp(options: object): Handler
  Metrics: new () => object
  createLogger(mode: string): { access?: unknown }
}

/** `src/` under `root`, bundled into `out` as the release build minifies it. */
async function bundle(root: string, out: string): Promise<BuiltModules> {
  const build = pkg.scripts.build
  const built = await Bun.build({
    entrypoints: ['app.ts', 'metrics/metrics.ts', 'log.ts'].map((file) => join(root, 'src', file)),
    outdir: out,
    root: join(root, 'src'),
    target: 'bun',
    format: 'esm',
    splitting: build.includes('--splitting'),
    minify: { syntax: build.includes('--minify-syntax'), whitespace: build.includes('--minify-whitespace') },
  })
  if (!built.success) throw new AggregateError(built.logs, `bundling ${root} failed`)
  const [app, metrics, log] = await Promise.all(
    ['app.js', join('metrics', 'metrics.js'), 'log.js'].map((file) => import(join(out, file))),
  )
  return { createApp: app.createApp, Metrics: metrics.Metrics, createLogger: log.createLogger }
}

/** The source tree of `spec` (a revision, or this working tree when undefined), in `dir`. */
async function sourceOf(name: BuildName, spec: string | undefined, dir: string) {
  if (spec === undefined) return { name, what: 'this working tree', root: ROOT }
  if (isExecutable(spec)) throw new Error(`--mode request-path bundles src/ of a revision, not an executable: ${spec}`)
  const root = join(dir, `${name}-tree`)
  return { name, what: `commit ${await treeOf(spec, root)}`, root }
}

async function measureRequestPath(values: CommandLine, dir: string): Promise<string> {
  const rounds = Number(values.rounds ?? 12)
  const requests = Number(values.requests)
  const path = values.path ?? `/api/v1/artists/${ARTISTS / 2}`
  const builds = [await sourceOf('before', values.before, dir), await sourceOf('after', values.after, dir)]
  const store = openMemoryStore()
  await writeCatalogue(join(dir, 'catalogue.json'), ARTISTS)
  await seedStore(store, join(dir, 'catalogue.json'))
  const CONFIGURATIONS = ['--log off', '--log off, again', '--metrics', 'access log', 'access log, --metrics'] as const
  const apps: { name: string; build: string; config: string; app: Handler }[] = []
  for (const { name: build, root } of builds) {
    const modules = await bundle(root, join(dir, `${build}-bundle`))
    for (const config of CONFIGURATIONS)
      apps.push({
        name: `${build}: ${config}`,
        build,
        config,
        app: modules.createApp({
          store,
          accessLog: config.startsWith('access log') ? modules.createLogger('pretty').access : undefined,
          metrics: config.includes('--metrics') ? new modules.Metrics() : undefined,
        }),
      })
  }
  const url = `http://127.0.0.1${path}`
  for (const { name, app } of apps) {
    const check = await app.handle(new Request(url))
    if (check.status !== 200) throw new Error(`${name}: ${path} answered ${check.status}`)
  }
  const cpu: Record<string, number[]> = Object.fromEntries(apps.map((each) => [each.name, []]))
  const loadBefore = loadavg()[0] ?? 0
  // Short turns, the order rotated, so that whatever else the machine does at a moment falls on every app alike.
  const CHUNK = 1000
  const chunks = Math.ceil(requests / CHUNK)
  // Round -1 warms every app up (its handlers compiled, the JIT settled) and is not counted.
  for (let round = -1; round < rounds; round++) {
    Bun.gc(true)
    const used = apps.map(() => 0)
    for (let chunk = 0; chunk < chunks; chunk++)
      for (let i = 0; i < apps.length; i++) {
        const at = (i + chunk) % apps.length
        const { app } = apps[at] as (typeof apps)[number]
        const start = process.cpuUsage()
        for (let n = 0; n < CHUNK; n++) await app.handle(new Request(url))
        const { user, system } = process.cpuUsage(start)
        used[at] = (used[at] as number) + user + system
      }
    if (round < 0) continue
    apps.forEach(({ name }, i) => {
      cpu[name]?.push(((used[i] as number) * 1000) / (chunks * CHUNK))
    })
    progress(`round ${round + 1} of ${rounds}`)
  }
  const lines = [
    await measuredOn(
      values.command(`--mode request-path --rounds ${rounds} --requests ${requests} --path '${path}'`),
      loadBefore,
    ),
    '',
    `Before: ${builds[0]?.what}; after: ${builds[1]?.what}.`,
    '',
    '| Build | Configuration | CPU per request (median) | Over `--log off` of the same build: median of per-round differences |',
    '| --- | --- | ---: | ---: |',
  ]
  const ns = (value: number) => `${Math.round(value).toLocaleString('en')} ns`
  for (const { name, build, config } of apps) {
    const own = cpu[name] ?? []
    const base = cpu[`${build}: --log off`] ?? []
    const extra = own.map((value, i) => value - (base[i] ?? Number.NaN))
    lines.push(`| ${build} | ${config} | ${ns(median(own))} | ${config === '--log off' ? '–' : ns(median(extra))} |`)
  }
  return lines.join('\n')
}

async function main(): Promise<void> {
  const values = commandLine()
  const measure = { http: measureHttp, 'request-path': measureRequestPath }[values.mode as string]
  if (!measure) throw new Error(USAGE)
  const dir = mkdtempSync(join(tmpdir(), 'rl-two-builds-'))
  try {
    console.log(`\n${await measure(values, dir)}`)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

if (import.meta.main) await main()
