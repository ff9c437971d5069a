import { closeSync, fstatSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs'
import { DataFileError, DataFileLockedError } from './errors.ts'
import { CREATE_NEW, FILE_MODE, foreignFileProblem, openError, READ_EXISTING } from './owned-file.ts'

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

/** The pid in an existing lock, read without following a link, from a file that must be our own. */
function owner(lockPath: string): number {
  let fd: number
  try {
    fd = openSync(lockPath, READ_EXISTING)
  } catch (error) {
    // Gone since: whoever held it has just released it.
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return Number.NaN
    throw openError(lockPath, error)
  }
  try {
    const problem = foreignFileProblem(lockPath, fstatSync(fd))
    if (problem) throw new DataFileError(problem)
    return Number.parseInt(readFileSync(fd, 'utf8'), 10)
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
