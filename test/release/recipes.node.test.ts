import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { PackResult } from '../../scripts/pack.ts'
import { removeDir } from '../support/binary.ts'
import { hasNode, installProject, packOnce, RECIPES, run, startScopeRegistry } from './node-project.ts'

// The recipes of docs/testing-with-rock-legends.md, run for real: each is a fresh Node project that installs the
// packed tarballs and its pinned test runner (npm's cache, else the registry), then runs `npm test` with no Bun on
// its PATH.
const RECIPES_RUN = [
  // [recipe, what its runner prints when both tests passed]
  ['node-test', /^# pass 2$/m],
  ['vitest', /Tests\s+2 passed/],
  ['jest', /Tests:\s+2 passed, 2 total/],
  ['playwright', /2 passed/],
] as const

describe.skipIf(!hasNode)('the recipes, installed from the packed tarballs', () => {
  let packed: PackResult
  let registry: ReturnType<typeof startScopeRegistry>
  const projects: string[] = []

  beforeAll(async () => {
    packed = await packOnce()
    registry = startScopeRegistry(packed)
  }, 300_000)
  afterAll(() => {
    registry?.stop()
    for (const dir of projects) removeDir(dir)
  })

  test.each(RECIPES_RUN)(
    '%s',
    async (recipe, passed) => {
      const pinned = JSON.parse(readFileSync(join(RECIPES, recipe, 'package.json'), 'utf8')).devDependencies ?? {}
      for (const version of Object.values(pinned)) expect(version).toMatch(/^\d+\.\d+\.\d+$/)
      const dir = await installProject(packed, registry.url, recipe)
      projects.push(dir)
      const result = await run(['npm', 'test'], dir, { NO_COLOR: '1' })
      if (result.code !== 0) console.error(result.output)
      expect(result.code).toBe(0)
      expect(result.output).toMatch(passed)
    },
    240_000,
  )
})
