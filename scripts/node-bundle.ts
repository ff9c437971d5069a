#!/usr/bin/env bun
/**
 * The in-process service for Node (src/service.ts), bundled once, as one CommonJS file that `require` (Jest, CommonJS
 * projects) and `import` (ES modules) both load: `service.cjs`, which the npm package ships in `lib/`
 * (scripts/pack.ts). Everything is inside but
 * @node-rs/argon2, a native addon the package lists as a dependency; left out are Scalar's 4 MB page bundle (`/docs`
 * is then a 404 naming `/openapi.json`, src/docs/scalar.ts) and `file-type`, which Elysia loads only to check the
 * type of an uploaded file, which no route takes, and whose regular expressions Node 18 cannot parse. `#runtime`
 * resolves to src/runtime/node.ts here.
 *
 * `bun scripts/node-bundle.ts [DIR]` writes it to DIR (`dist/node` by default).
 */
import { mkdirSync } from 'node:fs'
import { join, resolve } from 'node:path'
import type { BunPlugin } from 'bun'

const ROOT = resolve(import.meta.dir, '..')

/** The modules left out, each replaced by one that fails to load, as a module that is not installed does. */
const leftOut: BunPlugin = {
  name: 'left-out',
  setup(build) {
    build.onResolve({ filter: /(scalar-files\.ts|^file-type)$/ }, ({ path }) => ({ path, namespace: 'left-out' }))
    build.onLoad({ filter: /.*/, namespace: 'left-out' }, ({ path }) => ({
      contents: `throw new Error(${JSON.stringify(`${path} is left out of this bundle`)})`,
      loader: 'js',
    }))
  },
}

/**
 * `import('@node-rs/argon2')` (src/auth/password.ts loads the addon on first use) as a `require` of it: a dynamic
 * import left in a CommonJS file fails where the file is evaluated by a runner's own module system, as Jest does
 * (without `--experimental-vm-modules`, `import()` there throws). The addon is CommonJS, so `require` loads the same.
 */
const argon2ByRequire: BunPlugin = {
  name: 'argon2-by-require',
  setup(build) {
    // The addon itself, as required by the module below, stays outside the bundle.
    build.onResolve({ filter: /^@node-rs\/argon2$/ }, ({ path, importer }) =>
      importer === 'argon2-by-require'
        ? { path, external: true }
        : { path: 'argon2-by-require', namespace: 'argon2-by-require' },
    )
    build.onLoad({ filter: /.*/, namespace: 'argon2-by-require' }, () => ({
      contents: "module.exports = require('@node-rs/argon2')",
      loader: 'js',
    }))
  },
}

/** Writes `service.cjs` into `dir`; returns its path. */
export async function buildNodeService(dir: string): Promise<string> {
  mkdirSync(dir, { recursive: true })
  const path = join(dir, 'service.cjs')
  const built = await Bun.build({
    entrypoints: [join(ROOT, 'src/service.ts')],
    target: 'node',
    format: 'cjs',
    external: ['@node-rs/argon2'],
    plugins: [leftOut, argon2ByRequire],
    minify: { syntax: true, whitespace: true },
    // The globals the code and its dependencies use that a test runner's global scope may lack are taken from Node's
    // modules into the bundle's own scope. Node 18 has Web Crypto only in `node:crypto`; Jest's jsdom environment
    // (where `require('rock-legends')` loads this file) has a `crypto` without `subtle`, and no `structuredClone`,
    // which V8's serializer, the same algorithm, stands in for. The bundle's own path, where code asks for it, is
    // the file it is rather than this machine's.
    banner: [
      "const crypto = require('node:crypto').webcrypto;",
      "const structuredClone = globalThis.structuredClone ?? ((value) => { const v8 = require('node:v8'); return v8.deserialize(v8.serialize(value)) });",
      "const __serviceUrl = require('node:url').pathToFileURL(__filename).href;",
    ].join(' '),
    define: { 'import.meta.url': '__serviceUrl' },
  })
  if (!built.success) throw new Error(built.logs.map(String).join('\n'))
  const [output, ...others] = built.outputs
  if (!output || others.length > 0)
    throw new Error(`the bundle should be one file, not ${built.outputs.map((o) => o.path).join(', ')}`)
  await Bun.write(path, await output.text())
  return path
}

if (import.meta.main) {
  const path = await buildNodeService(resolve(process.argv[2] ?? join(ROOT, 'dist/node')))
  console.log(`${path}: ${(Bun.file(path).size / 1024).toFixed(0)} KiB`)
}
