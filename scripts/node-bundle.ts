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

/** Writes `service.cjs` into `dir`; returns its path. */
export async function buildNodeService(dir: string): Promise<string> {
  mkdirSync(dir, { recursive: true })
  const path = join(dir, 'service.cjs')
  const built = await Bun.build({
    entrypoints: [join(ROOT, 'src/service.ts')],
    target: 'node',
    format: 'cjs',
    external: ['@node-rs/argon2'],
    plugins: [leftOut],
    minify: { syntax: true, whitespace: true },
    // Node 18 has Web Crypto only in `node:crypto`, where the dependencies look for it as the global `crypto`: the
    // bundle has it in its own scope, from the global where there is one. The bundle's own path, where code asks for
    // it, is the file it is rather than this machine's.
    banner:
      "const crypto = globalThis.crypto ?? require('node:crypto').webcrypto; const __serviceUrl = require('node:url').pathToFileURL(__filename).href;",
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
