import { describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import ts from 'typescript'
// @ts-expect-error: plain JavaScript, typed only through the package's index.d.ts
import { argumentsFor } from '../../npm/rock-legends/lib/server.js'
import { NPM_OPTIONS, NPM_TYPES, optionsModule, typesFile } from '../../scripts/npm-options.ts'

// The npm package's index.d.ts and lib/options.js are self-contained (no import of src/): their options are written
// from the table of src/options.ts by scripts/npm-options.ts. These tests hold them to it, read the types with
// TypeScript's own checker, and check that the Node startServer turns each option into what the executable reads.

const ROOT = resolve(import.meta.dir, '../..')
const SOURCE_TYPES = join(ROOT, 'src/options.ts')

/** Options of the npm package alone: it runs the executable as a child process. */
const CHILD_PROCESS_ONLY = ['binary', 'readyTimeoutMs', 'stopTimeoutMs']

const program = ts.createProgram([NPM_TYPES, SOURCE_TYPES], {
  strict: true,
  noEmit: true,
  types: [],
  lib: ['lib.esnext.d.ts'],
  allowImportingTsExtensions: true,
})
const checker = program.getTypeChecker()

/** The properties of the interface `name` exported by `file`, by name. */
function propertiesOf(file: string, name: string): Map<string, ts.Symbol> {
  const source = program.getSourceFile(file)
  const module = source && checker.getSymbolAtLocation(source)
  const symbol = module && checker.getExportsOfModule(module).find((exported) => exported.name === name)
  if (!symbol) throw new Error(`${file} exports no ${name}`)
  const type = checker.getDeclaredTypeOfSymbol(symbol)
  return new Map(checker.getPropertiesOfType(type).map((property) => [property.name, property]))
}

const npmOptions = propertiesOf(NPM_TYPES, 'ServerOptions')
const sourceOptions = propertiesOf(SOURCE_TYPES, 'ServerOptions')

describe("the npm package's ServerOptions", () => {
  test('are written from src/options.ts (else: bun scripts/npm-options.ts)', () => {
    expect(readFileSync(NPM_OPTIONS, 'utf8')).toBe(optionsModule())
    expect(readFileSync(NPM_TYPES, 'utf8')).toBe(typesFile())
  })

  test('has the keys of src/options.ts, and the child-process options besides', () => {
    const npmKeys = [...npmOptions.keys()].filter((key) => !CHILD_PROCESS_ONLY.includes(key))
    expect(npmKeys.sort()).toEqual([...sourceOptions.keys()].sort())
    for (const key of CHILD_PROCESS_ONLY) expect(npmOptions.has(key)).toBe(true)
  })

  test('types each option as src/options.ts does', () => {
    const differing: string[] = []
    for (const [key, sourceProperty] of sourceOptions) {
      const npmProperty = npmOptions.get(key)
      if (!npmProperty) continue
      const npmType = checker.getTypeOfSymbol(npmProperty)
      const sourceType = checker.getTypeOfSymbol(sourceProperty)
      const optional = (property: ts.Symbol) => (property.flags & ts.SymbolFlags.Optional) !== 0
      const unresolved = (type: ts.Type) => (type.flags & ts.TypeFlags.Any) !== 0
      if (
        unresolved(npmType) ||
        unresolved(sourceType) ||
        !checker.isTypeAssignableTo(npmType, sourceType) ||
        !checker.isTypeAssignableTo(sourceType, npmType) ||
        optional(npmProperty) !== optional(sourceProperty)
      )
        differing.push(`${key}: ${checker.typeToString(npmType)} vs ${checker.typeToString(sourceType)}`)
    }
    expect(differing).toEqual([])
  })

  test("are each named in the package's README", () => {
    const readme = readFileSync(join(ROOT, 'npm/rock-legends/README.md'), 'utf8')
    expect([...npmOptions.keys()].filter((key) => !readme.includes(`\`${key}\``))).toEqual([])
  })

  test('the type check above does find a difference', () => {
    const [number, string] = [checker.getNumberType(), checker.getStringType()]
    expect(checker.isTypeAssignableTo(number, string)).toBe(false)
  })
})

// A value other than the default for each option the Node startServer passes on the command line. `apiKeys` is a
// parameter of argumentsFor of its own, and `compactAfterBytes` goes in the environment (it has no flag).
const NOT_DEFAULT: Record<string, unknown> = {
  port: 4000,
  host: '0.0.0.0',
  data: 'db.json',
  dbPool: 3,
  dbWaitMs: 2500,
  dataDirect: 'postgres://rl@db.internal/catalogue',
  seed: true,
  allowNewData: true,
  takeover: true,
  fixturesNamespaces: 20,
  fixturesMemory: 64,
  tokenTtlMs: 60_000,
  log: 'json',
  logLevel: 'debug',
  cors: ['*'],
  delay: 10,
  readOnly: true,
  allowReset: true,
  fixtures: true,
  ui: false,
  signup: false,
  metrics: '127.0.0.1:9464',
  backupEveryMs: 3_600_000,
  backupDir: 'backups',
  backupKeep: 3,
  trustProxy: ['loopback'],
  tlsCert: 'cert.pem',
  tlsKey: 'key.pem',
  hstsMs: 86_400_000,
  httpsDomains: ['api.example.com'],
  acmeDirectory: 'https://acme-staging-v02.api.letsencrypt.org/directory',
  acmeEmail: 'ops@example.com',
  acmeDir: '/var/lib/rock-legends/acme',
  httpPort: 8080,
}
const NOT_ON_COMMAND_LINE = ['apiKeys', 'compactAfterBytes', ...CHILD_PROCESS_ONLY]

describe("the Node startServer's command line", () => {
  test('every option of the package is covered here', () => {
    const onCommandLine = [...npmOptions.keys()].filter((key) => !NOT_ON_COMMAND_LINE.includes(key))
    expect(onCommandLine.sort()).toEqual(Object.keys(NOT_DEFAULT).sort())
  })

  test.each(Object.entries(NOT_DEFAULT))('%s changes the command line', (key, value) => {
    expect(argumentsFor({ [key]: value }, [])).not.toEqual(argumentsFor({}, []))
  })

  test.each([
    [{ dbPool: 3 }, ['--db-pool', '3']],
    [{ dbWaitMs: 2500 }, ['--db-wait', '2500ms']],
  ])('the options %o add %p', (options, flags) => {
    const base = ['--port', '0', '--data', ':memory:', '--log', 'off']
    expect(argumentsFor(options, [])).toEqual([...base, ...flags])
  })
})
