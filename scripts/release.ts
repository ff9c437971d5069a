#!/usr/bin/env bun
/**
 * `bun run build:all`: one executable per release platform in `dist/`, each carrying its own platform's argon2
 * native module. Bun cross-compiles by downloading the target's runtime from the npm registry (`@oven/bun-*`); the
 * argon2 modules come from the npm packages `@node-rs/argon2-<platform>`, fetched with `npm pack` at the version and
 * integrity that bun.lock records, and swapped in at bundle time (they are not installed, so the lockfile and
 * `node_modules` stay as they are).
 */
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { basename, join, resolve } from 'node:path'
import type { BunPlugin } from 'bun'
import { inspectExecutable } from './inspect-executable.ts'
import { adhocSign } from './macho-sign.ts'
import { precompress } from './precompress.ts'

const ROOT = resolve(import.meta.dir, '..')
const DIST = join(ROOT, 'dist')
const STAGE = join(DIST, '.release')

/** A platform the release is built for. */
export interface ReleaseTarget {
  /** How the executable is named: `dist/rock-legends-<name>[.exe]`. */
  name: string
  bun: Bun.Build.CompileTarget
  /** The suffix of the `@node-rs/argon2-*` package holding this platform's native module. */
  argon2: string
  format: 'elf' | 'macho' | 'pe'
  arch: 'x64' | 'arm64'
}

/** Every release platform. Linux builds are for glibc (Debian, Ubuntu, RHEL…), like Bun's own default builds. */
export const TARGETS: readonly ReleaseTarget[] = [
  { name: 'linux-x64', bun: 'bun-linux-x64', argon2: 'linux-x64-gnu', format: 'elf', arch: 'x64' },
  { name: 'linux-arm64', bun: 'bun-linux-arm64', argon2: 'linux-arm64-gnu', format: 'elf', arch: 'arm64' },
  { name: 'darwin-arm64', bun: 'bun-darwin-arm64', argon2: 'darwin-arm64', format: 'macho', arch: 'arm64' },
  { name: 'darwin-x64', bun: 'bun-darwin-x64', argon2: 'darwin-x64', format: 'macho', arch: 'x64' },
  { name: 'windows-x64', bun: 'bun-windows-x64', argon2: 'win32-x64-msvc', format: 'pe', arch: 'x64' },
]

/** Where the executable of `target` is written. */
export const outfileOf = (target: ReleaseTarget) =>
  join(DIST, `rock-legends-${target.name}${target.format === 'pe' ? '.exe' : ''}`)

/** The version and integrity bun.lock records for a package (optional platform packages included). */
export function lockedPackage(name: string, lock = readFileSync(join(ROOT, 'bun.lock'), 'utf8')) {
  const escaped = name.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')
  const match = new RegExp(`"${escaped}": \\["${escaped}@([^"]+)", "[^"]*", \\{[^}]*\\}, "(sha512-[^"]+)"\\]`).exec(
    lock,
  )
  if (!match) throw new Error(`${name} is not in bun.lock`)
  return { version: match[1] as string, integrity: match[2] as string }
}

/** The package directory holding the argon2 module of `target`, fetched and checked against bun.lock if needed. */
export async function argon2Package(target: ReleaseTarget): Promise<string> {
  const name = `@node-rs/argon2-${target.argon2}`
  const { version, integrity } = lockedPackage(name)
  const installed = join(ROOT, 'node_modules', name)
  const versionOf = (dir: string) => JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).version
  // The host's own module is installed (and was checked) by `bun install`.
  if (existsSync(join(installed, 'package.json')) && versionOf(installed) === version) return installed
  const dir = join(STAGE, `argon2-${target.argon2}-${version}`)
  if (existsSync(join(dir, 'package.json')) && versionOf(dir) === version) return dir
  mkdirSync(STAGE, { recursive: true })
  const pack = Bun.spawnSync(['npm', 'pack', `${name}@${version}`, '--json', '--pack-destination', STAGE], {
    cwd: STAGE,
    stderr: 'pipe',
  })
  if (pack.exitCode !== 0) throw new Error(`npm pack ${name}@${version} failed: ${pack.stderr.toString().trim()}`)
  const tarball = join(STAGE, (JSON.parse(pack.stdout.toString()) as { filename: string }[])[0]?.filename ?? '')
  const actual = `sha512-${createHash('sha512').update(readFileSync(tarball)).digest('base64')}`
  if (actual !== integrity) throw new Error(`${basename(tarball)} does not match bun.lock: ${actual} ≠ ${integrity}`)
  rmSync(dir, { recursive: true, force: true })
  mkdirSync(dir, { recursive: true })
  const untar = Bun.spawnSync(['tar', '-xzf', tarball, '-C', dir, '--strip-components=1'], { stderr: 'pipe' })
  rmSync(tarball, { force: true })
  if (untar.exitCode !== 0) throw new Error(`cannot unpack ${basename(tarball)}: ${untar.stderr.toString().trim()}`)
  return dir
}

