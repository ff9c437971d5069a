import { constants, type Stats } from 'node:fs'
import { type FileHandle, open } from 'node:fs/promises'
import { DataFileError } from './errors.ts'
import type { FileSystem } from './file-system.ts'

// Every file the store opens is opened without following a symbolic link at its name: in a directory other users
// can write to (a sticky /tmp), a planted link would otherwise make the server read, append to or truncate a file of
// the attacker's choosing. Windows has no such flag, and no such links in the way; there it is left out.
const O_NOFOLLOW = constants.O_NOFOLLOW ?? 0

/** Flags that create a new file and fail if anything, a link included, already has its name. */
export const CREATE_NEW = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | O_NOFOLLOW
/** Flags that open an existing file for reading, refusing a symbolic link. */
export const READ_EXISTING = constants.O_RDONLY | O_NOFOLLOW
/** Flags that open an existing file to append to it (and read it back), refusing a symbolic link. */
export const APPEND_EXISTING = constants.O_RDWR | constants.O_APPEND | O_NOFOLLOW
/** {@link APPEND_EXISTING}, but creating the file, which must not exist yet. */
export const APPEND_NEW = APPEND_EXISTING | constants.O_CREAT | constants.O_EXCL
/** The mode of every file the store creates: the data holds password and key hashes. */
export const FILE_MODE = 0o600

/** 16 random hex digits: a temporary file's name no one can guess and plant a file at beforehand. */
export const randomSuffix = (): string => Buffer.from(crypto.getRandomValues(new Uint8Array(8))).toString('hex')

/** This process's user, or undefined where there are no POSIX owners (Windows). */
const me = (): number | undefined => process.getuid?.()

/**
 * Why the store must not use the file at `path` described by `stats` (from `lstat`, or `fstat` after opening it),
 * or undefined when it is a regular file of this process's user with no other name. A second hard link would let
 * whoever made it have the server write into a file of theirs (or read one of ours through theirs).
 */
export function foreignFileProblem(path: string, stats: Stats): string | undefined {
  if (stats.isSymbolicLink())
    return `${path} is a symbolic link; the server never follows one to its files (someone may have planted it): remove it, or give --data the real file`
  if (!stats.isFile()) return `${path} is not a regular file`
  const uid = me()
  if (uid !== undefined && stats.uid !== uid)
    return `${path} belongs to another user (uid ${stats.uid}, this process runs as uid ${uid}); the server opens only its own files: run it as that user, or start on a copy of the file`
  if (uid !== undefined && stats.nlink > 1)
    return `${path} has ${stats.nlink} hard links; the server opens only files with one name: replace it with a copy (cp) of itself`
  return undefined
}

/** The {@link DataFileError} an `open` of `path` failed with, worded for the refused link, or `error` itself. */
export function openError(path: string, error: unknown): unknown {
  const code = (error as NodeJS.ErrnoException).code
  // Linux and macOS say ELOOP when O_NOFOLLOW meets a link, FreeBSD says EMLINK.
  if (O_NOFOLLOW !== 0 && (code === 'ELOOP' || code === 'EMLINK'))
    return new DataFileError(
      `${path} is a symbolic link; the server never follows one to its files (someone may have planted it): remove it, or give --data the real file`,
    )
  return error
}

/** Throws a {@link DataFileError} (closing `handle`) unless the file open at `handle` is one the store may use. */
export async function checkOwned(handle: FileHandle, path: string): Promise<FileHandle> {
  const problem = foreignFileProblem(path, await handle.stat())
  if (problem === undefined) return handle
  await handle.close()
  throw new DataFileError(problem)
}

/**
 * Opens the existing file at `path` with `flags` (one of the `*_EXISTING` above) through `fs`, and checks it is the
 * store's own; resolves undefined when there is no file. A link or a file of someone else's is a {@link DataFileError}.
 */
export async function openOwned(
  path: string,
  flags: number,
  fs: Pick<FileSystem, 'open'> = { open },
): Promise<FileHandle | undefined> {
  let handle: FileHandle
  try {
    handle = await fs.open(path, flags)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw openError(path, error)
  }
  return checkOwned(handle, path)
}
