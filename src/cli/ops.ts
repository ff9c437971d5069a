import { existsSync } from 'node:fs'
import { rm } from 'node:fs/promises'
import { dirname, join, resolve } from 'node:path'
import pkg from '../../package.json' with { type: 'json' }
import { printErrorLine, printLine } from '../log.ts'
import type { StoreDocument } from '../model/store-document.ts'
import { BackupFileError, readBackupFile, writeBackupFile } from '../ops/backup-file.ts'
import { encodeBackup, type StoreKind } from '../ops/backup-format.ts'
import { refuseConnectedDatabase, refuseOwnedFile as refuseOwned } from '../ops/owners.ts'
import { readDataFile } from '../ops/read-data-file.ts'
import { RefusedError } from '../ops/refused-error.ts'
import { count, listProblems, storeName as named } from '../ops/report.ts'
import { asideName } from '../ops/restore-data-file.ts'
import { type Problem, storeProblems } from '../ops/store-problems.ts'
import { DataFileError, DataFileLockedError } from '../store/json-file/errors.ts'
import { isDatabaseUrl } from '../store/open-store.ts'
import { StoreUnavailableError } from '../store/store.ts'
import type { OpsConfig } from './ops-args.ts'

/** Everything the store `data` holds, read whole, and the kind of store; refuses one with problems. */
async function readStore(data: string): Promise<{ content: StoreDocument; store: StoreKind }> {
  if (isDatabaseUrl(data)) {
    const { openDatabase, readDatabase } = await import('../ops/database.ts')
    const store = await openDatabase(data)
    let content: StoreDocument
    try {
      content = await readDatabase(store)
    } finally {
      await store.close()
    }
    const problems = storeProblems(content)
    if (problems.length > 0) {
      listProblems(await named(data), problems)
      throw new RefusedError(`${await named(data)} has problems (above), so no backup was written`)
    }
    return { content, store: 'postgresql' }
  }
  // Reached when the server that owns the file did not say where it listens (see `backupThroughServer`).
  await refuseOwned(
    data,
    'it did not record its address in the lock (a server older than this command, or one still starting): stop it, or try again in a moment',
  )
  if (!existsSync(data)) throw new RefusedError(`${data} does not exist`)
  const { lockDataFile } = await import('../store/json-file/lock.ts')
  // Held while reading, so that no server starts and changes the file halfway.
  let release: () => void
  try {
    release = lockDataFile(resolve(data))
  } catch (error) {
    if (error instanceof DataFileError || error instanceof DataFileLockedError) throw error
    throw new RefusedError(`cannot take the lock of ${data}: ${(error as Error).message}`)
  }
  try {
    const read = readDataFile(resolve(data))
    if (!read.exists && read.problems.length === 0) throw new RefusedError(`${data} does not exist`)
    if (!read.document || read.problems.length > 0) {
      listProblems(data, read.problems)
      throw new RefusedError(
        `${data} has problems (above), so no backup was written: rock-legends verify --data ${data}`,
      )
    }
    return { content: read.document, store: 'json-file' }
  } finally {
    release()
  }
}

async function verify(config: OpsConfig): Promise<number> {
  if (config.file !== undefined) {
    const { backup, problems } = readBackupFile(config.file)
    if (backup)
      printLine(
        `${config.file}: ${backup.format} ${backup.formatVersion}, taken ${backup.takenAt} from a ${backup.store} store by rock-legends ${backup.build}`,
      )
    if (problems.length > 0 || !backup) {
      listProblems(config.file, problems)
      return 1
    }
    printLine(`${config.file} is sound: ${count(backup.content)}; checksum ${backup.checksum}`)
    return 0
  }
  const data = config.data as string
  let content: StoreDocument | undefined
  let problems: Problem[]
  if (isDatabaseUrl(data)) {
    const { openDatabase, readDatabase } = await import('../ops/database.ts')
    const store = await openDatabase(data)
    try {
      content = await readDatabase(store)
    } finally {
      await store.close()
    }
    problems = storeProblems(content)
  } else {
    const read = readDataFile(resolve(data))
    for (const note of read.notes) printLine(`note: ${note}`)
    problems = read.exists || read.problems.length > 0 ? read.problems : [{ where: data, what: 'does not exist' }]
    content = read.document
  }
  const name = await named(data)
  if (problems.length > 0 || !content) {
    listProblems(name, problems)
    return 1
  }
  printLine(`${name} is sound: ${count(content)}`)
  return 0
}

/** How long a running server may take to stream a backup: it sends the first bytes once its checksum is made. */
const SERVER_BACKUP_TIMEOUT_MS = 10 * 60_000

/**
 * Takes the backup through the server at `url` that owns the data file (`GET /__admin/backup`, with the key it left in
 * the lock): it goes on serving meanwhile, and the backup holds every write it acknowledged before. The file is read
 * back and checked like any backup before the command says it is done; a bad one is removed.
 */
