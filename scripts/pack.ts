#!/usr/bin/env bun
/**
 * `bun run pack`: the npm packages as tarballs in `dist/npm/`, in the pattern esbuild and Biome use. One main package,
 * `rock-legends` (the `npx rock-legends` launcher and a small JavaScript library with its types, from `npm/rock-legends/`),
 * lists one package per platform packed beside it as `optionalDependencies`; each platform package carries one
 * executable and declares its `os` and `cpu`, so npm installs only the one that matches. Nothing runs at install time.
 *
 * Every version is the root package.json's. This machine's executable is built when it is older than its sources; the
 * other platforms' are packed when `bun run build:all` left them up to date, or built first with `--all`.
 * `--publish-dry-run` then runs `npm publish --dry-run` on every tarball.
 */
import { chmodSync, copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { inspectExecutable } from './inspect-executable.ts'
import { buildNodeService } from './node-bundle.ts'
import { buildRelease, outfileOf, type ReleaseTarget, TARGETS } from './release.ts'

const ROOT = resolve(import.meta.dir, '..')
const TEMPLATE = join(ROOT, 'npm/rock-legends')
/** Where the tarballs are written. */
export const NPM_DIST = join(ROOT, 'dist/npm')
const STAGE = join(NPM_DIST, '.stage')

/** The npm scope of the platform packages. */
export const SCOPE = '@rock-legends'

/** How Node names a target's platform: `process.platform-process.arch`. */
const nodePlatformOf = (target: ReleaseTarget) =>
  `${{ elf: 'linux', macho: 'darwin', pe: 'win32' }[target.format]}-${target.arch}`

/** The name of the npm package carrying the executable of `target`. */
export const platformPackageOf = (target: ReleaseTarget) => `${SCOPE}/${target.name}`

/** The release target of the machine running this, if there is one. */
export const hostTarget = () =>
  TARGETS.find((target) => nodePlatformOf(target) === `${process.platform}-${process.arch}`)

/** The one version of every package: the root package.json's. */
export const packageVersion = (): string => JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version

function newest(path: string): number {
  const stat = statSync(path)
  if (!stat.isDirectory()) return stat.mtimeMs
  return Math.max(0, ...readdirSync(path).map((name) => newest(join(path, name))))
}

/** The time of the newest source of the executables. */
const sourcesTime = () =>
  Math.max(...['src', 'data/legends.json', 'package.json', 'bun.lock'].map((p) => newest(join(ROOT, p))))

const isFresh = (file: string) => (statSync(file, { throwIfNoEntry: false })?.mtimeMs ?? 0) > sourcesTime()

function run(command: string[], cwd: string): string {
  const result = Bun.spawnSync(command, { cwd, stdout: 'pipe', stderr: 'pipe' })
  if (result.exitCode !== 0)
    throw new Error(`${command.join(' ')} failed (${result.exitCode}):\n${result.stdout}\n${result.stderr}`.trim())
  return result.stdout.toString()
}

/**
 * The executable to pack for `target`: for this machine, `dist/rock-legends` as `bun run build` writes it (built
 * now if older than its sources) unless `build:all` left a fresh one; for others, a fresh `build:all` output only.
 */
function executableFor(target: ReleaseTarget): string | undefined {
  const released = outfileOf(target)
  if (isFresh(released)) return released
  if (target !== hostTarget()) return undefined
  const local = join(ROOT, 'dist/rock-legends')
  if (!isFresh(local)) run(['bun', 'run', 'build'], ROOT)
  return local
}

const writeJson = (file: string, value: unknown) => Bun.write(file, `${JSON.stringify(value, null, 2)}\n`)

/** Stages the package of `target`'s executable. */
async function stagePlatform(target: ReleaseTarget, executable: string, version: string): Promise<string> {
  const found = inspectExecutable(readFileSync(executable))
  if (found.format !== target.format || found.arch !== target.arch)
    throw new Error(`${executable} is ${found.format} ${found.arch}, not ${target.format} ${target.arch}`)
  const dir = join(STAGE, target.name)
  const binary = `bin/rock-legends${target.format === 'pe' ? '.exe' : ''}`
  mkdirSync(join(dir, 'bin'), { recursive: true })
  copyFileSync(executable, join(dir, binary))
  chmodSync(join(dir, binary), 0o755)
  const [os, cpu] = nodePlatformOf(target).split('-') as [string, string]
  await writeJson(join(dir, 'package.json'), {
    name: platformPackageOf(target),
    version,
    description: `The rock-legends executable for ${target.name}${os === 'linux' ? ' (glibc)' : ''}; installed by the rock-legends package.`,
    license: 'MIT',
    os: [os],
    cpu: [cpu],
    ...(os === 'linux' ? { libc: ['glibc'] } : {}),
    files: [binary],
    preferUnplugged: true,
    publishConfig: { access: 'public' },
  })
  await Bun.write(
    join(dir, 'README.md'),
    `# ${platformPackageOf(target)}\n\nThe \`rock-legends\` executable for ${target.name}. Install [\`rock-legends\`](https://www.npmjs.com/package/rock-legends) instead: it depends on this package on ${target.name} only.\n`,
  )
  return dir
}

/**
 * Stages the main package: the template, a CommonJS build beside the ES module, and the platform packages it lists:
 * those packed beside it (every one after `build:all`, which is what may be published), never one that is not. npm
 * cannot lock an optional dependency that no registry has (npm/cli#9846: `npm install` leaves it out of the lockfile,
 * then `npm ci` refuses that lockfile), so a set installed from the tarballs themselves, before publication, must name
 * no package missing from the set.
 */
async function stageMain(version: string, platforms: readonly ReleaseTarget[]): Promise<string> {
  const dir = join(STAGE, 'rock-legends')
  for (const sub of ['bin', 'lib']) {
    mkdirSync(join(dir, sub), { recursive: true })
    for (const name of readdirSync(join(TEMPLATE, sub))) copyFileSync(join(TEMPLATE, sub, name), join(dir, sub, name))
  }
  chmodSync(join(dir, 'bin/rock-legends.js'), 0o755)
  copyFileSync(join(TEMPLATE, 'README.md'), join(dir, 'README.md'))
  // The in-process service, bundled for Node as an ES module and as CommonJS.
  await buildNodeService(join(dir, 'lib'))
  // For `require('rock-legends')` (Jest, CommonJS projects): the same code in one CommonJS file, for Node.
  // `import.meta.url` (which finds the platform package) would be inlined as this machine's path: take the file's own.
  const cjs = await Bun.build({
    entrypoints: [join(TEMPLATE, 'lib/index.js')],
    target: 'node',
    format: 'cjs',
    // The service stays in its own file, loaded with `require` on first use.
    plugins: [
      {
        name: 'service-by-require',
        setup: (build) => {
          build.onResolve({ filter: /load-service\.js$/ }, () => ({ path: './load-service.cjs', external: true }))
        },
      },
    ],
    define: { 'import.meta.url': '__rockLegendsUrl' },
    banner: "const __rockLegendsUrl = require('node:url').pathToFileURL(__filename).href;",
  })
  if (!cjs.success) throw new Error(cjs.logs.map(String).join('\n'))
  await Bun.write(join(dir, 'lib/index.cjs'), (await cjs.outputs[0]?.text()) ?? '')
  copyFileSync(join(TEMPLATE, 'lib/index.d.ts'), join(dir, 'lib/index.d.cts'))
  const manifest = JSON.parse(readFileSync(join(TEMPLATE, 'package.json'), 'utf8'))
  manifest.version = version
  // npm picks the one package whose os and cpu match, and fetches no other.
  manifest.optionalDependencies = Object.fromEntries(platforms.map((target) => [platformPackageOf(target), version]))
  await writeJson(join(dir, 'package.json'), manifest)
  return dir
}

/** What {@link pack} wrote. */
export interface PackResult {
  version: string
  /** The main package's tarball, then one per platform packed, as absolute paths. */
  tarballs: string[]
  /** Platforms packed, and those left out with the reason. */
  platforms: string[]
  skipped: string[]
}

/** Writes the tarballs to `dist/npm/`, replacing what was there. */
export async function pack({ all = false } = {}): Promise<PackResult> {
  const version = packageVersion()
  if (all) {
    const failed = (await buildRelease()).filter((report) => !report.ok)
    if (failed.length) throw new Error(failed.map((report) => `${report.target}: ${report.detail}`).join('\n'))
  }
  rmSync(NPM_DIST, { recursive: true, force: true })
  mkdirSync(STAGE, { recursive: true })
  const staged: string[] = []
  const packedTargets: ReleaseTarget[] = []
  const skipped: string[] = []
  for (const target of TARGETS) {
    const executable = executableFor(target)
    if (!executable) {
      skipped.push(
        `${target.name}: no ${outfileOf(target).split('/').at(-1)} newer than the sources (bun run build:all)`,
      )
      continue
    }
    staged.push(await stagePlatform(target, executable, version))
    packedTargets.push(target)
  }
  const dirs = [await stageMain(version, packedTargets), ...staged]
  const platforms = packedTargets.map((target) => target.name)
  const tarballs = dirs.map((dir) => {
    const [packed] = JSON.parse(run(['npm', 'pack', '--json', '--pack-destination', NPM_DIST], dir)) as {
      filename: string
    }[]
    return join(NPM_DIST, packed?.filename ?? '')
  })
  rmSync(STAGE, { recursive: true, force: true })
  return { version, tarballs, platforms, skipped }
}

/**
 * `npm publish --dry-run` on a tarball; throws with npm's output if it fails, and, before npm is asked, if it is the
 * main package and does not name every platform's package (a pack of this machine's platform alone is for installing
 * from the tarballs, never for the registry).
 */
export function publishDryRun(tarball: string): string {
  const read = Bun.spawnSync(['tar', '-xzOf', tarball, 'package/package.json'], { stdout: 'pipe', stderr: 'pipe' })
  if (read.exitCode !== 0) throw new Error(`cannot read ${tarball}: ${read.stderr}`)
  const manifest = JSON.parse(read.stdout.toString()) as { name: string; optionalDependencies?: object }
  const missing = TARGETS.map(platformPackageOf).filter((name) => !(name in (manifest.optionalDependencies ?? {})))
  if (manifest.name === 'rock-legends' && missing.length)
    throw new Error(`${tarball} does not name ${missing.join(', ')}: pack every platform (bun run pack --all)`)
  return run(['npm', 'publish', '--dry-run', '--access', 'public', '--tag', 'latest', tarball], NPM_DIST)
}

if (import.meta.main) {
  const args = new Set(process.argv.slice(2))
  const known = new Set(['--all', '--publish-dry-run'])
  const unknown = [...args].filter((arg) => !known.has(arg))
  if (unknown.length) {
    process.stderr.write(`unknown option ${unknown.join(', ')}; options: ${[...known].join(', ')}\n`)
    process.exit(2)
  }
  const result = await pack({ all: args.has('--all') })
  for (const tarball of result.tarballs) {
    const size = `${(statSync(tarball).size / 1024 / 1024).toFixed(1)} MiB`
    process.stdout.write(`packed ${tarball.slice(ROOT.length + 1)} (${size})\n`)
    if (args.has('--publish-dry-run')) {
      publishDryRun(tarball)
      process.stdout.write('  npm publish --dry-run: ok\n')
    }
  }
  for (const line of result.skipped) process.stdout.write(`not packed: ${line}\n`)
  if (existsSync(STAGE)) rmSync(STAGE, { recursive: true, force: true })
}
