import {
  closeSync,
  constants,
  fchmodSync,
  fstatSync,
  ftruncateSync,
  lstatSync,
  openSync,
  readSync,
  rmSync,
  type Stats,
  writeSync,
} from 'node:fs'
import { DataFileError, DataFileLockedError } from './errors.ts'
import { type FileLocks, fileLocks } from './flock.ts'
import { APPEND_EXISTING, CREATE_NEW, FILE_MODE, foreignFileProblem, openError, READ_EXISTING } from './owned-file.ts'

// A data file is claimed by `FILE.lock` beside it, and who holds the claim is told by the kernel: the holder keeps
// the file open with flock(2)'s exclusive lock on it (see flock.ts), which ends with the process however it ends. The
// file's text is what the holder says about itself (its pid, then its URL and a key of its own once it listens), never
// what decides who holds it: a lock file that nobody holds, empty or naming a dead process, is free, and the next
// process to open the data file takes it over where it is, never by removing it and creating another (two starting
// at once would each remove the other's). The holder removes the file while still holding it, as it lets go; a
// process that locked a file so removed finds the name no longer leads to it, and starts over.
//
// Without flock (Windows), the file itself is the claim, created with O_EXCL; a lock file left by a crash is then never
// taken over by itself, since no takeover based on a pid is safe from two processes starting at once: the operator is
// told to make sure no server uses the data file and to delete the lock.

/** The lock files this process holds: their descriptor (kept open, which keeps the flock) or null without flock. */
const heldHere = new Map<string, number | null>()

const O_NOFOLLOW = constants.O_NOFOLLOW ?? 0
/** Opens the lock, creating it if needed, never through a link; a FIFO planted there does not block the open. */
const OPEN_OR_CREATE = constants.O_RDWR | constants.O_CREAT | O_NOFOLLOW | (constants.O_NONBLOCK ?? 0)
/** The most of a lock file ever read: a pid, a URL and a key. */
const MAX_LOCK_TEXT = 4096
/** How often a lock that is removed while it is being taken is looked at again before giving up. */
const MAX_RETRIES = 100

/** Up to {@link MAX_LOCK_TEXT} characters of the file open at `fd`, from its start. */
function textAt(fd: number): string {
  const buffer = Buffer.alloc(MAX_LOCK_TEXT)
  let length = 0
  for (let read = -1; read !== 0 && length < buffer.length; length += read)
    read = readSync(fd, buffer, length, buffer.length - length, length)
  return buffer.toString('utf8', 0, length)
}

/** The pid a lock's text records (its first line), or undefined while it records none. */
function pidOf(text: string): number | undefined {
  const pid = /^(\d{1,10})\n/.exec(text)?.[1]
  return pid === undefined ? undefined : Number(pid)
}

function lockedError(file: string, pid: number | undefined): DataFileLockedError {
  const who = pid === undefined ? 'which has not recorded its pid yet' : `pid ${pid}`
  return new DataFileLockedError(
    `${file} is in use by another rock-legends process (${who}); stop it or choose another --data file`,
  )
}

