/**
 * Spectral (Stoplight's OpenAPI linter, what API consumers run over a document they are handed) with its
 * `spectral:oas` ruleset over `/openapi.json` as served, without and with --fixtures: no error. Its warnings are
 * printed, not failed on: those it gives now are choices (the published document's names kept in `components`
 * though nothing refers to them, no `contact`, the deprecated delete that answers no 2xx).
 */
import { afterAll, describe, expect, test } from 'bun:test'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createApp } from '../../src/app.ts'
import { openMemoryStore } from '../../src/store/document/memory.ts'
import { fixtureWorld } from '../fixtures/support.ts'
import { removeDir, tempDir } from '../support/binary.ts'
import { installedTool } from '../support/npm-tools.ts'

const SPECTRAL = '@stoplight/spectral-cli'
const spectral = await installedTool("Spectral's check of /openapi.json", [`${SPECTRAL}@6.16.3`])
const NODE = Bun.which('node')

/** One finding of `spectral lint --format json`. */
interface Finding {
  code: string
  message: string
  path: string[]
  /** 0 error, 1 warning, 2 information, 3 hint. */
  severity: number
}

const work = tempDir('rock-legends-spectral-')
afterAll(() => removeDir(work))

/** Spectral's findings on `document` with the `spectral:oas` ruleset. */
async function lint(name: string, document: string): Promise<Finding[]> {
  const file = join(work, `${name}.json`)
  const ruleset = join(work, '.spectral.json')
  writeFileSync(file, document)
  writeFileSync(ruleset, JSON.stringify({ extends: ['spectral:oas'] }))
  const cli = (spectral as NonNullable<typeof spectral>).file(SPECTRAL, 'dist/index.js')
  const run = Bun.spawn([NODE as string, cli, 'lint', file, '--ruleset', ruleset, '--format', 'json', '--quiet'], {
    cwd: work,
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const [stdout, stderr] = await Promise.all([new Response(run.stdout).text(), new Response(run.stderr).text()])
  await run.exited
  try {
    return JSON.parse(stdout) as Finding[]
  } catch {
    throw new Error(`spectral did not answer JSON (exit ${run.exitCode}): ${stdout}${stderr}`)
  }
}

const served = {
  plain: async () => {
    const app = createApp({ store: openMemoryStore() })
    return (await app.handle(new Request('http://localhost/openapi.json'))).text()
  },
  fixtures: async () => (await (await fixtureWorld()).call('/openapi.json')).text(),
}

describe.skipIf(spectral === undefined)("Spectral's spectral:oas ruleset over /openapi.json", () => {
  test.each(Object.keys(served) as (keyof typeof served)[])(
    'finds no error in the document of a %s server',
    async (kind) => {
      const findings = await lint(kind, await served[kind]())
      const shown = (finding: Finding) => `${finding.code} at ${finding.path.join('.')}: ${finding.message}`
      const warnings = findings.filter(({ severity }) => severity > 0)
      if (warnings.length > 0) console.log(`Spectral's warnings (${kind}):\n  ${warnings.map(shown).join('\n  ')}`)
      expect(findings.filter(({ severity }) => severity === 0).map(shown)).toEqual([])
    },
    60_000,
  )
})
