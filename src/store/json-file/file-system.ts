import { type FileHandle, open, rename } from 'node:fs/promises'

/**
 * The file operations the store writes with: node's own, or in tests a wrapper that fails the way a full disk, a
 * denied permission or a failed rename does, at the exact step a test picks. Reading, locking and the start-up
 * checks use `node:fs` directly: a fault there stops start-up, and real files show it well enough.
 */
export interface FileSystem {
  open: typeof open
  rename: typeof rename
}

/** The real file system. */
export const nodeFileSystem: FileSystem = { open, rename }

/**
 * Writes all of `bytes` at `position` (or at the file's current position when null). A write may store fewer bytes
 * than asked without failing (a disk that fills up mid-write does exactly that); the rest is written again, which
 * either completes or fails with the disk's error, so a short write is never taken for a whole one.
 */
export async function writeAll(handle: FileHandle, bytes: Uint8Array, position: number | null = null): Promise<void> {
  let done = 0
  while (done < bytes.length) {
    const { bytesWritten } = await handle.write(
      bytes,
      done,
      bytes.length - done,
      position === null ? null : position + done,
    )
    if (bytesWritten <= 0) throw new Error(`wrote ${done} of ${bytes.length} bytes, then nothing`)
    done += bytesWritten
  }
}
