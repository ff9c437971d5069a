import { join } from 'node:path'
import type { Page } from 'playwright-core'

const AXE = join(import.meta.dir, '../../node_modules/axe-core/axe.min.js')

/**
 * axe-core's serious and critical violations on the page as it is now, one line each with the nodes it names (the
 * script is run through the debugger, unless {@link axeOnEveryPage} put it there already, so the page's policy, which
 * refuses inline scripts, need not be loosened for it).
 *
 * Every rule that can report a serious or critical violation runs, and every violating node is reported. Two things
 * are spared, neither of which can change the answer: listing every node that passed (or did not apply), which the
 * tests never read (`resultTypes`, about a third of axe's time); and the rules whose impact is minor or moderate. axe
 * 4 gives every failing check of a rule that declares an impact that impact (`_finalizeRuleResult` in axe.js), so such
 * a rule never reports anything serious; which rules those are is read from axe's own rules on the page, so an axe
 * upgrade that raises a rule's impact runs it again. Rules that declare no impact all run.
 */
export async function accessibilityProblems(page: Page): Promise<string[]> {
  if (!(await page.evaluate(() => 'axe' in globalThis))) await page.evaluate(await Bun.file(AXE).text())
  type Result = { id: string; impact: string; help: string; nodes: { target: string[] }[] }
  const violations = await page.evaluate(async () => {
    type Axe = {
      _audit: { rules: { id: string; impact?: string }[] }
      run(options: { resultTypes: string[]; rules: Record<string, { enabled: boolean }> }): Promise<{
        violations: Result[]
      }>
    }
    const axe = (globalThis as unknown as { axe: Axe }).axe
    const lesser = axe._audit.rules.filter((rule) => rule.impact === 'minor' || rule.impact === 'moderate')
    const rules = Object.fromEntries(lesser.map((rule) => [rule.id, { enabled: false }]))
    return (await axe.run({ resultTypes: ['violations'], rules })).violations
  })
  return violations
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map(
      (violation) =>
        `${violation.impact} ${violation.id}: ${violation.help} (${violation.nodes.map((node) => node.target.join(' ')).join(', ')})`,
    )
}

/**
 * Has Chromium put axe-core into every document `page` loads from now on, before the page's own scripts (and outside
 * its Content-Security-Policy), for a test that checks many pages: V8 then compiles the 500 kB script once for the
 * renderer, not once per page as an evaluation does (for nine pages, less than half the browser's CPU time). axe only
 * adds its `axe` global.
 */
export async function axeOnEveryPage(page: Page): Promise<void> {
  const devtools = await page.context().newCDPSession(page)
  await devtools.send('Page.enable')
  await devtools.send('Page.addScriptToEvaluateOnNewDocument', { source: await Bun.file(AXE).text() })
}
