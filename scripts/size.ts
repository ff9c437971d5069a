#!/usr/bin/env bun
/**
 * `bun run bench:size`: the size of each release executable beside the floor, a bare `bun build --compile` of a
 * hello world for the same platform with the same options (the Bun runtime alone). The executables must stay within
 * {@link MAX_OVER_FLOOR} of it; the release test holds them to that.
 */
import { mkdirSync, rmSync, statSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { outfileOf, type ReleaseTarget, TARGETS } from './release.ts'

const ROOT = resolve(import.meta.dir, '..')
const STAGE = join(ROOT, 'dist/.release/floor')

/** How far above the floor an executable may grow: the app, its assets, its argon2 module and the ACME client. */
export const MAX_OVER_FLOOR = 17 * 1024 * 1024

/** Builds the hello world for `target` (as `build:all` builds ours) and returns both sizes in bytes. */
export async function measureSize(target: ReleaseTarget): Promise<{ floor: number; ours: number }> {
  mkdirSync(STAGE, { recursive: true })
  const entry = join(STAGE, 'hello.ts')
  await Bun.write(entry, "console.log('hello')\n")
  const outfile = join(STAGE, `hello-${target.name}${target.format === 'pe' ? '.exe' : ''}`)
  const result = await Bun.build({
    entrypoints: [entry],
    compile: { target: target.bun, outfile, autoloadDotenv: false, autoloadBunfig: false },
    minify: { syntax: true, whitespace: true },
    format: 'esm',
    bytecode: true,
  })
  if (!result.success) throw new Error(result.logs.map(String).join('\n'))
  const floor = statSync(outfile).size
  rmSync(outfile, { force: true })
  return { floor, ours: statSync(outfileOf(target)).size }
}

const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`

if (import.meta.main) {
  const wanted = process.argv.slice(2)
  const targets = TARGETS.filter((target) =>
    wanted.length ? wanted.includes(target.name) : statSync(outfileOf(target), { throwIfNoEntry: false }),
  )
  process.stdout.write(
    `Bun ${Bun.version}\n\n| Executable | Bare hello world (floor) | rock-legends | Over the floor |\n|---|--:|--:|--:|\n`,
  )
  let within = true
  for (const target of targets) {
    const { floor, ours } = await measureSize(target)
    within &&= ours - floor < MAX_OVER_FLOOR
    const name = outfileOf(target).split('/').at(-1)
    process.stdout.write(`| \`${name}\` | ${mib(floor)} | ${mib(ours)} | ${mib(ours - floor)} |\n`)
  }
  process.exit(within ? 0 : 1)
}
