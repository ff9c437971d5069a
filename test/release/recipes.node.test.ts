import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { type BrowserServer, chromium } from 'playwright-core'
import { type PackResult, platformPackageOf } from '../../scripts/pack.ts'
import { TARGETS } from '../../scripts/release.ts'
import { removeDir } from '../support/binary.ts'
import { CHROMIUM, CHROMIUM_ARGS, chromiumMissing, requireChromium } from '../support/chromium.ts'
import {
  documentedProject,
  hasNode,
  packOnce,
  projectLike,
  RECIPE_RUNS,
  RECIPES,
  run,
  startScopeRegistry,
} from './node-project.ts'

// The recipes of docs/testing-with-rock-legends.md, run for real, as a user meets them before the packages are
// published: `npm init -y` (a CommonJS project), the documented install of the packed tarballs, the recipe's pinned
// test runner (npm's cache, else the registry), its files, and the documented command, with no Bun on the PATH. Then
// what CI does with the lockfile that made: `rm -rf node_modules && npm ci`, and the tests again. A recipe whose
// runner an earlier one installed starts from that project's lockfile, with `npm ci`, and runs once.

/** The recipe whose `page` needs a browser, and whose run must show several workers. */
const WORKERS_RECIPE = 'playwright-namespaces'
/** The recipes whose tests drive a `page`: the workers' one, and the one whose page's API calls `page.route` answers. */
const BROWSER_RECIPES = new Set<string>([WORKERS_RECIPE, 'playwright-route'])
/** Its `webServer` (playwright.config.js): closed again once the run is over. */
const WEB_SERVER = 'http://127.0.0.1:4010'
const ROOT = resolve(import.meta.dir, '../..')
const browserMissing = chromiumMissing(`the ${[...BROWSER_RECIPES].join(' and ')} recipes`)

/** The tests of a Playwright JSON report, each with the worker slot and the time it ran in. */
type Report = { suites?: Suite[] }
type Suite = {
  suites?: Suite[]
  specs?: {
    title: string
    tests: { results: { parallelIndex: number; status: string; startTime: string; duration: number }[] }[]
  }[]
}
function resultsOf(report: Report) {
  const results: { title: string; parallelIndex: number; status: string; start: number; end: number }[] = []
  const walk = (suite: Suite) => {
    for (const spec of suite.specs ?? [])
      for (const { results: runs } of spec.tests)
        for (const each of runs) {
          const start = Date.parse(each.startTime)
          results.push({
            title: spec.title,
            parallelIndex: each.parallelIndex,
            status: each.status,
            start,
            end: start + each.duration,
          })
        }
    for (const child of suite.suites ?? []) walk(child)
  }
  for (const suite of report.suites ?? []) walk(suite)
  return results
}

