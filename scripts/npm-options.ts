/**
 * `bun scripts/npm-options.ts`: writes the npm package's options from the one table of them, src/options.ts. The
 * package is plain JavaScript that runs on Node without Bun, so it cannot import src/: it gets `lib/options.js`
 * (how its startServer passes each option to the executable) and the options part of `lib/index.d.ts` (their types
 * and doc comments, copied from the table's). test/npm/options.test.ts fails while either differs from what this
 * writes.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import ts from 'typescript'
import { type OptionDeclaration, SERVER_OPTIONS } from '../src/options.ts'

const ROOT = join(import.meta.dir, '..')
const TABLE = join(ROOT, 'src/options.ts')
export const NPM_OPTIONS = join(ROOT, 'npm/rock-legends/lib/options.js')
export const NPM_TYPES = join(ROOT, 'npm/rock-legends/lib/index.d.ts')

const BEGIN = '  // The options of the executable: generated from src/options.ts by `bun scripts/npm-options.ts`.\n'
const END = '  // The options of this package alone:\n'

const entries = () => Object.entries(SERVER_OPTIONS) as [string, OptionDeclaration][]

/** The text of lib/options.js. */
export function optionsModule(): string {
  const rows = entries().map(([key, option]) => {
    const value = option.embedded === undefined ? undefined : option.kind.parse(option.embedded, key)
    const quoted = (text: string) => `'${text.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`
    const embedded = value === undefined ? '' : `, embedded: ${typeof value === 'string' ? quoted(value) : value}`
    const where = option.flag ? `flag: '--${option.flag}'` : `env: '${option.env}'`
    return `  { key: '${key}', ${where}, form: '${option.kind.form}'${embedded} },`
  })
  return `// Generated from src/options.ts by \`bun scripts/npm-options.ts\`: edit the table there, then run it.

/**
 * How startServer passes each option to the executable (see argumentsFor in server.js): \`form\` says how a value is
 * written, and \`embedded\` is the value passed when the option is not given, where the executable's own default suits
 * a service rather than a fixture.
 */
export const OPTIONS = [
${rows.join('\n')}
]
`
}

/** The doc comment above each property of SERVER_OPTIONS in src/options.ts, by key. */
function docComments(): Map<string, string> {
  const text = readFileSync(TABLE, 'utf8')
  const source = ts.createSourceFile(TABLE, text, ts.ScriptTarget.Latest, true)
  const docs = new Map<string, string>()
  const visit = (node: ts.Node) => {
    if (ts.isVariableDeclaration(node) && node.name.getText() === 'SERVER_OPTIONS') {
      let value = node.initializer
      while (value && (ts.isAsExpression(value) || ts.isSatisfiesExpression(value))) value = value.expression
      if (!value || !ts.isObjectLiteralExpression(value)) throw new Error('SERVER_OPTIONS is no object literal')
      for (const property of value.properties) {
        const [doc] = ts.getJSDocCommentsAndTags(property)
        if (doc) docs.set(property.name?.getText() ?? '', `  ${doc.getText()}\n`)
      }
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return docs
}

/** The text of lib/index.d.ts, its options part written from the table. */
export function typesFile(current = readFileSync(NPM_TYPES, 'utf8')): string {
  const start = current.indexOf(BEGIN)
  const end = current.indexOf(END)
  if (start < 0 || end < start) throw new Error(`${NPM_TYPES} lacks the lines that frame the generated options`)
  const docs = docComments()
  const properties = entries().map(([key, option]) => {
    const doc = docs.get(key)
    if (!doc) throw new Error(`src/options.ts: SERVER_OPTIONS.${key} has no doc comment`)
    return `${doc}  ${key}?: ${option.kind.type}\n`
  })
  return current.slice(0, start + BEGIN.length) + properties.join('') + current.slice(end)
}

if (import.meta.main) {
  writeFileSync(NPM_OPTIONS, optionsModule())
  writeFileSync(NPM_TYPES, typesFile())
  console.log(`wrote ${NPM_OPTIONS} and the options of ${NPM_TYPES}`)
}
