import { type Sha256, sha256Hasher } from '#runtime'
import { COLLECTIONS, type StoreDocument, type StoredDocument } from '../model/store-document.ts'
import { upgradeDocument } from '../model/upgrade.ts'
import { type Problem, storeProblems } from './store-problems.ts'

/** The `format` every backup file names: a reader knows what it holds before it reads further. */
export const BACKUP_FORMAT = 'rock-legends-backup'
/** The version of the backup format this build writes; it reads this one and every earlier one. */
export const BACKUP_FORMAT_VERSION = 1

/** The kind of store a backup was taken from. */
export type StoreKind = 'json-file' | 'postgresql'

/** What a backup says about itself, ahead of its content. */
export interface BackupHeader {
  format: typeof BACKUP_FORMAT
  formatVersion: number
  /** When it was taken (ISO 8601, UTC). */
  takenAt: string
  /** What kind of store it was taken from. */
  store: StoreKind
  /** The version of the build that took it (package.json). */
  build: string
  /** `sha256:` and the hex SHA-256 of the canonical JSON of `content` (see {@link contentChecksum}). */
  checksum: string
}

/** A whole backup: its header and everything the store held (`snapshot()`). */
export interface Backup extends BackupHeader {
  content: StoreDocument
}

/** JSON with every object's keys in code-point order and no spaces: one text for one value, whatever the key order. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item ?? null)).join(',')}]`
  if (value !== null && typeof value === 'object') {
    const entries = Object.keys(value)
      .sort()
      .filter((key) => (value as Record<string, unknown>)[key] !== undefined)
      .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`)
    return `{${entries.join(',')}}`
  }
  return JSON.stringify(value) ?? 'null'
}

/** How many records a step of {@link checksumSteps} hashes before it yields. */
const RECORDS_PER_STEP = 1000

/**
 * Feeds the canonical JSON of `content` to `hasher` record by record, yielding after every thousand records so that
 * a caller serving requests can let others run in between ({@link contentChecksumSoon}).
 */
function* checksumSteps(hasher: Sha256, content: unknown): Generator<void> {
  if (content === null || typeof content !== 'object' || Array.isArray(content)) {
    hasher.update(canonicalJson(content))
    return
  }
  const record = content as Record<string, unknown>
  const keys = Object.keys(record)
    .sort()
    .filter((key) => record[key] !== undefined)
  hasher.update('{')
  for (const [index, key] of keys.entries()) {
    hasher.update(`${index > 0 ? ',' : ''}${JSON.stringify(key)}:`)
    const value = record[key]
    if (!Array.isArray(value)) {
      hasher.update(canonicalJson(value))
      continue
    }
    hasher.update('[')
    for (let at = 0; at < value.length; at++) {
      hasher.update(`${at > 0 ? ',' : ''}${canonicalJson(value[at] ?? null)}`)
      if (at % RECORDS_PER_STEP === RECORDS_PER_STEP - 1) yield
    }
    hasher.update(']')
  }
  hasher.update('}')
}

/**
 * `sha256:` and the SHA-256 of the canonical JSON of `content`: it does not depend on how the file is laid out (key
 * order, line breaks), only on what it holds. Records are fed one at a time, so no second copy of the whole is made.
 */
export function contentChecksum(content: unknown): string {
  const hasher = sha256Hasher()
  for (const _ of checksumSteps(hasher, content));
  return `sha256:${hasher.digest('hex')}`
}

/** {@link contentChecksum}, letting the event loop run between steps of a thousand records: for a serving process. */
export async function contentChecksumSoon(content: unknown): Promise<string> {
  const hasher = sha256Hasher()
  for (const _ of checksumSteps(hasher, content)) await new Promise((resolve) => setImmediate(resolve))
  return `sha256:${hasher.digest('hex')}`
}

/**
 * The text of a backup of `content`: one JSON document, its header first and then one record per line, so that it
 * reads, diffs and greps like the data file. Yields pieces, so a writer can stream it (backup-file.ts).
 */
