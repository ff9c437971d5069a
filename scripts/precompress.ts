/**
 * `bun scripts/precompress.ts`, the first step of `bun run build`: compresses every file the executable serves as it
 * is (src/http/embedded-assets.ts) at the best levels, into dist/precompressed/<coding>/, which the build embeds
 * beside them.
 * Brotli's best level takes seconds for the documentation's bundle, so each result is also kept in
 * dist/.precompressed-cache/ under a hash of its input, and a build whose files did not change compresses nothing.
 */
import { copyFileSync, existsSync, mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { docsAssets } from '../src/docs/scalar.ts'
import { BEST, compressBest, MIN_COMPRESSED_BYTES } from '../src/http/compression.ts'
import { assetBytes, compressedName, EMBEDDED_CODINGS } from '../src/http/embedded-assets.ts'
import { pageAssets } from '../src/web/assets.ts'

const ROOT = join(import.meta.dir, '..')
/** What the build embeds: exactly the compressed forms of today's assets. */
export const PRECOMPRESSED_DIR = join(ROOT, 'dist/precompressed')
const CACHE = join(ROOT, 'dist/.precompressed-cache')

/** Writes the compressed forms of every asset into {@link PRECOMPRESSED_DIR}; returns their paths. */
export function precompress(): string[] {
  rmSync(PRECOMPRESSED_DIR, { recursive: true, force: true })
  mkdirSync(PRECOMPRESSED_DIR, { recursive: true })
  mkdirSync(CACHE, { recursive: true })
  const written: string[] = []
  const used = new Set<string>()
  for (const asset of [...Object.values(pageAssets()), ...docsAssets.values()]) {
    const bytes = assetBytes(asset)
    // Too small to gain by it: the server sends these as they are.
    if (bytes.byteLength < MIN_COMPRESSED_BYTES) continue
    // The content, the levels, the coding and the Bun that compresses (its zlib and zstd) name each result.
    const hash = Bun.hash(`${Bun.version} ${JSON.stringify(BEST)} ${Bun.hash(bytes)}`).toString(36)
    for (const coding of EMBEDDED_CODINGS) {
      const cached = `${hash}-${coding}`
      used.add(cached)
      if (!existsSync(join(CACHE, cached))) {
        // Whole or not at all: a build stopped half-way must not leave a cut result for the next to reuse.
        const temp = join(CACHE, `.${cached}.${process.pid}.tmp`)
        writeFileSync(temp, compressBest(bytes, coding))
        renameSync(temp, join(CACHE, cached))
      }
      // One directory per coding: the build names the output of each entry point after its name without its last
      // suffix, so `x.js.br` and `x.js.gz` side by side would collide.
      mkdirSync(join(PRECOMPRESSED_DIR, coding), { recursive: true })
      const file = join(PRECOMPRESSED_DIR, coding, compressedName(asset.name, coding))
      copyFileSync(join(CACHE, cached), file)
      written.push(file)
    }
  }
  // The results for files that are gone (an older Scalar's bundle) would only grow the cache.
  for (const entry of readdirSync(CACHE)) if (!used.has(entry)) rmSync(join(CACHE, entry))
  return written
}

if (import.meta.main) {
  const files = precompress()
  console.log(`precompressed ${files.length} files into ${PRECOMPRESSED_DIR}`)
}
