import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { type PackResult, platformPackageOf } from '../../scripts/pack.ts'
import { TARGETS } from '../../scripts/release.ts'
import { removeDir } from '../support/binary.ts'
import { documentedProject, hasNode, packOnce, RECIPE_RUNS, RECIPES, run, startScopeRegistry } from './node-project.ts'

// The recipes of docs/testing-with-rock-legends.md, run for real, as a user meets them before the packages are
// published: `npm init -y` (a CommonJS project), the documented install of the packed tarballs, the recipe's pinned
// test runner (npm's cache, else the registry), its files, and the documented command, with no Bun on the PATH. Then
// what CI does with the lockfile that made: `rm -rf node_modules && npm ci`, and the tests again.
describe.skipIf(!hasNode)('the recipes, in a project made as the docs say, from the packed tarballs', () => {
  let packed: PackResult
  /** Has no package: `@rock-legends/*` must come from the tarballs, and is never asked of a registry. */
  let registry: ReturnType<typeof startScopeRegistry>
  const projects: string[] = []

  beforeAll(async () => {
    packed = await packOnce()
    registry = startScopeRegistry({ ...packed, tarballs: [] })
  }, 300_000)
  afterAll(() => {
    registry?.stop()
    for (const dir of projects) removeDir(dirname(dir))
  })

  test.each(RECIPE_RUNS.map(({ recipe }) => recipe))('%s brings its test files only, no package.json', (recipe) => {
    expect(existsSync(join(RECIPES, recipe, 'package.json'))).toBe(false)
    expect(readdirSync(join(RECIPES, recipe)).length).toBeGreaterThan(0)
  })

  test.each(RECIPE_RUNS)(
    '$recipe: `$command` passes, and again after rm -rf node_modules && npm ci',
    async ({ recipe, runner, command, passed }) => {
      for (const pinned of runner) expect(pinned).toMatch(/@\d+\.\d+\.\d+$/)
      const dir = await documentedProject(packed, registry.url, recipe, runner)
      projects.push(dir)
      const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'))
      expect(manifest.type ?? 'commonjs').toBe('commonjs') // npm init's, as the recipe found it
      // Every platform packed is locked, the others as optional packages npm did not install here.
      const lock = JSON.parse(readFileSync(join(dir, 'package-lock.json'), 'utf8')).packages
      for (const name of packed.platforms) {
        const target = TARGETS.find((each) => each.name === name) as (typeof TARGETS)[0]
        expect(lock[`node_modules/${platformPackageOf(target)}`]).toMatchObject({ optional: true })
      }

      const first = await run(['sh', '-c', command], dir, { NO_COLOR: '1' })
      if (first.code !== 0) console.error(first.output)
      expect(first.output).toMatch(passed)
      expect(first.code).toBe(0)

      removeDir(join(dir, 'node_modules'))
      const ci = await run(['npm', 'ci', '--loglevel=error'], dir)
      if (ci.code !== 0) console.error(ci.output)
      expect(ci.code).toBe(0)
      const again = await run(['sh', '-c', command], dir, { NO_COLOR: '1' })
      if (again.code !== 0) console.error(again.output)
      expect(again.output).toMatch(passed)
      expect(again.code).toBe(0)
      expect(registry.requests).toEqual([])
    },
    300_000,
  )
})
