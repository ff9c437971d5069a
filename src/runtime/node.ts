/**
 * The seam's implementation where Bun is not (src/runtime/runtime.ts): the npm package's in-process service on Node
 * 18 and later, with Node's own modules and Web streams. No file is embedded there: what the pages serve is in the
 * bundle's own text.
 */
import { createHash, getRandomValues } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { setTimeout as delay } from 'node:timers/promises'
import zlib from 'node:zlib'
import type { Runtime } from './runtime.ts'
import { wyhash } from './wyhash.ts'

export type { PushController, Sha256 } from './runtime.ts'

export const sha256: Runtime['sha256'] = (data, encoding) => createHash('sha256').update(data).digest(encoding)

export const sha256Hasher: Runtime['sha256Hasher'] = () => createHash('sha256')

const utf8 = new TextEncoder()

// Bun's own hash, computed here, so that a cover's tag and an asset's name are those the executable gives.
export const quickHash: Runtime['quickHash'] = (text) => wyhash(utf8.encode(text)).toString(36)

export const sleep: Runtime['sleep'] = (ms) => delay(ms)

export const uuidv7: Runtime['uuidv7'] = () => {
  const bytes = getRandomValues(new Uint8Array(16))
  const now = Date.now()
  // 48 bits of milliseconds, big-endian, then the version (7) and the variant (10).
  for (let i = 0; i < 6; i++) bytes[i] = Math.floor(now / 2 ** (8 * (5 - i))) & 0xff
  bytes[6] = ((bytes[6] as number) & 0x0f) | 0x70
  bytes[8] = ((bytes[8] as number) & 0x3f) | 0x80
  const hex = Buffer.from(bytes).toString('hex')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}

export const embeddedFile: Runtime['embeddedFile'] = () => undefined

export const fileBody: Runtime['fileBody'] = (path) => new Uint8Array(readFileSync(path))

export const gzip: Runtime['gzip'] = (body, level) => zlib.gzipSync(body, { level })

// zstd came to node:zlib in Node 22.15; older versions offer brotli and gzip alone.
const zstdSync = (zlib as { zstdCompressSync?: (body: Uint8Array, options: object) => Uint8Array }).zstdCompressSync

export const zstd: Runtime['zstd'] = (body, level) =>
  zstdSync?.(body, { params: { [(zlib.constants as Record<string, number>).ZSTD_c_compressionLevel ?? 100]: level } })

export const hasZstd: Runtime['hasZstd'] = zstdSync !== undefined

/**
 * A Web stream over a push source: a write is taken while the stream's queue has room (its length returned), else
 * answered with a promise settled once the reader has read enough.
 */
export const pushStream: Runtime['pushStream'] = (source) => {
  let room: (() => void) | undefined
  let closed = false
  return new ReadableStream<Uint8Array>(
    {
      start: (controller) => {
        source
          .pull({
            write: (chunk) => {
              if (closed) return 0
              controller.enqueue(chunk)
              if ((controller.desiredSize ?? 1) > 0) return chunk.byteLength
              return new Promise<number>((resolve) => {
                room = () => resolve(chunk.byteLength)
              })
            },
            close: (error) => {
              if (closed) return
              closed = true
              if (error) controller.error(error)
              else controller.close()
            },
          })
          .catch((error: unknown) => controller.error(error))
      },
      pull: () => {
        const waiting = room
        room = undefined
        waiting?.()
      },
      cancel: () => {
        closed = true
        source.cancel()
      },
    },
    new ByteLengthQueuingStrategy({ highWaterMark: 64 * 1024 }),
  )
}

export const withResolvers: Runtime['withResolvers'] = <T>() => {
  let resolve!: (value: T) => void
  let reject!: (reason: unknown) => void
  const promise = new Promise<T>((settle, fail) => {
    resolve = settle
    reject = fail
  })
  return { promise, resolve, reject }
}

const definedKeys = (value: object) =>
  Object.keys(value).filter((key) => (value as Record<string, unknown>)[key] !== undefined)

export const deepEquals: Runtime['deepEquals'] = (a, b) => {
  if (Object.is(a, b)) return true
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false
  if (Array.isArray(a) !== Array.isArray(b) || Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return false
  const keys = definedKeys(a)
  return (
    keys.length === definedKeys(b).length &&
    keys.every((key) => deepEquals((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]))
  )
}
