/**
 * What differs by the runtime the service runs on: hashing, files, timers, compression and the streams the event
 * feed writes to. The rest of the code imports these from `#runtime`, which package.json resolves to `bun.ts` on Bun
 * (the executable, a clone, a Bun project) and to `node.ts` elsewhere (the npm package's in-process service on Node):
 * the code above this seam never asks which runtime it is on. Each implementation types its exports with this.
 */

/** An incremental SHA-256. */
export interface Sha256 {
  update(data: string | Uint8Array): Sha256
  digest(encoding: 'hex' | 'base64url'): string
}

/** The controller of a stream written by pushing bytes, as the event feed writes: Bun's `direct` stream's subset. */
export interface PushController {
  /** Hands `chunk` on: its length when taken at once, a promise settled once the reader has room again, 0 when closed. */
  write(chunk: Uint8Array): number | Promise<number>
  /** Ends the stream; with `error`, as a failure. */
  close(error?: Error): void
}

/** What a pushed stream is made from. */
export interface PushSource {
  /** Called once the reader starts reading; the stream lasts until the returned promise settles. */
  pull(controller: PushController): Promise<void>
  /** The reader went away. */
  cancel(): void
}

export interface Runtime {
  /** The SHA-256 of `data` in `encoding`. */
  sha256(data: string | Uint8Array, encoding: 'hex' | 'base64url'): string
  /** A new incremental SHA-256. */
  sha256Hasher(): Sha256
  /**
   * A quick, non-cryptographic hash of `text` in base 36: names and tags of content the server itself made. The same
   * on every runtime (Bun's `Bun.hash`), so that entity tags and asset names do not depend on where the service runs.
   */
  quickHash(text: string): string
  /** Resolves after `ms` milliseconds. */
  sleep(ms: number): Promise<void>
  /** A new UUID of version 7 (RFC 9562): time-ordered, for request ids. */
  uuidv7(): string
  /** A file embedded in the executable under `name`, if the build embedded one. */
  embeddedFile(name: string): Blob | undefined
  /** A body that sends the file at `path`. */
  fileBody(path: string): Blob | Uint8Array<ArrayBuffer>
  /** `body` in gzip at `level` (0 to 9). */
  gzip(body: Uint8Array<ArrayBuffer>, level: number): Uint8Array
  /** `body` in zstd at `level`, or `undefined` where the runtime has no zstd. */
  zstd(body: Uint8Array<ArrayBuffer>, level: number): Uint8Array | undefined
  /** Whether {@link Runtime.zstd} compresses here. */
  hasZstd: boolean
  /** A stream whose bytes `source` pushes. */
  pushStream(source: PushSource): ReadableStream<Uint8Array>
  /** Whether `a` and `b` hold the same values, deeply; properties set to `undefined` count as absent. */
  deepEquals(a: unknown, b: unknown): boolean
  /** A promise and the functions that settle it. */
  withResolvers<T>(): { promise: Promise<T>; resolve: (value: T) => void; reject: (reason: unknown) => void }
}
