import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { DataFileLockedError } from './errors.ts'

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

/**
 * Claims `file` for this process with a `FILE.lock` beside it holding our pid. A lock left by a process that no
 * longer runs (after `kill -9` or a power cut) is taken over. Returns the function that releases the claim.
 */
export function lockDataFile(file: string): () => void {
  const lockPath = `${file}.lock`
  if (heldHere.has(lockPath)) throw new DataFileLockedError(`${file} is already open in this process`)
  for (let attempt = 0; ; attempt++) {
    try {
      writeFileSync(lockPath, `${process.pid}\n`, { flag: 'wx' })
      break
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 0) throw error
      const owner = Number.parseInt(readFileSync(lockPath, 'utf8'), 10)
      if (Number.isInteger(owner) && owner !== process.pid && alive(owner))
        throw new DataFileLockedError(
          `${file} is in use by another rock-legends process (pid ${owner}); stop it or choose another --data file`,
        )
      rmSync(lockPath, { force: true })
    }
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
