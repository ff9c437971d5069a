import { existsSync, readFileSync } from 'node:fs'
import { type FileHandle, rm } from 'node:fs/promises'
import { basename, dirname, join, resolve } from 'node:path'
import { syncDirectory } from '../store/json-file/durable-file.ts'
import { nodeFileSystem, writeAll } from '../store/json-file/file-system.ts'
import { CREATE_NEW, FILE_MODE, openError, randomSuffix } from '../store/json-file/owned-file.ts'
import { type DecodedBackup, decodeBackup } from './backup-format.ts'

/** Raised when a backup file cannot be written or read: the command says so in one line and exits 1. */
export class BackupFileError extends Error {
  override name = 'BackupFileError'
}

/**
 * Writes the pieces of a backup (`encodeBackup`, or the text a server streams) to `path` so that the name only ever holds a whole backup: into a
 * temporary file of a name no one can guess, created exclusively and readable by this user alone (it holds password
 * hashes), fsynced, renamed onto `path`, and the directory fsynced. A failure at any point leaves no file under
 * `path` (and removes the temporary one). An existing `path` is refused: a backup never replaces a file.
 */
export async function writeBackupFile(path: string, pieces: Iterable<string> | AsyncIterable<string>): Promise<void> {
  const target = resolve(path)
  if (existsSync(target)) throw new BackupFileError(`${path} exists already: choose a new name (or remove it first)`)
  const temp = join(dirname(target), `.${basename(target)}.${randomSuffix()}.tmp`)
  let handle: FileHandle
  try {
    handle = await nodeFileSystem.open(temp, CREATE_NEW, FILE_MODE)
  } catch (error) {
    throw new BackupFileError(`cannot write ${path}: ${(openError(temp, error) as Error).message}`)
  }
  try {
    try {
      let batch: string[] = []
      let size = 0
      for await (const piece of pieces) {
        batch.push(piece)
        size += piece.length
        if (size < 1 << 20) continue
        await writeAll(handle, Buffer.from(batch.join('')))
        batch = []
        size = 0
      }
      await writeAll(handle, Buffer.from(batch.join('')))
      await handle.sync()
    } finally {
      await handle.close()
    }
    // Checked again at the last moment: another command may have written the name meanwhile.
    if (existsSync(target)) throw new BackupFileError(`${path} exists already: choose a new name (or remove it first)`)
    await nodeFileSystem.rename(temp, target)
  } catch (error) {
    await rm(temp, { force: true })
    if (error instanceof BackupFileError) throw error
    throw new BackupFileError(`cannot write ${path}: ${(error as Error).message}`)
  }
  await syncDirectory(dirname(target))
}

/** Reads and checks the backup at `path` (see `decodeBackup`); a file that cannot be read is one problem. */
export function readBackupFile(path: string): DecodedBackup {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (error) {
    return { problems: [{ where: path, what: `cannot be read: ${(error as Error).message}` }] }
  }
  return decodeBackup(text)
}
