#!/usr/bin/env bun
/**
 * The in-process service on Node (`createService`, the npm package's lib/service.cjs) side by side with the
 * executable as a child process (`startServer`) and with a hand-written MSW-style handler returning the same JSON.
 * Everything measured runs under `node`, in a project made as docs/testing-with-rock-legends.md says (`npm init -y`,
 * `bun run pack`'s tarballs installed, msw beside them); this driver only spawns it and reports.
 *
 * 1. Cold: a new `node` process per run, from its spawn to the artist's JSON in hand, each part timed inside it, for
 *    the in-process service, `startServer`, the handler, the handler through MSW's `setupServer` and `fetch`, and the
 *    service through MSW as the recipe wires it. The cases take turns, run after run, after one warm-up run.
 * 2. Warm, in one process: `createService` after the first, its first answer, `reset()`, and reads per second of one
 *    artist and a list page through `service.fetch`, the handler, MSW, and `fetch` to `startServer` on loopback.
 * 3. Memory: heap and RSS growth of 20 services held at once (`--expose-gc`), per service.
 * 4. Size: the main package's tarball and unpacked size with and without lib/service.cjs, beside the executable.
 *
 *   bun bench/in-process.ts [--runs N] [--write]     (--write records the section in bench/RESULTS.md)
 */
import { mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { loadavg } from 'node:os'
import { join } from 'node:path'
import { describeMachine } from './machine.ts'
import { installPackedProject, sh } from './npm-project.ts'
import { writeNamedSection } from './results-file.ts'

const ROOT = join(import.meta.dir, '..')
const WORK = join(import.meta.dir, '.work', 'in-process')
const PROJECT = join(WORK, 'project')
/** The msw the handlers run through: pinned, so that runs compare. */
const MSW = 'msw@2.15.0'
const BASE = 'http://api.example.com'
const ARTIST = '/api/v1/artists/1'
const LIST = '/api/v1/artists'

/** The project, with msw beside the packages; the versions of Node, npm and msw there. */
async function installProject() {
  rmSync(WORK, { recursive: true, force: true })
  const installed = await installPackedProject(PROJECT, [MSW])
  const msw = JSON.parse(sh('cat node_modules/msw/package.json', PROJECT)).version as string
  return { ...installed, msw }
}

/** What every script in the project shares: the clock and the bodies the handler answers with. */
const COMMON = `import { fileURLToPath } from 'node:url'
export const SERVICE = fileURLToPath(new URL('./node_modules/rock-legends/lib/service.cjs', import.meta.url))
export const BASE = ${JSON.stringify(BASE)}
export const ARTIST = ${JSON.stringify(ARTIST)}
export const LIST = ${JSON.stringify(LIST)}
export const now = () => performance.now()
`

/** A cold case's steps, each some lines of the script: `import` (left out where there is none), `create`, `answer`. */
interface ColdSteps {
  /** Imports of the script beyond the clock and the paths. */
  header?: string
  import?: string
  create: string
  /** An expression whose value, awaited, is the artist's JSON. */
  answer: string
  /** What ends the case once its line is printed. */
  end?: string
}

/**
 * The script of a cold case, one per process: prints `{ parts: { name: ms } }`, the parts in order, the first part
 * timed from the process's own start (`performance.now()` counts from it). Node's start and the import of the script
 * come first.
 */
function coldScript({ header = '', import: load, create, answer, end = '' }: ColdSteps): string {
  const timed = (part: string, code: string) => `t = now()\n${code}\nparts.${part} = now() - t\n`
  return `import { SERVICE, BASE, ARTIST, now } from './common.mjs'
${header}
const parts = { node: now() }
let t
${load ? timed('import', load) : ''}${timed('create', create)}${timed('answer', `const artist = await ${answer}`)}
if (artist.id !== 1) throw new Error('not the artist')
console.log(JSON.stringify({ parts }))
${end}
`
}

const CANNED = "import { artist as canned } from './bodies.mjs'"

/** Each cold case's script. */
const COLD: Record<string, string> = {
  service: coldScript({
    import: 'const { createService } = (await import(SERVICE)).default',
    create: 'const service = await createService({ seed: true })',
    answer: '(await service.fetch(ARTIST)).json()',
    end: 'await service.close()',
  }),
  serviceRequire: coldScript({
    header: "import { createRequire } from 'node:module'",
    import: 'const { createService } = createRequire(import.meta.url)(SERVICE)',
    create: 'const service = await createService({ seed: true })',
    answer: '(await service.fetch(ARTIST)).json()',
    end: 'await service.close()',
  }),
  package: coldScript({
    import: "const { createService } = await import('rock-legends')",
    create: 'const service = await createService({ seed: true })',
    answer: '(await service.fetch(ARTIST)).json()',
    end: 'await service.close()',
  }),
  server: coldScript({
    import: "const { startServer } = await import('rock-legends')",
    create: 'const server = await startServer({ seed: true })',
    answer: '(await fetch(server.url + ARTIST)).json()',
    end: 'await server.stop()',
  }),
  handler: coldScript({
    header: CANNED,
    create: 'const handler = (request) => Response.json(canned)',
    answer: '(await handler(new Request(BASE + ARTIST))).json()',
  }),
  mswHandler: coldScript({
    header: CANNED,
    import: "const { http, HttpResponse } = await import('msw')\nconst { setupServer } = await import('msw/node')",
    create:
      "const server = setupServer(http.get(BASE + '/api/v1/artists/:id', () => HttpResponse.json(canned)))\nserver.listen()",
    answer: '(await fetch(BASE + ARTIST)).json()',
    end: 'server.close()',
  }),
  mswService: coldScript({
    import:
      "const { http } = await import('msw')\nconst { setupServer } = await import('msw/node')\nconst { createService } = await import('rock-legends')",
    create:
      "const service = await createService({ seed: true })\nconst server = setupServer(http.all(BASE + '/*', ({ request }) => service.fetch(request)))\nserver.listen()",
    answer: '(await fetch(BASE + ARTIST)).json()',
    end: 'server.close()\nawait service.close()',
  }),
}

/** Writes the bodies the handler returns: the service's own answers, so that every case returns the same JSON. */
const BODIES = `import { writeFileSync } from 'node:fs'
import { SERVICE, ARTIST, LIST } from './common.mjs'
const { createService } = (await import(SERVICE)).default
const service = await createService({ seed: true })
const artist = await (await service.fetch(ARTIST)).json()
const list = await (await service.fetch(LIST)).json()
writeFileSync('bodies.mjs', \`export const artist = \${JSON.stringify(artist)}\\nexport const list = \${JSON.stringify(list)}\\n\`)
await service.close()
`

/** The warm cases, in one process: prints one JSON object. */
const WARM = `import { readFileSync } from 'node:fs'
import { SERVICE, BASE, ARTIST, LIST, now } from './common.mjs'
import { artist as cannedArtist, list as cannedList } from './bodies.mjs'
import { http, HttpResponse } from 'msw'
import { setupServer } from 'msw/node'
import { startServer } from 'rock-legends'
const { createService } = (await import(SERVICE)).default
const [creates, resets, rounds, sliceMs, tick] = process.argv.slice(2).map(Number)
const out = {}
const cpuNow = () => { const { user, system } = process.cpuUsage(); return (user + system) / 1000 }
/** The CPU time of the process \`pid\` (user and system) in ms, from /proc. */
const cpuOf = (pid) => { const f = readFileSync('/proc/' + pid + '/stat', 'utf8').split(') ')[1].split(' '); return ((Number(f[11]) + Number(f[12])) * 1000) / tick }

// createService after the first, and the first answer of each.
const first = await createService({ seed: true })
await (await first.fetch(ARTIST)).json()
for (const [name, options] of [['createSeeded', { seed: true }], ['createEmpty', {}]]) {
  for (const key of [name, name + 'Cpu', name + 'Answer', name + 'AnswerCpu']) out[key] = []
  for (let i = 0; i < creates; i++) {
    let [t, c] = [now(), cpuNow()]
    const service = await createService(options)
    out[name].push(now() - t)
    out[name + 'Cpu'].push(cpuNow() - c)
    ;[t, c] = [now(), cpuNow()]
    await (await service.fetch(options.seed ? ARTIST : LIST)).json()
    out[name + 'Answer'].push(now() - t)
    out[name + 'AnswerCpu'].push(cpuNow() - c)
    await service.close()
  }
}

// reset(): after one create (what a beforeEach undoes), and with nothing written.
const body = JSON.stringify({ name: 'Bench Artist', description: 'An artist made to be undone.' })
const create = () =>
  first.fetch('/api/v1/artists', { method: 'POST', headers: { 'x-api-key': first.apiKey, 'content-type': 'application/json' }, body })
const made = await create()
if (made.status !== 201) throw new Error('create: ' + made.status + ' ' + (await made.text()))
await first.reset()
for (const key of ['resetAfterWrite', 'resetAfterWriteCpu', 'resetClean', 'resetCleanCpu']) out[key] = []
for (let i = 0; i < resets; i++) {
  await (await create()).arrayBuffer()
  let [t, c] = [now(), cpuNow()]
  await first.reset()
  out.resetAfterWrite.push(now() - t)
  out.resetAfterWriteCpu.push(cpuNow() - c)
  ;[t, c] = [now(), cpuNow()]
  await first.reset()
  out.resetClean.push(now() - t)
  out.resetCleanCpu.push(cpuNow() - c)
}
if ((await first.fetch('/api/v1/artists/' + (await made.json()).id)).status !== 404) throw new Error('reset kept the create')

// Reads per second, the cases taking turns in slices of sliceMs, round after round.
const handler = (request) => Response.json(new URL(request.url).pathname === ARTIST ? cannedArtist : cannedList)
const server = await startServer({ seed: true })
const msw = setupServer()
const cases = {
  service: { call: (path) => first.fetch(BASE + path) },
  handler: { call: (path) => Promise.resolve(handler(new Request(BASE + path))) },
  mswHandler: {
    call: (path) => fetch(BASE + path),
    on: () => { msw.resetHandlers(http.get(BASE + '/*', ({ request }) => HttpResponse.json(new URL(request.url).pathname === ARTIST ? cannedArtist : cannedList))); msw.listen() },
  },
  mswService: {
    call: (path) => fetch(BASE + path),
    on: () => { msw.resetHandlers(http.all(BASE + '/*', ({ request }) => first.fetch(request))); msw.listen() },
  },
  server: { call: (path) => fetch(server.url + path), cpu: () => cpuOf(server.pid) },
}
const names = Object.keys(cases)
for (const path of [ARTIST, LIST]) {
  const expected = JSON.stringify(path === ARTIST ? cannedArtist : cannedList)
  for (const name of names) {
    const { call, on } = cases[name]
    on?.()
    const got = JSON.stringify(await (await call(path)).json())
    if (got !== expected) throw new Error(name + ' answered ' + path + ' otherwise: ' + got.slice(0, 200))
    if (on) msw.close()
  }
}
for (const path of ['artist', 'list']) for (const name of names) { out[path + ':' + name] = []; out['cpu:' + path + ':' + name] = [0, 0] }
for (let round = -1; round < rounds; round++) {
  for (let k = 0; k < names.length; k++) {
    const name = names[(k + Math.max(round, 0)) % names.length]
    const { call, on, cpu } = cases[name]
    on?.()
    for (const [label, path] of [['artist', ARTIST], ['list', LIST]]) {
      let count = 0
      const started = now()
      const cpuStarted = cpuNow() + (cpu?.() ?? 0)
      let elapsed = 0
      while ((elapsed = now() - started) < sliceMs) {
        await (await call(path)).json()
        count++
      }
      const spent = cpuNow() + (cpu?.() ?? 0) - cpuStarted
      if (round < 0) continue
      out[label + ':' + name].push((count / elapsed) * 1000)
      out['cpu:' + label + ':' + name][0] += spent
      out['cpu:' + label + ':' + name][1] += count
    }
    if (on) msw.close()
  }
}
await server.stop()
await first.close()
console.log(JSON.stringify(out))
`

/** Memory of `count` services held at once, in a process of its own with --expose-gc: prints one JSON object. */
const MEMORY = `import { SERVICE, ARTIST, LIST } from './common.mjs'
const { createService } = (await import(SERVICE)).default
const [count, seeded] = [Number(process.argv[2]), process.argv[3] === 'seeded']
const options = seeded ? { seed: true } : {}
const settle = async () => { for (let i = 0; i < 3; i++) { global.gc(); await new Promise((r) => setTimeout(r, 10)) } }
const use = async (service) => { await (await service.fetch(seeded ? ARTIST : LIST)).json(); return service }
// One service first, so that the code loaded and compiled once is not counted against the others.
const warm = await use(await createService(options))
await settle()
const before = process.memoryUsage()
const held = []
for (let i = 0; i < count; i++) held.push(await use(await createService(options)))
await settle()
const after = process.memoryUsage()
console.log(JSON.stringify({ heap: (after.heapUsed - before.heapUsed) / count, rss: (after.rss - before.rss) / count, external: (after.external + after.arrayBuffers - before.external - before.arrayBuffers) / count, heapTotal: after.heapUsed, rssTotal: after.rss }))
for (const service of [warm, ...held]) await service.close()
`

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number
}
const median = (values: number[]) => percentile(values, 50)
const ms = (value: number) => (value < 1 ? `${(value * 1000).toFixed(0)} µs` : `${value.toFixed(1)} ms`)
const perSecond = (value: number) => `${Math.round(value).toLocaleString('en-US')}/s`
const kib = (bytes: number) => `${(bytes / 1024).toFixed(0)} KiB`
const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MiB`

/** One cold run of `name`: the wall time from `node`'s spawn to the artist in hand, and the parts it printed. */
async function coldRun(name: string): Promise<{ wall: number; cpu: number; parts: Record<string, number> }> {
  const started = performance.now()
  const child = Bun.spawn(['node', `cold-${name}.mjs`], { cwd: PROJECT, stdout: 'pipe', stderr: 'pipe' })
  const reader = child.stdout.getReader()
  let text = ''
  while (!text.includes('\n')) {
    const { value, done } = await reader.read()
    if (done) throw new Error(`node cold-${name}.mjs printed nothing:\n${await new Response(child.stderr).text()}`)
    text += new TextDecoder().decode(value)
  }
  const wall = performance.now() - started
  reader.releaseLock()
  if ((await child.exited) !== 0)
    throw new Error(`node cold-${name}.mjs failed:\n${await new Response(child.stderr).text()}`)
  const cpu = Number(child.resourceUsage()?.cpuTime.total ?? Number.NaN) / 1000
  return { wall, cpu, parts: JSON.parse(text).parts }
}

/** The sizes of the main package's tarball, with and without lib/service.cjs, as `npm pack` reports them. */
function packageSizes(mainTarball: string) {
  const dir = join(WORK, 'main-package')
  rmSync(dir, { recursive: true, force: true })
  mkdirSync(dir, { recursive: true })
  sh(`tar -xzf ${mainTarball}`, dir)
  const packDry = () =>
    (
      JSON.parse(sh('npm pack --dry-run --json --ignore-scripts', join(dir, 'package'))) as {
        size: number
        unpackedSize: number
      }[]
    )[0] as { size: number; unpackedSize: number }
  const service = join(dir, 'package/lib/service.cjs')
  const serviceBytes = statSync(service).size
  const serviceGzip = Number(sh(`gzip -9 -c ${service} | wc -c`, dir).trim())
  const withService = { size: statSync(mainTarball).size, unpackedSize: packDry().unpackedSize }
  rmSync(service)
  const without = packDry()
  return { serviceBytes, serviceGzip, withService, without }
}

if (import.meta.main) {
  const args = process.argv.slice(2)
  const flag = (name: string, fallback: number) => {
    const at = args.indexOf(name)
    const value = at >= 0 ? Number(args[at + 1]) : fallback
    if (!Number.isInteger(value) || value < 1) throw new Error(`${name} takes a whole number`)
    return value
  }
  const runs = flag('--runs', 20)
  const [creates, resets, rounds, sliceMs, held] = [50, 1000, 5, 400, 20]
  const installed = await installProject()
  writeFileSync(join(PROJECT, 'common.mjs'), COMMON)
  writeFileSync(join(PROJECT, 'bodies-write.mjs'), BODIES)
  sh('node bodies-write.mjs', PROJECT)
  for (const [name, script] of Object.entries(COLD)) writeFileSync(join(PROJECT, `cold-${name}.mjs`), script)
  writeFileSync(join(PROJECT, 'warm.mjs'), WARM)
  writeFileSync(join(PROJECT, 'memory.mjs'), MEMORY)

  const loadBefore = loadavg()[0] as number
  const coldNames = Object.keys(COLD)
  const cold = Object.fromEntries(
    coldNames.map((name) => [name, [] as { wall: number; cpu: number; parts: Record<string, number> }[]]),
  )
  for (let run = -1; run < runs; run++) {
    for (let k = 0; k < coldNames.length; k++) {
      const name = coldNames[(k + Math.max(run, 0)) % coldNames.length] as string
      const result = await coldRun(name)
      if (run >= 0) cold[name]?.push(result)
    }
  }
  const warm = JSON.parse(
    sh(`node warm.mjs ${creates} ${resets} ${rounds} ${sliceMs} $(getconf CLK_TCK)`, PROJECT),
  ) as Record<string, number[]>
  const memory = Object.fromEntries(
    ['seeded', 'empty'].map((kind) => [
      kind,
      JSON.parse(sh(`node --expose-gc memory.mjs ${held} ${kind}`, PROJECT)) as Record<string, number>,
    ]),
  )
  const loadAfter = loadavg()[0] as number
  const sizes = packageSizes(installed.packed.tarballs[0] as string)
  const executable = statSync(join(ROOT, 'dist/rock-legends')).size
  const platformTarball = statSync(installed.packed.tarballs[1] as string).size

  const coldLabels: Record<string, string> = {
    service: '`createService({ seed: true })`, lib/service.cjs loaded by `import()`',
    serviceRequire: 'the same, lib/service.cjs loaded by `require` (`createRequire`)',
    package:
      "the same through the package: `import { createService } from 'rock-legends'` (the bundle loads in the first call)",
    server: '`startServer({ seed: true })` (the executable), `fetch` over loopback',
    handler: 'hand-written handler `(request) => Response.json(artist)`',
    mswHandler: 'the same handler through MSW `setupServer` + `fetch`',
    mswService: "the package's `createService({ seed: true })` through MSW `setupServer` + `fetch` (the recipe)",
  }
  const part = (values: { parts: Record<string, number> }[], name: string) =>
    values.some((value) => name in value.parts) ? ms(median(values.map((value) => value.parts[name] as number))) : '—'
  const coldRows = coldNames.map((name) => {
    const values = cold[name] ?? []
    const walls = values.map((value) => value.wall)
    const cpus = values.map((value) => value.cpu)
    return `| ${coldLabels[name]} | ${part(values, 'node')} | ${part(values, 'import')} | ${part(values, 'create')} | ${part(values, 'answer')} | **${ms(median(walls))}** | ${ms(percentile(walls, 90))} | **${ms(median(cpus))}** |`
  })
  const warmLabels: Record<string, string> = {
    service: '`service.fetch(request)`',
    handler: 'hand-written handler',
    mswHandler: 'hand-written handler through MSW + `fetch`',
    mswService: '`service.fetch` through MSW + `fetch` (the recipe)',
    server: '`fetch` to `startServer` over loopback',
  }
  const rate = (key: string) => warm[key] ?? []
  const ratio = (key: string, over: string) => {
    const a = rate(key)
    const b = rate(over)
    return `${median(a.map((value, i) => value / (b[i] as number))).toFixed(2)}×`
  }
  /** CPU time per read over all the rounds, in ms. */
  const cpuPerRead = (key: string) => {
    const [spent = Number.NaN, count = Number.NaN] = warm[`cpu:${key}`] ?? []
    return spent / count
  }
  const cpuRatio = (key: string, over: string) => `${(cpuPerRead(key) / cpuPerRead(over)).toFixed(2)}×`
  const warmRows = Object.keys(warmLabels).map(
    (name) =>
      `| ${warmLabels[name]} | ${perSecond(median(rate(`artist:${name}`)))} | ${ratio(`artist:${name}`, 'artist:service')} | ${ms(cpuPerRead(`artist:${name}`))} (${cpuRatio(`artist:${name}`, 'artist:service')}) | ${perSecond(median(rate(`list:${name}`)))} | ${ratio(`list:${name}`, 'list:service')} | ${ms(cpuPerRead(`list:${name}`))} (${cpuRatio(`list:${name}`, 'list:service')}) |`,
  )
  const timeRow = (label: string, key: string) => {
    const values = warm[key] ?? []
    return `| ${label} | ${values.length} | **${ms(median(values))}** | ${ms(percentile(values, 10))} | ${ms(percentile(values, 90))} | ${ms(percentile(values, 99))} | **${ms(median(warm[`${key}Cpu`] ?? []))}** |`
  }
  const machine = await describeMachine('')
  const when = new Date().toISOString().slice(0, 16).replace('T', ' ')
  const section = [
    '## In-process on Node: `createService` beside `startServer` and a hand-written handler',
    '',
    `Measured ${when} UTC with \`bun run bench:in-process --runs ${runs}\` (bench/in-process.ts) on ${machine.cpu}, ${machine.cores} cores, ${machine.memory}, ${machine.kernel}; Node ${installed.node}, npm ${installed.npm}, msw ${installed.msw}. Everything measured runs under \`node\` in a project made with \`npm init -y\` with \`bun run pack\`'s tarballs installed (the main package, whose \`createService\` loads lib/service.cjs, and @rock-legends/${installed.packed.platforms.join(', @rock-legends/')}, whose executable \`startServer\` spawns) and msw. The hand-written handler returns the JSON the service answered (\`GET ${ARTIST}\`, and \`GET ${LIST}\` for the list page), so every case hands back the same body, parsed with \`.json()\`. One-minute load average ${loadBefore.toFixed(2)} before and ${loadAfter.toFixed(2)} after (the machine is shared: compare the rows, not the runs).`,
    '',
    `### Cold: a new \`node\` process to the artist's JSON in hand`,
    '',
    `${runs} runs of each case after one warm-up run, the cases taking turns run after run. _Node_ is \`performance.now()\` when the script starts (Node's own start and the script's import); _import_ the \`import()\` (or \`require\`) of the bundle, of rock-legends or of msw; _create_ \`createService\`, \`startServer\` or \`setupServer(...).listen()\` (with the recipe, both); _answer_ the first GET of the artist to its parsed JSON (medians of each). _Total_ is timed by the driver from the spawn of \`node\` to the line the script prints then; _CPU_ is the user and system time of that \`node\` process and the children it waited for (the executable, for \`startServer\`), from its spawn to its exit (the service closed or the server stopped after the line). On a machine this busy the CPU time is the steadier figure: it counts the work, not the wait for a core.`,
    '',
    '| Case | Node | Import | Create | First answer | Total, median | Total, p90 | CPU, median |',
    '| ---- | ---: | -----: | -----: | -----------: | ------------: | ---------: | ----------: |',
    ...coldRows,
    '',
    '### Warm, in one process',
    '',
    `After one service made and answering: ${creates} \`createService\` each followed by its first answer (then \`close()\`); ${resets} rounds of a create (\`POST /api/v1/artists\`, untimed) then \`reset()\`, then \`reset()\` again with nothing written.`,
    '',
    '| Call | Runs | Median | p10 | p90 | p99 | CPU, median |',
    '| ---- | ---: | -----: | --: | --: | --: | ----------: |',
    timeRow('`createService({ seed: true })`, after the first', 'createSeeded'),
    timeRow('its first answer: `GET` one artist, `.json()`', 'createSeededAnswer'),
    timeRow('`createService()` (empty store), after the first', 'createEmpty'),
    timeRow('its first answer: `GET` the list page, `.json()`', 'createEmptyAnswer'),
    timeRow('`reset()` after one create', 'resetAfterWrite'),
    timeRow('`reset()` with nothing written', 'resetClean'),
    '',
    `Reads, one at a time (each awaited, its body parsed with \`.json()\`): ${rounds} rounds after a warm-up round, each case reading for ${sliceMs} ms per path per round, the cases taking turns; medians of the rounds, and the median of the per-round ratios to \`service.fetch\`. MSW intercepts the global \`fetch\` only while its case runs (\`listen()\`, then \`close()\`). _CPU per read_ is the \`node\` process's user and system time (\`process.cpuUsage()\`), plus the executable's from /proc for \`startServer\`, over all the measured reads of the case, and its ratio to \`service.fetch\`'s. _CPU_ of a call is the \`node\` process's over that call.`,
    '',
    '| Case | One artist | × service.fetch | CPU per read | List page | × service.fetch | CPU per read |',
    '| ---- | ---------: | --------------: | -----------: | --------: | --------------: | -----------: |',
    ...warmRows,
    '',
    '### Memory per service',
    '',
    `${held} services made and held at once in one \`node --expose-gc\` process, each having answered one request, after one made first (the code loaded once is not counted); \`global.gc()\` before each reading; the growth divided by ${held}.`,
    '',
    '| Services | Heap used, per service | RSS, per service | External and array buffers, per service | Heap used, all held | RSS, all held |',
    '| -------- | ---------------------: | ---------------: | --------------------------------------: | ------------------: | ------------: |',
    ...(['seeded', 'empty'] as const).map((kind) => {
      const m = memory[kind] as Record<string, number>
      return `| ${kind === 'seeded' ? '`{ seed: true }`' : 'empty store'} | ${kib(m.heap as number)} | ${kib(m.rss as number)} | ${kib(m.external as number)} | ${mib(m.heapTotal as number)} | ${mib(m.rssTotal as number)} |`
    }),
    '',
    '### Size',
    '',
    "Of `bun run pack`'s tarballs; the unpacked sizes and the tarball without lib/service.cjs are `npm pack --dry-run`'s figures for the main package as packed, then with lib/service.cjs removed.",
    '',
    '| What | Bytes |',
    '| ---- | ----: |',
    `| main package \`rock-legends\`, tarball | ${kib(sizes.withService.size)} |`,
    `| main package, tarball without lib/service.cjs | ${kib(sizes.without.size)} |`,
    `| main package, unpacked | ${kib(sizes.withService.unpackedSize)} |`,
    `| main package, unpacked without lib/service.cjs | ${kib(sizes.without.unpackedSize)} |`,
    `| lib/service.cjs alone (gzip -9) | ${kib(sizes.serviceBytes)} (${kib(sizes.serviceGzip)}) |`,
    `| the executable \`dist/rock-legends\` (its platform package's tarball) | ${mib(executable)} (${mib(platformTarball)}) |`,
  ].join('\n')
  process.stdout.write(`${section}\n`)
  if (args.includes('--write')) await writeNamedSection('in-process', section)
}
