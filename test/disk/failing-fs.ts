import { type FileHandle, open, rename } from 'node:fs/promises'
import { basename } from 'node:path'
import type { FileSystem } from '../../src/store/json-file/file-system.ts'

/** The step of a durable write that a fault breaks. */
export type Step = 'open' | 'write' | 'sync' | 'rename'

/** Which file a fault hits: the journal (appends), the data file (its temporary copy and the rename), or any. */
export type Target = 'journal' | 'data' | 'any'

/** One injected fault: the error a real disk gives at that step (`ENOSPC`, `EACCES`, `EPERM`, `EIO`, `EXDEV`…). */
export interface Fault {
  step: Step
  code: string
  target: Target
  /**
   * For `write`: first store half of the bytes and report success, as a disk filling up mid-write does; then either
   * the disk is full (`then-full`: the fault's error from now on) or space came back (`then-recovers`).
   */
  short?: 'then-full' | 'then-recovers'
  /** The operation the fault refuses waits for this first: a failing write still in flight while others go on. */
  until?: Promise<void>
}

const MESSAGES: Record<string, string> = {
  ENOSPC: 'no space left on device',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EIO: 'input/output error',
  EXDEV: 'cross-device link not permitted',
  EROFS: 'read-only file system',
}

/** An error shaped like node's own for `code`. */
export const errnoError = (code: string, syscall: string, path: string) =>
  Object.assign(new Error(`${code}: ${MESSAGES[code] ?? 'failed'}, ${syscall} '${path}'`), { code, syscall, path })

// The journal, and the temporary copy (`.db.json.journal.<random>.tmp`) that replaces it when it is compacted.
const isJournal = (path: string) => /\.journal(\.[0-9a-f]+\.tmp)?$/.test(basename(path))
const hits = (target: Target, path: string) => target === 'any' || (target === 'journal') === isJournal(path)

/**
 * A file system that works until a fault is armed, then fails at that step on the files it targets, as the disk
 * would, until the fault is cleared. `attempts` counts the operations the fault refused.
 */
export function faultyFileSystem() {
  const state: { fault: Fault | undefined; attempts: number } = { fault: undefined, attempts: 0 }
  const check = async (step: Step, path: string) => {
    const fault = state.fault
    if (!fault || fault.step !== step || !hits(fault.target, path) || fault.short) return
    state.attempts += 1
    await fault.until
    throw errnoError(fault.code, step, path)
  }
  const wrap = (handle: FileHandle, path: string): FileHandle =>
    new Proxy(handle, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver)
        if (property === 'write')
          return async (buffer: Uint8Array | string, offset?: number, length?: number, position?: number | null) => {
            const fault = state.fault
            if (fault?.step === 'write' && fault.short && hits(fault.target, path) && typeof buffer !== 'string') {
              const wanted = length ?? buffer.byteLength
              if (wanted > 1) {
                // Half of it lands and the call succeeds; then the disk is full, or has room again.
                state.fault = fault.short === 'then-full' ? { ...fault, short: undefined } : undefined
                state.attempts += 1
                return target.write(buffer, offset, Math.floor(wanted / 2), position)
              }
            }
            await check('write', path)
            return target.write(buffer as Uint8Array, offset, length, position)
          }
        if (property === 'sync' || property === 'datasync')
          return async () => {
            await check('sync', path)
            return target[property]()
          }
        return typeof value === 'function' ? value.bind(target) : value
      },
    })
  const fs: FileSystem = {
    open: (async (path: string, flags?: string | number, mode?: number) => {
      await check('open', String(path))
      return wrap(await open(path, flags, mode), String(path))
    }) as FileSystem['open'],
    rename: async (from, to) => {
      await check('rename', String(to))
      return rename(from, to)
    },
  }
  return {
    fs,
    state,
    /** Arms `fault`: the next matching operations fail. */
    arm(fault: Fault) {
      state.fault = fault
      state.attempts = 0
    },
    /** Clears the fault: the disk works again. */
    clear() {
      state.fault = undefined
    },
  }
}
