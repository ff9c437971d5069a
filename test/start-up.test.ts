import { expect, test } from 'bun:test'
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'

// What every start of the executable loads: the modules src/main.ts imports statically, and theirs, read from the
// source. A test suite starts the executable hundreds of times, so what only some runs need is imported where it is
// needed (`await import(...)`), and the start-up path does no work that only some runs need at the top of a module.
// Measured in bench/startup-cpu.ts.
const ROOT = join(import.meta.dir, '..')

/** The modules a module imports or re-exports for their values (not `import type`, not `await import()`). */
function staticImports(text: string): string[] {
  const code = text.replace(/^\s*\/\/.*$/gm, '')
  const statements = code.matchAll(/^(?:import|export)\s+(type\s+)?(?:[^'";]*?\sfrom\s+)?['"]([^'"]+)['"]/gm)
  return [...statements].filter((match) => !match[1]).map((match) => match[2] as string)
}

/** Every module of the repository the entry loads at start, with its text; packages by name. */
function loadedAtStart(entry: string) {
  const files = new Map<string, string>()
  const packages = new Set<string>()
  const visit = (file: string) => {
    if (files.has(relative(ROOT, file))) return
    // Data and assets (JSON, the docs' bundle) are only named: they import nothing.
    const text = file.endsWith('.ts') ? readFileSync(file, 'utf8') : ''
    files.set(relative(ROOT, file), text)
    for (const name of staticImports(text)) {
      if (!name.startsWith('.')) packages.add(name)
      else {
        const path = resolve(dirname(file), name)
        if (existsSync(path)) visit(path)
      }
    }
  }
  visit(join(ROOT, entry))
  return { files, packages }
}

const start = loadedAtStart('src/main.ts')

test('start-up loads no store, seed, front or generator that only some runs need', () => {
  const needless = [
    'src/store/sql/sql-store.ts',
    'src/store/json-file/json-file.ts',
    'src/seed/seed.ts',
    'data/legends.json',
    'src/fixtures/front.ts',
    'src/metrics/metrics.ts',
    'src/docs/document.ts',
    'src/cli/users.ts',
    'src/cli/ops.ts',
    'src/tls/acme.ts',
  ]
  expect(needless.filter((file) => start.files.has(file))).toEqual([])
  expect([...start.packages].filter((name) => /argon2|async_hooks|bun:sql|nanoid/.test(name))).toEqual([])
})

test('start-up reads no lazily made part of Bun or of the locale data', () => {
  for (const [file, text] of start.files) {
    // `import { SQL } from 'bun'` reads `Bun.SQL` as the module loads, which loads Bun's SQL client (milliseconds).
    expect({ file, bunValues: /^import\s+\{[^}]*\bSQL\b[^}]*\}\s+from\s+'bun'/m.test(text) }).toEqual({
      file,
      bunValues: false,
    })
    // The first `toLocaleString` loads ICU's number formatting; `withCommas` writes whole numbers the same way (and
    // leaves the others to it).
    const formats = file !== 'src/text/numbers.ts' && text.includes('.toLocaleString(')
    expect({ file, toLocaleString: formats }).toEqual({ file, toLocaleString: false })
  }
})

test('the fixture controls make their schemas only for a server with --fixtures', () => {
  const text = start.files.get('src/fixtures/routes.ts') ?? ''
  // Elysia's `t.Integer` compiles a check as it is made: none at the top level of the module.
  const made = text.split('\n').filter((line) => /^(?:export )?(?:const|let)\s+\w+\s*=\s*(?:t|Type)\./.test(line))
  expect(made).toEqual([])
})
