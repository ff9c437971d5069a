import { createHash } from 'node:crypto'
import { cpSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { basename, join, resolve } from 'node:path'
import { NPM_DIST, type PackResult, pack, SCOPE } from '../../scripts/pack.ts'
import { ensureBinary, removeDir, tempDir } from '../support/binary.ts'

const ROOT = resolve(import.meta.dir, '../..')
/** The recipes of docs/testing-with-rock-legends.md, each a Node project of its own. */
export const RECIPES = join(ROOT, 'npm/recipes')

/**
 * The recipes of docs/testing-with-rock-legends.md: each folder's files, the test runner the docs install for it
 * (pinned), the command the docs run it with, and what that prints when both tests passed.
 */
export const RECIPE_RUNS = [
  { recipe: 'node-test', runner: [], command: 'node --test', passed: /^# pass 2$/m },
  { recipe: 'vitest', runner: ['vitest@4.1.12', 'vite@8.3.8'], command: 'npx vitest run', passed: /Tests\s+2 passed/ },
  { recipe: 'jest', runner: ['jest@30.5.2'], command: 'npx jest', passed: /Tests:\s+2 passed, 2 total/ },
  { recipe: 'playwright', runner: ['@playwright/test@1.65.1'], command: 'npx playwright test', passed: /2 passed/ },
  // One server for the whole run, started with --fixtures, and a namespace per test or worker.
  {
    recipe: 'vitest-namespaces',
    runner: ['vitest@4.1.12', 'vite@8.3.8'],
    command: 'npx vitest run',
    passed: /Tests\s+9 passed \(9\)/,
  },
  {
    recipe: 'jest-namespaces',
    runner: ['jest@30.5.2'],
    command: 'npx jest --maxWorkers=3',
    passed: /Tests:\s+8 passed, 8 total/,
  },
  {
    recipe: 'playwright-namespaces',
    runner: ['@playwright/test@1.65.1'],
    command: 'npx playwright test',
    passed: /^\s*9 passed/m,
  },
  // No server: the service in the test's own process (createService), answering MSW, page.route or fetch.
  {
    recipe: 'vitest-msw',
    runner: ['vitest@4.1.12', 'vite@8.3.8', 'jsdom@26.1.0', 'msw@2.15.0'],
    command: 'npx vitest run',
    passed: /Tests\s+7 passed \(7\)/,
  },
  {
    recipe: 'jest-msw',
    runner: ['jest@30.5.2', 'jest-environment-jsdom@30.5.2', 'msw@2.10.5', 'undici@6.29.1'],
    command: 'npx jest',
    passed: /Tests:\s+7 passed, 7 total/,
  },
  {
    recipe: 'playwright-route',
    runner: ['@playwright/test@1.65.1'],
    command: 'npx playwright test',
    passed: /^\s*6 passed/m,
  },
  { recipe: 'node-test-fetch', runner: [], command: 'node --test', passed: /^# pass 7$/m },
] as const

/** Whether Node.js and npm are on this machine; without them the npm tests skip, unless CI=true, where they fail. */
export const hasNode = Bun.which('node') !== null && Bun.which('npm') !== null

let packing: Promise<PackResult> | undefined

/** `bun run pack` once per test run, after the executable the other tests use is built. */
export function packOnce(): Promise<PackResult> {
  packing ??= ensureBinary().then(() => pack())
  return packing
}

type Manifest = Record<string, unknown> & { name: string; version: string }
const manifests = new Map<string, Manifest>()

/** The package.json inside a tarball (read once: a platform package's tarball takes a moment to decompress). */
export function manifestOf(tarball: string): Manifest {
  const known = manifests.get(tarball)
  if (known) return known
  const read = Bun.spawnSync(['tar', '-xzOf', tarball, 'package/package.json'], { stdout: 'pipe', stderr: 'pipe' })
  if (read.exitCode !== 0) throw new Error(`cannot read ${tarball}: ${read.stderr}`)
  const manifest = JSON.parse(read.stdout.toString()) as Manifest
  manifests.set(tarball, manifest)
  return manifest
}

/**
 * A registry on loopback serving the packed platform packages, and 404 for any other: the projects below take
 * `@rock-legends/*` from it (`.npmrc`), so npm picks the platform package by `os` and `cpu` exactly as it would from
 * the public registry, and nothing of ours is ever asked of the public registry.
 */
export function startScopeRegistry(packed: PackResult) {
  const packages = new Map<string, { manifest: Record<string, unknown>; file: string }>()
  for (const file of packed.tarballs) {
    const manifest = manifestOf(file)
    if (manifest.name.startsWith(`${SCOPE}/`)) packages.set(manifest.name, { manifest, file })
  }
  /** Every path asked of it, in order. */
  const requests: string[] = []
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch(request) {
      const path = decodeURIComponent(new URL(request.url).pathname)
      requests.push(path)
      const tarball = /^\/-\/([^/]+\.tgz)$/.exec(path)?.[1]
      if (tarball) {
        const found = [...packages.values()].find((each) => basename(each.file) === tarball)
        return found ? new Response(Bun.file(found.file)) : new Response('not found', { status: 404 })
      }
      const entry = packages.get(path.slice(1))
      if (!entry) return Response.json({ error: 'not found' }, { status: 404 })
      const bytes = readFileSync(entry.file)
      const version = entry.manifest.version as string
      return Response.json({
        name: entry.manifest.name,
        'dist-tags': { latest: version },
        versions: {
          [version]: {
            ...entry.manifest,
            dist: {
              tarball: `${new URL(request.url).origin}/-/${basename(entry.file)}`,
              integrity: `sha512-${createHash('sha512').update(bytes).digest('base64')}`,
              shasum: createHash('sha1').update(bytes).digest('hex'),
            },
          },
        },
      })
    },
  })
  return { url: `http://127.0.0.1:${server.port}/`, requests, stop: () => server.stop(true) }
}

let nodeOnly: Record<string, string> | undefined

/**
 * An environment in which `node`, `npm`, `npx` and `sh` are found and `bun` is not: a directory of links to those
 * four is the whole PATH (Bun's own link sits beside node's in /usr/bin here).
 */
export function nodeOnlyEnv(): Record<string, string> {
  if (!nodeOnly) {
    const dir = tempDir('rock-legends-node-only-')
    process.once('exit', () => removeDir(dir))
    const bin = join(dir, 'bin')
    mkdirSync(bin)
    for (const tool of ['node', 'npm', 'npx', 'sh']) {
      const found = Bun.which(tool)
      if (!found) throw new Error(`${tool} is not on PATH`)
      symlinkSync(found, join(bin, tool))
    }
    const { HOME = '/root', TMPDIR, LANG } = process.env
    nodeOnly = { PATH: bin, HOME, ...(TMPDIR ? { TMPDIR } : {}), ...(LANG ? { LANG } : {}), CI: 'true' }
  }
  return nodeOnly
}

/** Runs a command to completion in the Node-only environment. */
export async function run(command: string[], cwd: string, env: Record<string, string> = {}) {
  const child = Bun.spawn(command, {
    cwd,
    env: { ...nodeOnlyEnv(), ...env },
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const [stdout, stderr, code] = await Promise.all([
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
    child.exited,
  ])
  return { code, stdout, stderr, output: `${stdout}\n${stderr}` }
}

/** The lines of `.npmrc` every project here gets: quiet, and npm's cache first (the runners are pinned). */
const QUIET_NPMRC = ['audit=false', 'fund=false', 'update-notifier=false', 'prefer-offline=true']

/**
 * A fresh Node project in a temporary directory, as after publication: `npm install` of the packed main package,
 * its platform package taken from {@link startScopeRegistry} by `os` and `cpu` as npm would take it from the registry.
 */
export async function installProject(packed: PackResult, registry: string): Promise<string> {
  const dir = tempDir('rock-legends-project-')
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify({ private: true, type: 'module' })}\n`)
  writeFileSync(join(dir, '.npmrc'), [`${SCOPE}:registry=${registry}`, ...QUIET_NPMRC, ''].join('\n'))
  const main = packed.tarballs[0] as string
  const install = await run(['npm', 'install', '--no-audit', '--no-fund', '--loglevel=error', main], dir)
  if (install.code !== 0) throw new Error(`npm install failed in ${dir}:\n${install.output}`)
  return dir
}

/**
 * The commands docs/testing-with-rock-legends.md gives to use the packages before they are published, in a project
 * directory beside the clone whose `bun run pack` wrote `dist/npm/`: the platform packages first, as optional
 * dependencies (npm installs the one whose os and cpu match and locks them all), then the main package.
 */
export const documentedInstall = (version: string, dist = '../rock-legends/dist/npm') => [
  `npm install --save-optional ${dist}/rock-legends-*-${version}.tgz`,
  `npm install --save-dev ${dist}/rock-legends-${version}.tgz`,
]

/**
 * A project made the way docs/testing-with-rock-legends.md tells a user: `npm init -y` in an empty directory (a
 * CommonJS project: npm init writes no `"type": "module"`), then {@link documentedInstall} from `dist/npm/` (through
 * `sh`, glob and all), then `npm install --save-dev` of `runner` (the recipe's pinned test runner, if any), then the
 * files of `recipe` copied in as they are. The project's package.json is npm's, never one of a recipe's. Returns the
 * project's directory, `my-tests` in a temporary one. `@rock-legends/*` is looked up in `registry` (give one that has
 * nothing, to see that nothing is asked).
 */
export async function documentedProject(
  packed: PackResult,
  registry: string,
  recipe: string,
  runner: readonly string[] = [],
): Promise<string> {
  // npm init names the project after its directory, which must then be a valid package name.
  const dir = join(tempDir(`rock-legends-${recipe}-`), 'my-tests')
  mkdirSync(dir)
  writeFileSync(join(dir, '.npmrc'), [`${SCOPE}:registry=${registry}`, ...QUIET_NPMRC, ''].join('\n'))
  const steps = [
    'npm init -y',
    ...documentedInstall(packed.version, NPM_DIST),
    ...(runner.length ? [`npm install --save-dev ${runner.join(' ')}`] : []),
  ]
  for (const step of steps) {
    const result = await run(['sh', '-c', `${step} --loglevel=error`], dir)
    if (result.code !== 0) throw new Error(`${step} failed in ${dir}:\n${result.output}`)
  }
  copyRecipe(recipe, dir)
  return dir
}

/** The files of `recipe` copied into the project `dir` as they are (never a package.json of a recipe's). */
function copyRecipe(recipe: string, dir: string): void {
  const own = join(RECIPES, recipe, 'package.json')
  cpSync(join(RECIPES, recipe), dir, { recursive: true, filter: (file) => file !== own })
}

/**
 * A project like `base` (one {@link documentedProject} made with the same runner), for `recipe`: its package.json,
 * lockfile and `.npmrc` copied into a new `my-tests` directory at the same depth (the lockfile's relative paths to the
 * tarballs still hold), then `npm ci`, then the files of `recipe`. What the documented steps would have made, without
 * asking npm to resolve it all again.
 */
export async function projectLike(base: string, recipe: string): Promise<string> {
  const dir = join(tempDir(`rock-legends-${recipe}-`), 'my-tests')
  mkdirSync(dir)
  for (const file of ['package.json', 'package-lock.json', '.npmrc']) cpSync(join(base, file), join(dir, file))
  const ci = await run(['npm', 'ci', '--loglevel=error'], dir)
  if (ci.code !== 0) throw new Error(`npm ci failed in ${dir}:\n${ci.output}`)
  copyRecipe(recipe, dir)
  return dir
}
