/**
 * test/fixtures/typed-client.ts with its `@ts-expect-error` lines taken out fails to type-check at exactly the lines
 * they guarded: the typed client refuses each misuse there, and nothing else. A second `tsc` over the whole of src/
 * (about 10 s of CPU), so it runs in the release step (`bun run test:release`) beside `bun run typecheck`, which
 * compiles the fixture with its directives (an unused one is an error there too), rather than in every `bun run test`.
 */
import { describe, expect, test } from 'bun:test'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { removeDir } from '../support/binary.ts'

const ROOT = resolve(import.meta.dir, '../..')
const FIXTURE = join(ROOT, 'test/fixtures/typed-client.ts')
const isDirective = (line: string) => line.trim().startsWith('// @ts-expect-error')

/**
 * Type-checks the fixture with its `@ts-expect-error` lines blanked out, as `bun run typecheck` would check a test
 * file that misused the client; resolves with tsc's exit code and output.
 */
async function typecheckWithoutDirectives() {
  const dir = join(ROOT, 'test/.work', `typed-client-${process.pid}`)
  mkdirSync(dir, { recursive: true })
  try {
    const stripped = readFileSync(FIXTURE, 'utf8')
      .split('\n')
      .map((line) => (isDirective(line) ? '' : line))
      .join('\n')
    writeFileSync(join(dir, 'typed-client.ts'), stripped.replace("'../../src/index.ts'", `'${ROOT}/src/index.ts'`))
    const config = { extends: `${ROOT}/tsconfig.json`, include: [], files: ['typed-client.ts'] }
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify(config))
    const tsc = Bun.spawn(['bun', join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', dir], {
      cwd: ROOT,
      stdout: 'pipe',
      stderr: 'pipe',
    })
    const [output, code] = await Promise.all([new Response(tsc.stdout).text(), tsc.exited])
    return { code, output }
  } finally {
    removeDir(dir)
  }
}

describe('test/fixtures/typed-client.ts', () => {
  test(
    'fails to type-check without its @ts-expect-error lines, at exactly the lines they guard',
    async () => {
      const guarded = readFileSync(FIXTURE, 'utf8')
        .split('\n')
        .flatMap((line, i) => (isDirective(line) ? [i + 2] : []))
      expect(guarded.length).toBeGreaterThanOrEqual(4)
      const { code, output } = await typecheckWithoutDirectives()
      expect(code).not.toBe(0)
      const lines = [...output.matchAll(/typed-client\.ts\((\d+),\d+\): error TS/g)].map((match) => Number(match[1]))
      expect([...new Set(lines)]).toEqual(guarded)
    },
    // tsc needs about 10 s of CPU: on a 2-core machine shared with the rest of the release step that can take a
    // minute of wall time.
    { timeout: 120_000 },
  )
})