async function backupThroughServer(file: string, url: string, key: string, pid: number | undefined): Promise<string> {
  let response: Response
  try {
    response = await fetch(new URL('/__admin/backup', url), {
      headers: { 'x-api-key': key },
      redirect: 'manual',
      signal: AbortSignal.timeout(SERVER_BACKUP_TIMEOUT_MS),
    })
  } catch (error) {
    throw new RefusedError(`cannot reach the server at ${url} (pid ${pid}): ${(error as Error).message}`)
  }
  if (response.status !== 200 || !response.body) {
    const detail = await response.text().then(
      (text) => (JSON.parse(text) as { detail?: string }).detail ?? text,
      () => '',
    )
    throw new RefusedError(`the server at ${url} (pid ${pid}) answered ${response.status}: ${detail}`)
  }
  await writeBackupFile(file, response.body.pipeThrough(new TextDecoderStream()))
  const { backup, problems } = readBackupFile(file)
  if (!backup || problems.length > 0) {
    listProblems(file, problems)
    await rm(file, { force: true })
    throw new RefusedError(`the backup the server at ${url} sent has problems (above): it was not kept`)
  }
  return `backed up ${file} through the server at ${url} (pid ${pid}), which kept serving: ${count(backup.content)}`
}

async function backup(config: OpsConfig): Promise<number> {
  const file = config.file as string
  const data = config.data as string
  const target = resolve(file)
  if (!isDatabaseUrl(data) && [data, `${data}.journal`, `${data}.lock`].some((path) => resolve(path) === target))
    throw new RefusedError(`${file} is the data file or one of its companions: write the backup elsewhere`)
  if (!isDatabaseUrl(data)) {
    // A data file a running server owns is backed up through that server, at the address it left in the lock.
    const { lockOwner } = await import('../store/json-file/lock.ts')
    const owner = lockOwner(resolve(data))
    if (owner?.running && owner.url && owner.key) {
      printLine(await backupThroughServer(file, owner.url, owner.key, owner.pid))
      return 0
    }
  }
  const { content, store } = await readStore(data)
  await writeBackupFile(file, encodeBackup({ takenAt: new Date().toISOString(), store, build: pkg.version }, content))
  printLine(`backed up ${await named(data)} to ${file}: ${count(content)}`)
  return 0
}

async function restore(config: OpsConfig): Promise<number> {
  const file = config.file as string
  const data = config.data as string
  const { backup: read, problems } = readBackupFile(file)
  if (problems.length > 0 || !read) {
    listProblems(file, problems)
    throw new RefusedError(`${file} is not a sound backup (above): nothing was changed`)
  }
  const content = read.content
  if (!isDatabaseUrl(data)) {
    await refuseOwned(data, 'a restore replaces a store only while no server uses it; stop the server first')
    const { restoreDataFile } = await import('../ops/restore-data-file.ts')
    let aside: string[]
    try {
      aside = await restoreDataFile(data, content)
    } catch (error) {
      if (error instanceof DataFileError || error instanceof DataFileLockedError) throw error
      // Every step leaves the old data or the new: a failure before the last rename leaves the old.
      throw new RefusedError(
        `the restore stopped: ${(error as Error).message}; ${data} holds the old data or the new, never a mix (rock-legends verify --data ${data} says which is sound)`,
      )
    }
    printLine(`restored ${file} into ${data}: ${count(content)}`)
    printLine(
      aside.length > 0
        ? `the data it replaced is kept in ${aside.join(' and ')}`
        : `${data} did not exist before: nothing was replaced`,
    )
    return 0
  }
  const { forgetResetPoint, openDatabase, readDatabase, restoreDatabase } = await import('../ops/database.ts')
  const name = await named(data)
  await refuseConnectedDatabase(
    data,
    'a restore replaces a store only while no server uses it; stop the replicas first',
  )
  const store = await openDatabase(data)
  try {
    const old = await readDatabase(store)
    const aside = join(dirname(resolve(file)), `${asideName('rock-legends', new Date())}.json`)
    // The old content is saved whole before anything is changed: a failure here changes nothing.
    await writeBackupFile(
      aside,
      encodeBackup({ takenAt: new Date().toISOString(), store: 'postgresql', build: pkg.version }, old),
    )
    // The reset point (--allow-reset) was taken of the data replaced: a replica would otherwise reset to it.
    await forgetResetPoint(data)
    await restoreDatabase(store, content)
    printLine(`restored ${file} into ${name}: ${count(content)}, in one transaction`)
    printLine(`the data it replaced is kept in ${aside} (a backup: rock-legends restore ${aside} --data …)`)
  } finally {
    await store.close()
  }
  return 0
}

/**
 * `rock-legends verify|backup|restore|copy …`: runs the command, prints what it did (or each problem) on stdout and a
 * refusal as one line on stderr, and resolves with the exit code: 0 done (sound), 1 refused or problems found.
 */
export async function opsCommand(config: OpsConfig): Promise<number> {
  try {
    if (config.command === 'verify') return await verify(config)
    if (config.command === 'backup') return await backup(config)
    if (config.command === 'copy') {
      const { copyStore } = await import('../ops/copy.ts')
      await copyStore({ from: config.from as string, to: config.to as string, replace: config.replace })
      return 0
    }
    return await restore(config)
  } catch (error) {
    if (
      error instanceof RefusedError ||
      error instanceof BackupFileError ||
      error instanceof DataFileError ||
      error instanceof DataFileLockedError ||
      error instanceof StoreUnavailableError
    ) {
      printErrorLine(`rock-legends ${config.command}: ${(error as Error).message}`)
      return 1
    }
    throw error
  }
}
