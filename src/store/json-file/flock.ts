import { dlopen, FFIType, type Pointer, read } from 'bun:ffi'

// flock(2), reached through libc with Bun's FFI: node:fs has no file locks. The kernel holds such a lock for an open
// file and lets go of it when the last descriptor of that file is closed, so when the process ends, however it ends
// (kill -9, a power cut: then there is no process either). Whether a lock is held is a question to the kernel, never
// an inference from a pid: a pid can be reused, and in a container the command asking may itself be pid 1.

const LOCK_SH = 1
const LOCK_EX = 2
const LOCK_NB = 4
const LOCK_UN = 8
const EINTR = 4

/** Where libc is, by platform; flock and errno live there. Windows has neither. */
const LIBRARIES: Partial<Record<NodeJS.Platform, { paths: string[]; errno: string; wouldBlock: number }>> = {
  linux: { paths: ['libc.so.6'], errno: '__errno_location', wouldBlock: 11 },
  darwin: { paths: ['libSystem.B.dylib', '/usr/lib/libSystem.B.dylib'], errno: '__error', wouldBlock: 35 },
  freebsd: { paths: ['libc.so.7'], errno: '__error', wouldBlock: 35 },
}

/** Advisory whole-file locks on open file descriptors. */
export interface FileLocks {
  /** Takes the exclusive lock of the file open at `fd` without waiting; false when another open file holds a lock. */
  tryExclusive(fd: number): boolean
  /**
   * Whether another open file holds an exclusive lock on the file open at `fd`. Asked by taking a shared lock and
   * letting go of it at once; two askers never stand in each other's way.
   */
  heldElsewhere(fd: number): boolean
}

let loaded: FileLocks | null | undefined

/** flock(2) from the libc at `path`; throws when it cannot be opened. */
function bind(path: string, errnoName: string, wouldBlock: number): FileLocks {
  const { symbols } = dlopen(path, {
    flock: { args: [FFIType.i32, FFIType.i32], returns: FFIType.i32 },
    [errnoName]: { args: [], returns: FFIType.ptr },
  })
  const flock = symbols.flock as (fd: number, operation: number) => number
  const errnoAt = symbols[errnoName] as () => Pointer | null
  /** flock(fd, operation | LOCK_NB): true when done, false when another open file's lock stands in the way. */
  const attempt = (fd: number, operation: number): boolean => {
    for (;;) {
      if (flock(fd, operation | LOCK_NB) === 0) return true
      const at = errnoAt()
      const errno = at === null ? 0 : read.i32(at, 0)
      if (errno === wouldBlock) return false
      if (errno !== EINTR) throw new Error(`flock failed (errno ${errno})`)
    }
  }
  return {
    tryExclusive: (fd) => attempt(fd, LOCK_EX),
    heldElsewhere: (fd) => {
      if (!attempt(fd, LOCK_SH)) return true
      flock(fd, LOCK_UN)
      return false
    },
  }
}

/** flock(2) on this platform, or null where there is none (Windows, or a libc that cannot be opened). */
export function fileLocks(): FileLocks | null {
  if (loaded !== undefined) return loaded
  loaded = null
  const library = LIBRARIES[process.platform]
  for (const path of library?.paths ?? []) {
    try {
      loaded = bind(path, library?.errno ?? '', library?.wouldBlock ?? 0)
      break
    } catch {
      // Not at this path: try the next; without any, the caller falls back (see lock.ts).
    }
  }
  return loaded
}
