import { KEY_PREFIX, TOKEN_PREFIX } from '../auth/secrets.ts'
import { emailKey } from '../model/email.ts'
import { fieldDetail, type ValueErrorLike } from '../model/field-detail.ts'
import { passwordHashProblem } from '../model/password-hash.ts'
import { COLLECTIONS, StoreDocument } from '../model/store-document.ts'
import { lazyCheck } from '../store/document/document.ts'

/** One thing wrong with a store's content: where (a JSON pointer into it, or a file and line), and what. */
export interface Problem {
  where: string
  what: string
}

/** The most schema errors named for one document: past that, the file is not a store at all. */
const MAX_SCHEMA_ERRORS = 100

const documentCheck = lazyCheck(StoreDocument)
/** The SHA-256 of a token's or key's secret, hex-encoded (auth/secrets.ts). */
const SECRET_HASH = /^[0-9a-f]{64}$/

const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value)

const records = (value: Record<string, unknown>, name: string): Record<string, unknown>[] =>
  Array.isArray(value[name]) ? (value[name] as unknown[]).filter(isObject) : []

/**
 * Every problem of a store's content (a data file's document, a snapshot, a backup's content), each with where it is
 * under `at`: what the document's schema refuses (`StoreDocument`, which the server checks a data file against at start-up), ids unique and
 * increasing in each collection, each counter at or past every id of its collection (ids are never reused), every
 * album's artist and every credential's user present, emails unique in their folded form (what the database's index
 * enforces), password hashes argon2id PHC strings at no more cost than this server's (model/password-hash.ts), and
 * credential hashes hex SHA-256 under a prefix of their kind. The schema holds every field to the API's own rules:
 * no U+0000 or unpaired surrogate, the lengths and patterns a client's value must have, ids and counters safe
 * integers.
 * Records are otherwise read generically: a field a later build adds is left to the schema.
 */
export function storeProblems(value: unknown, at = ''): Problem[] {
  const problems: Problem[] = []
  const add = (where: string, what: string) => problems.push({ where: `${at}${where}`, what })
  if (!documentCheck().Check(value)) {
    const seen = new Set<string>()
    for (const error of documentCheck().Errors(value)) {
      // A union reports each of its branches: one line per place is enough to find it.
      if (seen.has(error.path)) continue
      seen.add(error.path)
      if (seen.size > MAX_SCHEMA_ERRORS) {
        add('', `more problems of shape than the first ${MAX_SCHEMA_ERRORS} named here`)
        break
      }
      add(error.path || '/', fieldDetail(error as ValueErrorLike))
    }
  }
  if (!isObject(value)) return problems
  const counters = isObject(value.counters) ? value.counters : {}
  const ids: Record<string, Set<number>> = {}
  for (const name of COLLECTIONS) {
    const known = new Set<number>()
    ids[name] = known
    const counter = counters[name]
    let previous: number | undefined
    records(value, name).forEach((record, index) => {
      const id = record.id
      if (typeof id !== 'number') return
      if (known.has(id)) add(`/${name}/${index}/id`, `id ${id} is used twice: ids must be unique`)
      else if (previous !== undefined && id < previous)
        add(`/${name}/${index}/id`, `id ${id} comes after id ${previous}: ids must be in increasing order`)
      if (typeof counter === 'number' && id > counter)
        add(
          `/${name}/${index}/id`,
          `id ${id} is past /counters/${name} (${counter}): a new record would be given an id already in use`,
        )
      known.add(id)
      previous = previous === undefined ? id : Math.max(previous, id)
    })
  }
  records(value, 'albums').forEach((album, index) => {
    if (typeof album.artistId === 'number' && !ids.artists?.has(album.artistId))
      add(`/albums/${index}/artistId`, `album ${album.id} belongs to artist ${album.artistId}, which does not exist`)
  })
  const emails = new Map<string, unknown>()
  records(value, 'users').forEach((user, index) => {
    const hashProblem = typeof user.passwordHash === 'string' ? passwordHashProblem(user.passwordHash) : undefined
    if (hashProblem) add(`/users/${index}/passwordHash`, `user ${user.id}'s password hash ${hashProblem}`)
    if (typeof user.email !== 'string') return
    const key = emailKey(user.email)
    const other = emails.get(key)
    if (other !== undefined)
      add(`/users/${index}/email`, `user ${user.id} has the email of user ${other} (compared in its folded form)`)
    else emails.set(key, user.id)
  })
  records(value, 'credentials').forEach((credential, index) => {
    const which = `credential ${credential.id}`
    if (typeof credential.userId === 'number' && !ids.users?.has(credential.userId))
      add(`/credentials/${index}/userId`, `${which} belongs to user ${credential.userId}, which does not exist`)
    if (typeof credential.hash === 'string' && !SECRET_HASH.test(credential.hash))
      add(`/credentials/${index}/hash`, `${which}'s hash is not a hex SHA-256 (64 lowercase hex digits)`)
    const prefix = credential.kind === 'token' ? TOKEN_PREFIX : credential.kind === 'key' ? KEY_PREFIX : undefined
    if (prefix && typeof credential.prefix === 'string' && !credential.prefix.startsWith(prefix))
      add(`/credentials/${index}/prefix`, `${which} is a ${credential.kind} whose prefix does not start with ${prefix}`)
  })
  return problems
}