/** Whether `path` is still the name of the file described by `stats`. */
function stillNamed(path: string, stats: Stats): boolean {
  const now = lstatSync(path, { throwIfNoEntry: false })
  return now !== undefined && now.ino === stats.ino && now.dev === stats.dev
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/** The text of an existing lock, read without following a link, from a file that must be our own; '' when gone. */
function lockText(lockPath: string): string {
  let fd: number
  try {
    fd = openSync(lockPath, READ_EXISTING)
  } catch (error) {
    // Gone since: whoever held it has just released it.
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return ''
    throw openError(lockPath, error)
  }
  try {
    const problem = foreignFileProblem(lockPath, fstatSync(fd))
    if (problem) throw new DataFileError(problem)
    return textAt(fd)
  } finally {
    closeSync(fd)
  }
}

/**
 * Whether the lock file of `file` records that a server served over it: a server writes its address there once it
 * listens, which is after its data file exists. A lock without one (empty, or a pid alone) is left by a start that
 * stopped before it served, perhaps before the file existed; a lock that cannot be read here says nothing.
 */
export function lockShowsServed(file: string): boolean {
  try {
    return /^url=/m.test(lockText(`${file}.lock`))
  } catch {
    return false
  }
}

/** Who holds a data file's lock, and what a server holding it recorded there once it was listening. */
export interface LockOwner {
  /** The pid the lock records, once its holder has written it. */
  pid?: number
  /**
   * Whether that pid is a process this one can see running, other than itself. Where the kernel says the lock is
   * held, a pid that is not running means the text is not the holder's (yet): it has only just taken over a stale
   * lock, or it runs in another pid namespace (another container), so what the text says must not be trusted.
   */
  running: boolean
  /** The server's base URL, reachable from this machine. */
  url?: string
  /** A service key of that server's process alone, for `rock-legends users` (see `recordServer`). */
  key?: string
  /** The signal that asks that server to hand its port and file over to a `--takeover` (see `recordServer`). */
  handover?: string
}

/** What the text of a held lock says about its holder. */
function ownerOf(text: string, lockPath: string): LockOwner {
  const pid = pidOf(text)
  const field = (name: string) =>
    text
      .split('\n')
      .find((line) => line.startsWith(`${name}=`))
      ?.slice(name.length + 1)
  const running =
    pid !== undefined && (heldHere.has(lockPath) ? pid === process.pid : pid !== process.pid && alive(pid))
  return { pid, running, url: field('url'), key: field('key'), handover: field('handover') }
}

/**
 * Who holds the lock of `file`, or `undefined` when no one does: with flock, whether anyone holds it is the kernel's
 * answer, whatever the file says (a lock file left by a crash, naming a pid that may since have been given to another
 * process, is held by no one). A lock that is a link or someone else's file is a {@link DataFileError}: only the user
 * the server runs as (or root, through it) may read what it records. `locks` is flock(2), or null to act as where
 * there is none.
 */
export function lockOwner(file: string, locks: FileLocks | null = fileLocks()): LockOwner | undefined {
  const lockPath = `${file}.lock`
  if (!locks) {
    const owner = ownerOf(lockText(lockPath), lockPath)
    return owner.running ? owner : undefined
  }
  let fd: number
  try {
    fd = openSync(lockPath, READ_EXISTING | (constants.O_NONBLOCK ?? 0))
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw openError(lockPath, error)
  }
  try {
    const problem = foreignFileProblem(lockPath, fstatSync(fd))
    if (problem) throw new DataFileError(problem)
    if (!heldHere.has(lockPath) && !locks.heldElsewhere(fd)) return undefined
    return ownerOf(textAt(fd), lockPath)
  } finally {
    closeSync(fd)
  }
}

/**
 * Appends to the lock this process holds on `file` what `rock-legends users` needs to reach the server instead of
 * writing the file behind its back: its URL and a service key of this process's own; and the signal a `--takeover`
 * sends it. The first line stays the pid, so the lock means what it meant to every version; the file stays mode
 * 0600, readable by this user (and root) alone, who could as well edit the data file with the server stopped.
 * Nothing happens for a lock not held here.
 */
export function recordServer(file: string, fields: { url: string; key: string; handover: string }): void {
  const lockPath = `${file}.lock`
  const held = heldHere.get(lockPath)
  if (held === undefined) return
  const line = `url=${fields.url}\nkey=${fields.key}\nhandover=${fields.handover}\n`
  if (held !== null) {
    writeSync(held, line, fstatSync(held).size)
    return
  }
  let fd: number
  try {
    fd = openSync(lockPath, APPEND_EXISTING)
  } catch (error) {
    throw openError(lockPath, error)
  }
  try {
    const problem = foreignFileProblem(lockPath, fstatSync(fd))
    if (problem) throw new DataFileError(problem)
    writeSync(fd, line)
  } finally {
    closeSync(fd)
  }
}

/**
 * Takes the flock of `FILE.lock` (creating it if needed) and writes our pid in it; returns its descriptor, which
 * stays open as long as the claim lasts.
 */
function claimWithFlock(file: string, lockPath: string, locks: FileLocks): number {
  for (let attempt = 0; ; attempt++) {
    let fd: number
    try {
      fd = openSync(lockPath, OPEN_OR_CREATE, FILE_MODE)
    } catch (error) {
      throw openError(lockPath, error)
    }
    let claimed = false
    try {
      const stats = fstatSync(fd)
      const problem = foreignFileProblem(lockPath, stats)
      if (problem) throw new DataFileError(problem)
      if (!locks.tryExclusive(fd)) throw lockedError(file, pidOf(textAt(fd)))
      // Locked; but a holder removes the file (still locked) as it lets go, and a file so removed locks nothing:
      // the name must still lead to the file locked here, else start over with whatever has the name now.
      if (stillNamed(lockPath, stats)) {
        // Ours now, whatever it held: a dead process's pid and address, or nothing.
        ftruncateSync(fd, 0)
        fchmodSync(fd, FILE_MODE)
        writeSync(fd, `${process.pid}\n`, 0)
        claimed = true
        return fd
      }
      if (attempt >= MAX_RETRIES)
        throw Object.assign(new Error(`${lockPath} keeps being replaced while it is locked`), { code: 'EEXIST' })
    } finally {
      if (!claimed) closeSync(fd)
    }
  }
}

/** Creates `FILE.lock` holding our pid, where there is no flock: an existing one is never taken over. */
function claimWithoutFlock(file: string, lockPath: string): void {
  let fd: number
  try {
    fd = openSync(lockPath, CREATE_NEW, FILE_MODE)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw openError(lockPath, error)
    const pid = pidOf(lockText(lockPath))
    if (pid !== undefined && pid !== process.pid && alive(pid)) throw lockedError(file, pid)
    throw new DataFileLockedError(
      `${lockPath} exists, ${pid === undefined ? 'naming no process' : `left by process ${pid}, which no longer runs`}; this system has no flock, so the server never takes over a lock by itself (two starting at once could both do so): make sure no rock-legends process uses ${file}, then delete ${lockPath}`,
    )
  }
  try {
    writeSync(fd, `${process.pid}\n`)
  } finally {
    closeSync(fd)
  }
}

/**
 * Claims `file` for this process with a `FILE.lock` beside it: flock(2)'s exclusive lock on it, and our pid in it.
 * A lock file nobody holds (left by `kill -9` or a power cut, empty or not) is taken over where it is; one that is a
 * link or someone else's file is a {@link DataFileError}; one held by another process is a
 * {@link DataFileLockedError}. `locks` is flock(2), or null to act as where there is none (see above). Returns the
 * function that releases the claim.
 */
export function lockDataFile(file: string, locks: FileLocks | null = fileLocks()): () => void {
  const lockPath = `${file}.lock`
  if (heldHere.has(lockPath)) throw new DataFileLockedError(`${file} is already open in this process`)
  let fd: number | null = null
  if (locks) fd = claimWithFlock(file, lockPath, locks)
  else claimWithoutFlock(file, lockPath)
  heldHere.set(lockPath, fd)
  const stats = fd === null ? undefined : fstatSync(fd)
  const release = () => {
    if (!heldHere.delete(lockPath)) return
    process.off('exit', release)
    try {
      // Removed while still locked (see above), and only if the name still leads to our file.
      if (!stats || stillNamed(lockPath, stats)) rmSync(lockPath, { force: true })
    } finally {
      if (fd !== null) closeSync(fd)
    }
  }
  // Even on process.exit() in the middle of things, leave no lock behind.
  process.on('exit', release)
  return release
}
