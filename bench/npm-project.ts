/**
 * A project made as docs/testing-with-rock-legends.md says, for the benches that measure the npm package under Node:
 * `npm init -y`, then `bun run pack`'s tarballs installed (the platform packages as optional dependencies, the main
 * package as a dev dependency, with any other packages a bench needs beside it).
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { NPM_DIST, type PackResult, pack } from '../scripts/pack.ts'

/** Runs `command` in a shell in `cwd`; its stdout, or an error with both outputs. */
export function sh(command: string, cwd: string): string {
  const result = Bun.spawnSync(['sh', '-c', command], { cwd, stdout: 'pipe', stderr: 'pipe' })
  if (result.exitCode !== 0) throw new Error(`${command} failed:\n${result.stdout}\n${result.stderr}`)
  return result.stdout.toString()
}

/**
 * Packs the packages and installs them into a new project at `dir` (what was there is removed), with `more` (npm
 * package specs) beside the main package; what was packed, and the versions of Node and npm there.
 */
export async function installPackedProject(
  dir: string,
  more: string[] = [],
): Promise<{ packed: PackResult; node: string; npm: string }> {
  const packed = await pack()
  rmSync(dir, { recursive: true, force: true })
  mkdirSync(dir, { recursive: true })
  writeFileSync(`${dir}/.npmrc`, 'audit=false\nfund=false\nupdate-notifier=false\n')
  sh('npm init -y', dir)
  sh(`npm install --save-optional ${NPM_DIST}/rock-legends-*-${packed.version}.tgz`, dir)
  sh(`npm install --save-dev ${[`${NPM_DIST}/rock-legends-${packed.version}.tgz`, ...more].join(' ')}`, dir)
  return { packed, node: sh('node --version', dir).trim(), npm: sh('npm --version', dir).trim() }
}
