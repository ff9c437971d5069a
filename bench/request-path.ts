/**
 * `bun bench/request-path.ts [BEFORE_COMMIT] [--rounds N] [--requests N] [--path PATH] 2>/dev/null`: what the
 * per-request hooks cost in JavaScript, in-process, compiled as the release build compiles them. `src/` of this tree
 * (and, given BEFORE_COMMIT, of that commit, taken with `git archive`) is bundled with the minify flags of
 * package.json's `build` (Elysia compiles a hook from its text, so a minified hook can compile differently from its
 * source: test/http/release-hooks.test.ts), and each build's app answers `app.handle(new Request(…))` for PATH in four
 * configurations: no log and no metrics (`--log off`, twice: the second is the control), `--metrics` alone, the
 * pretty access log alone (into stderr, hence `2>/dev/null`), and both. One in-memory store with 1,000 generated artists (as bench/metrics.ts serves) serves
 * them all. Every round
 * runs the apps in turns of 1,000 requests (the order rotated) until each has answered N, after a full collection,
 * and adds up each app's CPU time; the report gives each app's median CPU per request and the median of its per-round difference from the same
 * build's `--log off`, in nanoseconds.
 *
 * Over HTTP a request also costs the server its socket work, several times the JavaScript of a read: divide a
 * difference by the CPU per request that `bun bench/metrics.ts` measures to see what share of throughput it is.
 * In-process the machine's other work moves these figures far less than it moves wrk's.
 */
import { mkdtemp, rm, symlink } from 'node:fs/promises'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import pkg from '../package.json' with { type: 'json' }
import { seedStore } from '../src/seed/seed.ts'
import { openMemoryStore } from '../src/store/document/memory.ts'
import { writeCatalogue } from './catalogue.ts'
import { describeMachine } from './machine.ts'
import { run } from './two-builds.ts'

const { values, positionals } = parseArgs({
  args: process.argv.slice(2),
  options: {
    rounds: { type: 'string', default: '12' },
    requests: { type: 'string', default: '50000' },
    path: { type: 'string', default: '/api/v1/artists/500' },
  },
  allowPositionals: true,
})
const rounds = Number(values.rounds)
const requests = Number(values.requests)
const path = values.path as string
const beforeCommit = positionals[0]
const ROOT = join(import.meta.dir, '..')
const BUILD = pkg.scripts.build

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  const m = Math.floor(s.length / 2)
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2
}

type Handler = { handle(request: Request): Promise<Response> }
interface BuiltModules {
  createApp(options: object): Handler
  Metrics: new () => object
  createLogger(mode: string): { access?: unknown }
}

/** `src/` under `root`, bundled into `out` as the release build minifies it. */
async function bundle(root: string, out: string): Promise<BuiltModules> {
  const built = await Bun.build({
    entrypoints: ['app.ts', 'metrics/metrics.ts', 'log.ts'].map((file) => join(root, 'src', file)),
    outdir: out,
    root: join(root, 'src'),
    target: 'bun',
    format: 'esm',
    splitting: BUILD.includes('--splitting'),
    minify: { syntax: BUILD.includes('--minify-syntax'), whitespace: BUILD.includes('--minify-whitespace') },
  })
  if (!built.success) throw new AggregateError(built.logs, `bundling ${root} failed`)
  const [app, metrics, log] = await Promise.all(
    ['app.js', join('metrics', 'metrics.js'), 'log.js'].map((file) => import(join(out, file))),
  )
  return { createApp: app.createApp, Metrics: metrics.Metrics, createLogger: log.createLogger }
}

const dir = await mkdtemp(join(tmpdir(), 'rl-request-path-'))
try {
  const builds: [string, BuiltModules][] = []
  if (beforeCommit) {
    const tree = join(dir, 'before')
    await run(['mkdir', '-p', tree])
    await run(['sh', '-c', `git archive ${beforeCommit} src data/legends.json package.json | tar -x -C ${tree}`])
    await symlink(join(ROOT, 'node_modules'), join(tree, 'node_modules'))
    builds.push(['before', await bundle(tree, join(dir, 'before-out'))])
  }
  builds.push([beforeCommit ? 'after' : 'this tree', await bundle(ROOT, join(dir, 'out'))])
  const store = openMemoryStore()
  await writeCatalogue(join(dir, 'catalogue.json'), 1000)
  await seedStore(store, join(dir, 'catalogue.json'))
  // A second `--log off` app of each build is the control: its difference is what noise (and the order of the apps)
  // alone gives.
  const CONFIGURATIONS = ['--log off', '--log off, again', '--metrics', 'access log', 'access log, --metrics'] as const
  const apps: { name: string; build: string; config: string; app: Handler }[] = []
  for (const [build, modules] of builds)
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
  const url = `http://127.0.0.1${path}`
  const check = await (apps[0] as (typeof apps)[0]).app.handle(new Request(url))
  if (check.status !== 200) throw new Error(`${path} answered ${check.status}`)
  const cpu: Record<string, number[]> = Object.fromEntries(apps.map((each) => [each.name, []]))
  const load = loadavg()[0] ?? 0
  // Each round runs every app in short turns (CHUNK requests each, the order rotated), so that whatever else the
  // machine does at a moment falls on all of them alike, and adds up each app's CPU time.
  const CHUNK = 1000
  for (let round = -1; round < rounds; round++) {
    Bun.gc(true)
    const used = apps.map(() => 0)
    for (let done = 0; done < requests; done += CHUNK)
      for (let i = 0; i < apps.length; i++) {
        const at = (i + done / CHUNK) % apps.length
        const { app } = apps[at] as (typeof apps)[0]
        const start = process.cpuUsage()
        for (let n = 0; n < CHUNK; n++) await app.handle(new Request(url))
        const { user, system } = process.cpuUsage(start)
        used[at] = (used[at] as number) + user + system
      }
    // Round -1 warms every app up (its handlers compiled, the JIT settled) and is not counted.
    if (round < 0) continue
    apps.forEach(({ name }, i) => {
      cpu[name]?.push(((used[i] as number) * 1000) / (Math.ceil(requests / CHUNK) * CHUNK))
    })
    console.log(`request-path: round ${round + 1} of ${rounds}`)
  }
  const machine = await describeMachine('wrk')
  const lines = [
    `Measured ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC with \`bun bench/request-path.ts${beforeCommit ? ` ${beforeCommit}` : ''} --rounds ${rounds} --requests ${requests} --path ${path}\` on ${machine.cpu}, ${machine.cores} cores, Bun ${Bun.version}; one-minute load average ${load.toFixed(2)} before and ${(loadavg()[0] ?? 0).toFixed(2)} after.`,
    '',
    '| Build | Configuration | CPU per request (median) | Over `--log off` of the same build: median of per-round differences |',
    '| --- | --- | ---: | ---: |',
  ]
  for (const { name, build, config } of apps) {
    const own = cpu[name] ?? []
    const base = cpu[`${build}: --log off`] ?? []
    const extra = own.map((ns, i) => ns - (base[i] ?? Number.NaN))
    lines.push(
      `| ${build} | ${config} | ${Math.round(median(own)).toLocaleString('en')} ns | ${config === '--log off' ? '–' : `${Math.round(median(extra)).toLocaleString('en')} ns`} |`,
    )
  }
  console.log(`\n${lines.join('\n')}`)
} finally {
  await rm(dir, { recursive: true, force: true })
}
