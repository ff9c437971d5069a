import type { TSchema } from '@sinclair/typebox'
import { type TypeCheck, TypeCompiler } from '@sinclair/typebox/compiler'
import { fieldDetail, type ValueErrorLike } from '../../model/field-detail.ts'
import { passwordHashProblem } from '../../model/password-hash.ts'
import { StoreDocument } from '../../model/store-document.ts'

/**
 * `document` in new lists and counters, sharing its records: enough for a copy that later writes leave as it is, since
 * no record is ever edited in place (records.ts freezes every record the store holds).
 */
export function copyLists({
  version,
  counters,
  artists,
  albums,
  users,
  credentials,
  history,
}: StoreDocument): StoreDocument {
  return {
    version,
    counters: { ...counters },
    artists: [...artists],
    albums: [...albums],
    users: [...users],
    credentials: [...credentials],
    ...(history && { history: [...history] }),
  }
}

/** A fresh, empty document. */
export function emptyDocument(): StoreDocument {
  return {
    version: 1,
    counters: { artists: 0, albums: 0, users: 0, credentials: 0 },
    artists: [],
    albums: [],
    users: [],
    credentials: [],
  }
}

/**
 * A TypeBox check compiled on its first use rather than at start-up, which then stays short (bench/startup.ts): a
 * new, empty data file never needs its checks.
 */
export function lazyCheck<S extends TSchema>(schema: S): () => TypeCheck<S> {
  let compiled: TypeCheck<S> | undefined
  return () => {
    compiled ??= TypeCompiler.Compile(schema)
    return compiled
  }
}

const documentCheck = lazyCheck(StoreDocument)

/** Explains why `value` is not a usable document, or returns `undefined` when it is. */
export function documentProblem(value: unknown): string | undefined {
  const check = documentCheck()
  // The compiled check is fast; the error walk is not, so it only runs for a document that failed.
  if (!check.Check(value)) {
    const first = check.Errors(value).First()
    // Worded as the API words a refused field: a value the API refuses is refused here too, for the same reason.
    return first ? `${first.path || '/'}: ${fieldDetail(first as ValueErrorLike)}` : 'not a document'
  }
  const doc = value as StoreDocument
  for (const name of ['artists', 'albums', 'users', 'credentials'] as const) {
    const records: { id: number }[] = doc[name]
    for (let i = 0; i < records.length; i++) {
      const current = records[i] as { id: number }
      // Ids must increase (lists are served in id order) and stay below the counter (ids are never reused).
      if (i > 0 && current.id <= (records[i - 1] as { id: number }).id)
        return `/${name}/${i}/id: ids must be unique and in increasing order`
      if (current.id > doc.counters[name]) return `/${name}/${i}/id: greater than /counters/${name}`
    }
  }
  // A hash that costs more than a login may spend would make every login for its account that slow.
  for (let i = 0; i < doc.users.length; i++) {
    const problem = passwordHashProblem((doc.users[i] as { passwordHash: string }).passwordHash)
    if (problem) return `/users/${i}/passwordHash: ${problem}`
  }
  return undefined
}
