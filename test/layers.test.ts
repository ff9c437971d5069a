import { expect, test } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

// Which layer may know what: read from the source, since the compiler does not check it.
const SRC = join(import.meta.dir, '../src')
const source = (path: string) => readFileSync(join(SRC, path), 'utf8')
const importsOf = (text: string) => [...text.matchAll(/^import[^'"]*['"]([^'"]+)['"]/gm)].map((match) => match[1])

test('covers read the catalogue through its service, never the store', () => {
  for (const file of readdirSync(join(SRC, 'covers')).filter((name) => name.endsWith('.ts')))
    expect({
      file,
      imports: importsOf(source(join('covers', file))).filter((path) => path?.includes('/store/')),
    }).toEqual({ file, imports: [] })
})

test('the account services return domain values: the wire names are the routes’ alone', () => {
  const wireNames = /\b(created_at|last_used_at|expires_at|token_type|disabled_at)\b/g
  expect(source('accounts/service.ts').match(wireNames)).toBeNull()
  expect(source('accounts/routes.ts').match(wireNames)).not.toBeNull()
})

test('the model is the ground floor: it imports only itself and packages', () => {
  for (const file of readdirSync(join(SRC, 'model')).filter((name) => name.endsWith('.ts')))
    expect({
      file,
      imports: importsOf(source(join('model', file))).filter((path) => path?.startsWith('.') && !path.startsWith('./')),
    }).toEqual({ file, imports: [] })
})

test('the storage interface re-exports nothing: every record is the model’s', () => {
  expect(source('store/store.ts').match(/^export (type )?\{[^}]*\}/gm)).toBeNull()
})
