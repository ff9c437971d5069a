import { closeSync, fstatSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs'
import { DataFileError, DataFileLockedError } from './errors.ts'
import { APPEND_EXISTING, CREATE_NEW, FILE_MODE, foreignFileProblem, openError, READ_EXISTING } from './owned-file.ts'

const heldHere = new Set<string>()

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/** Creates the lock holding our pid; false when a file (or a link) already has its name. */
function create(lockPath: string): boolean {
  let fd: number
  try {
    fd = openSync(lockPath, CREATE_NEW, FILE_MODE)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false
    throw error
  }
  try {
    writeSync(fd, `${process.pid}\n`)
  } finally {
    closeSync(fd)
  }
  return true
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
    return readFileSync(fd, 'utf8')
  } finally {
    closeSync(fd)
  }
}

/** The pid in an existing lock: its first line (what follows is what a server records once it listens). */
const owner = (lockPath: string): number => Number.parseInt(lockText(lockPath), 10)

/** Who holds a data file's lock, and what a server holding it recorded there once it was listening. */
export interface LockOwner {
  pid: number
  /** Whether that process still runs; a lock of a dead one is stale, and the next to open the file takes it over. */
  alive: boolean
  /** The server's base URL, reachable from this machine. */
  url?: string
  /** A service key of that server's process alone, for `rock-legends users` (see `recordServer`). */
  key?: string
}

/**
 * Who holds the lock of `file`, or `undefined` when no one does. A lock that is a link or someone else's file is a
 * {@link DataFileError}: only the user the server runs as (or root, through it) may read what it records.
 */
export function lockOwner(file: string): LockOwner | undefined {
  const text = lockText(`${file}.lock`)
  const pid = Number.parseInt(text, 10)
  if (!Number.isInteger(pid)) return undefined
  const field = (name: string) =>
    text
      .split('\n')
      .find((line) => line.startsWith(`${name}=`))
      ?.slice(name.length + 1)
  return { pid, alive: pid === process.pid || alive(pid), url: field('url'), key: field('key') }
}

/**
 * Appends to the lock this process holds on `file` what `rock-legends users` needs to reach the server instead of
 * writing the file behind its back: its URL and a service key of this process's own. The first line stays the pid,
 * so the lock means what it meant to every version; the file stays mode 0600, readable by this user (and root)
 * alone, who could as well edit the data file with the server stopped. Nothing happens for a lock not held here.
 */
export function recordServer(file: string, fields: { url: string; key: string }): void {
  const lockPath = `${file}.lock`
  if (!heldHere.has(lockPath)) return
  let fd: number
  try {
    fd = openSync(lockPath, APPEND_EXISTING)
  } catch (error) {
    throw openError(lockPath, error)
  }
  try {
    const problem = foreignFileProblem(lockPath, fstatSync(fd))
    if (problem) throw new DataFileError(problem)
    writeSync(fd, `url=${fields.url}\nkey=${fields.key}\n`)
  } finally {
    closeSync(fd)
  }
}

/**
 * Claims `file` for this process with a `FILE.lock` beside it holding our pid. A lock left by a process that no
 * longer runs (after `kill -9` or a power cut) is taken over; a lock that is a link or someone else's file is a
 * {@link DataFileError}. Returns the function that releases the claim.
 */
export function lockDataFile(file: string): () => void {
  const lockPath = `${file}.lock`
  if (heldHere.has(lockPath)) throw new DataFileLockedError(`${file} is already open in this process`)
  for (let attempt = 0; !create(lockPath); attempt++) {
    if (attempt > 0) throw Object.assign(new Error(`EEXIST: ${lockPath} keeps reappearing`), { code: 'EEXIST' })
    const pid = owner(lockPath)
    if (Number.isInteger(pid) && pid !== process.pid && alive(pid))
      throw new DataFileLockedError(
        `${file} is in use by another rock-legends process (pid ${pid}); stop it or choose another --data file`,
      )
    rmSync(lockPath, { force: true })
  }
  heldHere.add(lockPath)
  const release = () => {
    if (!heldHere.delete(lockPath)) return
    rmSync(lockPath, { force: true })
    process.off('exit', release)
  }
  // Even on process.exit() in the middle of things, leave no lock behind.
  process.on('exit', release)
  return release
}