export function* encodeBackup(
  meta: Omit<BackupHeader, 'format' | 'formatVersion' | 'checksum'> & Partial<Pick<BackupHeader, 'checksum'>>,
  content: StoreDocument,
): Generator<string> {
  const header: BackupHeader = {
    format: BACKUP_FORMAT,
    formatVersion: BACKUP_FORMAT_VERSION,
    takenAt: meta.takenAt,
    store: meta.store,
    build: meta.build,
    // Given when computed ahead, a step at a time (`contentChecksumSoon`), by a process that goes on serving.
    checksum: meta.checksum ?? contentChecksum(content),
  }
  const head = JSON.stringify(header).slice(0, -1)
  // Every key of the content, in its order (so a part a later build adds is kept, as the checksum counts it); the
  // collections one record per line.
  let first = true
  for (const [key, value] of Object.entries(content)) {
    if (value === undefined) continue
    yield `${first ? `${head},\n"content":{` : ',\n'}${JSON.stringify(key)}:`
    first = false
    if (!Array.isArray(value) || !(COLLECTIONS as readonly string[]).includes(key)) {
      yield JSON.stringify(value)
      continue
    }
    yield '['
    for (let at = 0; at < value.length; at += 1000)
      yield `${at === 0 ? '\n' : ',\n'}${value
        .slice(at, at + 1000)
        .map((record) => JSON.stringify(record ?? null))
        .join(',\n')}`
    yield value.length > 0 ? '\n]' : ']'
  }
  if (first) yield `${head},\n"content":{`
  yield '}}\n'
}

/**
 * What {@link decodeBackup} found: the backup as read (once it names the format; sound only without problems, and
 * then its content in this build's form), and every problem, with where.
 */
export interface DecodedBackup {
  backup?: Backup
  problems: Problem[]
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value)

/**
 * Reads the text of a backup and checks all of it: the header, the checksum, and every invariant of the content
 * (store-problems.ts). Every problem is named, not just the first.
 */
export function decodeBackup(text: string): DecodedBackup {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    return { problems: [{ where: '/', what: `not JSON: ${(error as Error).message}` }] }
  }
  if (!isObject(value)) return { problems: [{ where: '/', what: 'not a JSON object, so not a backup' }] }
  if (value.format !== BACKUP_FORMAT)
    return {
      problems: [
        {
          where: '/format',
          what: `is ${JSON.stringify(value.format) ?? 'missing'}, not "${BACKUP_FORMAT}": not a Rock Legends backup${isObject(value.counters) ? ' (it looks like a data file: verify it with --data FILE)' : ''}`,
        },
      ],
    }
  const problems: Problem[] = []
  const { formatVersion, takenAt, store, build, checksum, content } = value
  if (!Number.isInteger(formatVersion) || (formatVersion as number) < 1)
    problems.push({ where: '/formatVersion', what: 'must be a whole number from 1' })
  else if ((formatVersion as number) > BACKUP_FORMAT_VERSION)
    return {
      problems: [
        {
          where: '/formatVersion',
          what: `is ${formatVersion}, newer than this build reads (${BACKUP_FORMAT_VERSION}): use a later rock-legends`,
        },
      ],
    }
  if (typeof takenAt !== 'string' || Number.isNaN(Date.parse(takenAt)))
    problems.push({ where: '/takenAt', what: 'must be an ISO 8601 time' })
  if (store !== 'json-file' && store !== 'postgresql')
    problems.push({ where: '/store', what: 'must be "json-file" or "postgresql"' })
  if (typeof build !== 'string') problems.push({ where: '/build', what: 'must be a version string' })
  if (typeof checksum !== 'string' || !/^sha256:[0-9a-f]{64}$/.test(checksum))
    problems.push({ where: '/checksum', what: 'must be "sha256:" and 64 hex digits' })
  else if (content !== undefined) {
    const actual = contentChecksum(content)
    if (actual !== checksum)
      problems.push({
        where: '/checksum',
        what: `does not match the content (${actual}): the file was changed or damaged after it was written`,
      })
  }
  if (content === undefined) problems.push({ where: '/content', what: 'is missing' })
  else problems.push(...storeProblems(content, '/content'))
  // Read in this build's form, as a data file is: a backup an earlier build took may lack fields added since.
  if (problems.length === 0) value.content = upgradeDocument(content as StoredDocument)
  return { backup: value as unknown as Backup, problems }
}