describe.skipIf(!hasNode)('the recipes, in a project made as the docs say, from the packed tarballs', () => {
  let packed: PackResult
  /** Has no package: `@rock-legends/*` must come from the tarballs, and is never asked of a registry. */
  let registry: ReturnType<typeof startScopeRegistry>
  const projects: string[] = []
  /** The project each runner was installed in, as the docs say (and run again after npm ci). */
  const installed = new Map<string, string>()
  /**
   * Debian's Chromium, served to the Playwright workers through `PW_TEST_CONNECT_WS_ENDPOINT` (Playwright's own way
   * to a browser elsewhere), since `npx playwright install` would download one: the recipe's files stay as shown.
   */
  let browser: BrowserServer | undefined

  beforeAll(async () => {
    packed = await packOnce()
    registry = startScopeRegistry({ ...packed, tarballs: [] })
  }, 300_000)
  afterAll(async () => {
    registry?.stop()
    await browser?.close()
    for (const dir of projects) removeDir(dirname(dir))
  })

  /**
   * Runs `command` in the project `dir`; for {@link BROWSER_RECIPES}, with a browser, and for {@link WORKERS_RECIPE}
   * a JSON report beside.
   */
  async function runRecipe(recipe: string, command: string, dir: string) {
    if (!BROWSER_RECIPES.has(recipe)) return run(['sh', '-c', command], dir, { NO_COLOR: '1' })
    browser ??= await chromium.launchServer({ executablePath: CHROMIUM, args: CHROMIUM_ARGS })
    if (recipe !== WORKERS_RECIPE)
      return run(['sh', '-c', command], dir, { NO_COLOR: '1', PW_TEST_CONNECT_WS_ENDPOINT: browser.wsEndpoint() })
    const reportFile = join(dir, 'report.json')
    const result = await run(['sh', '-c', `${command} --reporter=dot,json`], dir, {
      NO_COLOR: '1',
      PW_TEST_CONNECT_WS_ENDPOINT: browser.wsEndpoint(),
      PLAYWRIGHT_JSON_OUTPUT_FILE: reportFile,
    })
    if (result.code === 0) {
      // Three workers ran, each in its own namespace (the tests check what each saw), and the one server is gone.
      const results = resultsOf(JSON.parse(readFileSync(reportFile, 'utf8')))
      expect(results.map((each) => each.status)).toEqual(Array(9).fill('passed'))
      expect([...new Set(results.map((each) => each.parallelIndex))].sort()).toEqual([0, 1, 2])
      const overlapping = results.filter((a) =>
        results.some((b) => b.parallelIndex !== a.parallelIndex && a.start < b.end && b.start < a.end),
      )
      console.info(`${WORKERS_RECIPE}: ${overlapping.length} of 9 tests ran while another worker's test was running`)
      expect(overlapping.length).toBeGreaterThan(0)
      expect(
        await fetch(`${WEB_SERVER}/healthz`).then(
          () => 'still up',
          () => 'stopped',
        ),
      ).toBe('stopped')
    }
    return result
  }

  test.each(RECIPE_RUNS.map(({ recipe }) => recipe))('%s brings its test files only, no package.json', (recipe) => {
    expect(existsSync(join(RECIPES, recipe, 'package.json'))).toBe(false)
    expect(readdirSync(join(RECIPES, recipe)).length).toBeGreaterThan(0)
  })

  test.each(RECIPE_RUNS)(
    '$recipe: `$command` passes as installed by the documented steps, and after rm -rf node_modules && npm ci',
    async ({ recipe, runner, command, passed }) => {
      for (const pinned of runner) expect(pinned).toMatch(/@\d+\.\d+\.\d+$/)
      if (BROWSER_RECIPES.has(recipe)) {
        if (browserMissing && process.env.CI !== 'true') return
        requireChromium()
        // The test runner drives the browser this repository's playwright-core serves: the same version.
        const core = JSON.parse(readFileSync(join(ROOT, 'node_modules/playwright-core/package.json'), 'utf8'))
        expect(runner.join(' ')).toBe(`@playwright/test@${core.version}`)
      }
      const base = installed.get(runner.join(' '))
      const dir = base ? await projectLike(base, recipe) : await documentedProject(packed, registry.url, recipe, runner)
      projects.push(dir)
      const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'))
      expect(manifest.type ?? 'commonjs').toBe('commonjs') // npm init's, as the recipe found it
      // Every platform packed is locked, the others as optional packages npm did not install here.
      const lock = JSON.parse(readFileSync(join(dir, 'package-lock.json'), 'utf8')).packages
      for (const name of packed.platforms) {
        const target = TARGETS.find((each) => each.name === name) as (typeof TARGETS)[0]
        expect(lock[`node_modules/${platformPackageOf(target)}`]).toMatchObject({ optional: true })
      }

      const passes = async (when: string) => {
        const result = await runRecipe(recipe, command, dir)
        if (result.code !== 0) console.error(`${recipe}, ${when}:\n${result.output}`)
        expect(result.output).toMatch(passed)
        expect(result.code).toBe(0)
      }
      if (!base) {
        await passes('installed as documented')
        removeDir(join(dir, 'node_modules'))
        const ci = await run(['npm', 'ci', '--loglevel=error'], dir)
        if (ci.code !== 0) console.error(ci.output)
        expect(ci.code).toBe(0)
        installed.set(runner.join(' '), dir)
      }
      await passes('after npm ci')
      expect(registry.requests).toEqual([])
    },
    300_000,
  )
})
