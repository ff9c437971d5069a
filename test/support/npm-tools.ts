import { existsSync, mkdirSync, renameSync } from 'node:fs'
import { join } from 'node:path'
import { removeDir } from './binary.ts'

/**
 * Tools that other teams run on our API (linters, client generators) but that this project does not depend on: each
 * test installs the pinned versions it names with npm, from the registry, into a cache directory kept between runs
 * (`node_modules/.cache/rock-legends-tools/`, gone with `node_modules`), never into package.json. Without npm or
 * the registry the test skips and says why, except under CI=true, where it fails.
 */
const CACHE = join(import.meta.dir, '..', '..', 'node_modules', '.cache', 'rock-legends-tools')

/** An installed set of packages: where it is, and the path of one of its packages' files. */
export interface InstalledTool {
  dir: string
  /** The path of `file` inside package `name`'s directory, e.g. `file('@stoplight/spectral-cli', 'dist/index.js')`. */
  file(name: string, file: string): string
}

/**
 * `packages` (each `name@exact-version`) installed together, from the cache when an earlier run installed them, or
 * else with `npm install` now (seconds: a few hundred packages), without their install scripts (telemetry, mostly).
 * Concurrent runs each install into a directory of their own and the first to finish moves it into place whole, so
 * the cache never holds half an install. `undefined`, with the reason printed, when they cannot be installed here;
 * under CI=true that throws instead.
 */
export async function installedTool(what: string, packages: string[]): Promise<InstalledTool | undefined> {
  const dir = join(CACHE, packages.join('+').replaceAll('/', '_'))
  const tool = {
    dir,
    file: (name: string, file: string) => join(dir, 'node_modules', name, file),
  }
  if (existsSync(dir)) return tool
  const why = Bun.which('npm') ? await install(dir, packages) : 'npm is not installed'
  if (why === undefined) return tool
  const message = `${what} needs ${packages.join(', ')} from the npm registry, but ${why}`
  if (process.env.CI === 'true') throw new Error(`${message}. In CI this must run.`)
  console.warn(`\n!!! SKIPPING ${what}: ${message}. In CI this fails.\n`)
  return undefined
}

/** Installs `packages` and moves them to `dir`; the reason when it could not. */
async function install(dir: string, packages: string[]): Promise<string | undefined> {
  mkdirSync(CACHE, { recursive: true })
  const staging = `${dir}.${process.pid}.${Date.now()}`
  mkdirSync(staging)
  try {
    await Bun.write(join(staging, 'package.json'), JSON.stringify({ private: true }))
    const npm = Bun.spawn(
      ['npm', 'install', '--no-save', '--no-audit', '--no-fund', '--ignore-scripts', '--loglevel=error', ...packages],
      {
        cwd: staging,
        env: { ...process.env, SCARF_ANALYTICS: 'false', DO_NOT_TRACK: '1' },
        stdout: 'pipe',
        stderr: 'pipe',
      },
    )
    const [output, code] = await Promise.all([new Response(npm.stderr).text(), npm.exited])
    const first = output
      .split('\n')
      .filter((line) => line.trim() !== '')
      .slice(0, 2)
    if (code !== 0) return `npm install failed (${code}): ${first.join(' ')}`
    try {
      renameSync(staging, dir)
    } catch (error) {
      // Another run got there first: its install is as good as this one.
      if (!existsSync(dir)) throw error
    }
    return undefined
  } finally {
    removeDir(staging)
  }
}
