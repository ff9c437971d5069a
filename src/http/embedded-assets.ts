/**
 * Files served from the executable itself (the pages' stylesheet and scripts, the documentation's bundle), with
 * their compressed forms. `bun run build` compresses each once, at the best levels (scripts/precompress.ts), and
 * embeds the results beside it under `<name>.br` and `<name>.gz`, which `Bun.embeddedFiles` lists. Run from the
 * sources, nothing is embedded: a file is compressed on its first request instead, at the quick level, and kept
 * for the life of the process. Either way no request compresses a file again, and what is kept is bounded by the
 * fixed set of files.
 */
import { readFileSync } from 'node:fs'
import { embeddedFile, fileBody } from '#runtime'
import { type Coding, compress, encodedHeaders, MIN_COMPRESSED_BYTES, negotiate, VARY } from './compression.ts'
import { sizedResponse } from './sized-response.ts'

/** A file the executable serves as it is. */
export interface EmbeddedAsset {
  /** Its file name, unique among the assets, which its compressed forms are embedded under with a suffix. */
  name: string
  /** Its text, or the path of the file Bun embedded (an import `with { type: 'file' }`). */
  source: { text: string } | { path: string }
  /** Its `Content-Type` and `Cache-Control`, and any other header it carries. */
  headers: Record<string, string>
}

/** What embedded files are compressed in: brotli compresses best, and gzip is what every other client accepts. */
export const EMBEDDED_CODINGS: readonly Coding[] = ['br', 'gzip']

const SUFFIX: Record<Coding, string> = { br: '.br', gzip: '.gz', zstd: '.zst' }

/** The name the build embeds `name` compressed in `coding` under. */
export const compressedName = (name: string, coding: Coding) => `${name}${SUFFIX[coding]}`

/** The bytes of an asset. */
export function assetBytes({ source }: EmbeddedAsset): Uint8Array<ArrayBuffer> {
  return 'text' in source ? new TextEncoder().encode(source.text) : readFileSync(source.path)
}

/** The compressed forms made in this process, for an executable built without them or a run from the sources. */
const made = new Map<string, Uint8Array>()

function compressedForm(asset: EmbeddedAsset, coding: Coding): Blob | Uint8Array {
  const name = compressedName(asset.name, coding)
  const built = embeddedFile(name)
  if (built) return built
  let bytes = made.get(name)
  if (!bytes) {
    bytes = compress(assetBytes(asset), coding)
    made.set(name, bytes)
  }
  return bytes
}

/** The size of each asset, measured once. */
const sizes = new Map<string, number>()

/**
 * The answer serving `asset` to `request`: compressed as the client accepts when it is large enough to gain by it,
 * else as it is.
 */
export function assetResponse(request: Request, asset: EmbeddedAsset): Response {
  const body = 'text' in asset.source ? asset.source.text : fileBody(asset.source.path)
  let size = sizes.get(asset.name)
  if (size === undefined) {
    size = typeof body === 'string' ? Buffer.byteLength(body) : body instanceof Blob ? body.size : body.byteLength
    sizes.set(asset.name, size)
  }
  if (size < MIN_COMPRESSED_BYTES) return sizedResponse(body, { headers: asset.headers })
  const coding = negotiate(request.headers.get('accept-encoding'), EMBEDDED_CODINGS)
  if (!coding) return sizedResponse(body, { headers: { ...asset.headers, ...VARY } })
  return sizedResponse(compressedForm(asset, coding), { headers: { ...asset.headers, ...encodedHeaders(coding) } })
}
