/** The seam's implementation on Bun (src/runtime/runtime.ts): Bun's own hashing, files, timers and streams. */
import type { Runtime } from './runtime.ts'

export type { PushController, Sha256 } from './runtime.ts'

export const sha256: Runtime['sha256'] = (data, encoding) => Bun.SHA256.hash(data, encoding)

export const sha256Hasher: Runtime['sha256Hasher'] = () => new Bun.CryptoHasher('sha256')

export const quickHash: Runtime['quickHash'] = (text) => Bun.hash(text).toString(36)

export const sleep: Runtime['sleep'] = (ms) => Bun.sleep(ms)

export const uuidv7: Runtime['uuidv7'] = () => Bun.randomUUIDv7()

let embedded: Map<string, Blob> | undefined
export const embeddedFile: Runtime['embeddedFile'] = (name) => {
  embedded ??= new Map(Bun.embeddedFiles.map((file) => [(file as Blob & { name: string }).name, file]))
  return embedded.get(name)
}

export const fileBody: Runtime['fileBody'] = (path) => Bun.file(path)

export const gzip: Runtime['gzip'] = (body, level) =>
  Bun.gzipSync(body, { level: level as NonNullable<Parameters<typeof Bun.gzipSync>[1]>['level'] })

export const zstd: Runtime['zstd'] = (body, level) => Bun.zstdCompressSync(body, { level })

export const hasZstd: Runtime['hasZstd'] = true

// Bun's direct stream hands each write to the connection with no copy and no queue of its own.
export const pushStream: Runtime['pushStream'] = (source) =>
  new ReadableStream({
    type: 'direct',
    pull: (controller: ReadableStreamDirectController) =>
      source.pull({
        write: (chunk) => controller.write(chunk),
        close: (error) => controller.close(error),
      }),
    cancel: () => source.cancel(),
  } satisfies Bun.DirectUnderlyingSource) as ReadableStream<Uint8Array>

export const withResolvers: Runtime['withResolvers'] = () => Promise.withResolvers()

export const deepEquals: Runtime['deepEquals'] = (a, b) => Bun.deepEquals(a, b)