/** The native module file of an argon2 platform package. */
export const nativeModuleOf = (dir: string) =>
  join(dir, JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).main as string)

/**
 * Resolves `@node-rs/argon2-<platform>` for the target's platform to the fetched package. The loader of
 * `@node-rs/argon2` asks for every platform's package; Bun keeps only the target's branch, and this makes it
 * resolvable, so the module is embedded in the executable.
 */
function argon2For(target: ReleaseTarget, dir: string): BunPlugin {
  const filter = new RegExp(`^@node-rs/argon2-${target.argon2}(/package\\.json)?$`)
  return {
    name: `argon2-${target.argon2}`,
    setup(build) {
      build.onResolve({ filter }, ({ path }) => ({
        path: path.endsWith('/package.json') ? join(dir, 'package.json') : nativeModuleOf(dir),
      }))
    },
  }
}

/** What building one target gave. */
export interface TargetReport {
  target: string
  file: string
  ok: boolean
  /** Size in bytes, format and CPU as read back, and whether the argon2 module's bytes are inside; or the failure. */
  detail: string
}

/** Builds, then checks, the executable for one target. */
export async function buildTarget(target: ReleaseTarget, precompressed = precompress()): Promise<TargetReport> {
  const file = outfileOf(target)
  try {
    const dir = await argon2Package(target)
    const result = await Bun.build({
      // As `bun run build`: the served files' compressed forms are embedded beside them (scripts/precompress.ts).
      entrypoints: [join(ROOT, 'src/main.ts'), ...precompressed],
      naming: { asset: '[name].[ext]' },
      compile: { target: target.bun, outfile: file, autoloadDotenv: false, autoloadBunfig: false },
      minify: { syntax: true, whitespace: true },
      // As `bun run build`: bytecode compiled ahead of time halves the time to the first served request, and split
      // chunks keep what start-up does not run (the file store, seeding, the OpenAPI generator) out of its way.
      format: 'esm',
      splitting: true,
      bytecode: true,
      plugins: [argon2For(target, dir)],
    })
    if (!result.success) throw new Error(result.logs.map(String).join('\n'))
    let bytes: Uint8Array = readFileSync(file)
    let found = inspectExecutable(bytes)
    let resigned = false
    if (found.signature === 'invalid') {
      // Bun left the runtime's own signature, which the appended app no longer matches: macOS would kill it.
      bytes = adhocSign(bytes, 'rock-legends')
      writeFileSync(file, bytes)
      found = inspectExecutable(bytes)
      resigned = true
    }
    if (found.format !== target.format || found.arch !== target.arch)
      throw new Error(`expected ${target.format} ${target.arch}, got ${found.format} ${found.arch}`)
    if (found.signature !== undefined && found.signature !== 'valid')
      throw new Error(`the Mach-O code signature is ${found.signature}; macOS would refuse to run it`)
    const module = nativeModuleOf(dir)
    const embedded = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).indexOf(readFileSync(module)) >= 0
    if (!embedded) throw new Error(`${basename(module)} is not embedded`)
    const size = `${(bytes.byteLength / 1024 / 1024).toFixed(1)} MiB`
    const signed = found.signature ? (resigned ? ', re-signed ad hoc' : ', signed ad hoc') : ''
    return {
      target: target.name,
      file,
      ok: true,
      detail: `${size}, ${found.format} ${found.arch}${signed}, embeds ${basename(module)}`,
    }
  } catch (error) {
    return { target: target.name, file, ok: false, detail: (error as Error).message }
  }
}

/** Builds `targets` one after the other (each download and link is heavy) and writes `dist/SHA256SUMS`. */
export async function buildRelease(targets: readonly ReleaseTarget[] = TARGETS): Promise<TargetReport[]> {
  const reports: TargetReport[] = []
  const precompressed = precompress()
  for (const target of targets) reports.push(await buildTarget(target, precompressed))
  const sums = reports
    .filter((report) => report.ok)
    .map(
      (report) => `${createHash('sha256').update(readFileSync(report.file)).digest('hex')}  ${basename(report.file)}`,
    )
  writeFileSync(join(DIST, 'SHA256SUMS'), `${sums.join('\n')}\n`)
  return reports
}

if (import.meta.main) {
  const wanted = process.argv.slice(2)
  const unknown = wanted.filter((name) => !TARGETS.some((target) => target.name === name))
  if (unknown.length > 0) {
    process.stderr.write(`unknown target ${unknown.join(', ')}; targets: ${TARGETS.map((t) => t.name).join(', ')}\n`)
    process.exit(2)
  }
  const reports = await buildRelease(wanted.length ? TARGETS.filter((t) => wanted.includes(t.name)) : TARGETS)
  for (const report of reports)
    process.stdout.write(`${report.ok ? 'built ' : 'FAILED'} ${report.target.padEnd(13)} ${report.detail}\n`)
  process.exit(reports.every((report) => report.ok) ? 0 : 1)
}
