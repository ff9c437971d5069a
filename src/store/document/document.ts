import { type Static, Type as T, type TSchema } from '@sinclair/typebox'
import { type TypeCheck, TypeCompiler } from '@sinclair/typebox/compiler'
import { type Album, StoredAlbum } from '../../model/album.ts'
import { type Artist, StoredArtist } from '../../model/artist.ts'
import type { Credential, User } from '../store.ts'

const nullable = <S extends ReturnType<typeof T.String>>(schema: S) => T.Union([schema, T.Null()])
const id = T.Integer({ minimum: 1 })
const timestamp = T.String()

/** The shape of the one JSON document a data file holds. */
export const DocumentSchema = T.Object({
  version: T.Literal(1),
  counters: T.Object({ artists: T.Integer(), albums: T.Integer(), users: T.Integer(), credentials: T.Integer() }),
  artists: T.Array(StoredArtist),
  albums: T.Array(StoredAlbum),
  users: T.Array(
    T.Object({
      id,
      name: T.String(),
      email: T.String(),
      passwordHash: T.String(),
      createdAt: timestamp,
      // Optional: files and journals written before accounts could be disabled have none (see upgradeDocument).
      disabledAt: T.Optional(nullable(timestamp)),
      // Optional: files and journals written before credentials epochs have none (read as 0, see upgradeDocument).
      credentialsEpoch: T.Optional(T.Integer({ minimum: 0 })),
    }),
  ),
  credentials: T.Array(
    T.Object({
      id,
      userId: id,
      kind: T.Union([T.Literal('token'), T.Literal('key')]),
      name: nullable(T.String()),
      hash: T.String(),
      prefix: T.String(),
      createdAt: timestamp,
      expiresAt: nullable(timestamp),
      lastUsedAt: nullable(timestamp),
      revokedAt: nullable(timestamp),
      epoch: T.Optional(T.Integer({ minimum: 0 })),
    }),
  ),
})

/** The data file's document as read: records in id order and the counters that assign the next ids. */
export type StoredDocument = Static<typeof DocumentSchema>

/** The document as the store holds it, once read (see {@link upgradeDocument}). */
export type Document = Omit<StoredDocument, 'artists' | 'albums' | 'users' | 'credentials'> & {
  artists: Artist[]
  albums: Album[]
  users: User[]
  credentials: Credential[]
}

/** A fresh, empty document. */
export function emptyDocument(): Document {
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

const documentCheck = lazyCheck(DocumentSchema)

/** Explains why `value` is not a usable document, or returns `undefined` when it is. */
export function documentProblem(value: unknown): string | undefined {
  const check = documentCheck()
  // The compiled check is fast; the error walk is not, so it only runs for a document that failed.
  if (!check.Check(value)) {
    const first = check.Errors(value).First()
    return first ? `${first.path || '/'}: ${first.message}` : 'not a document'
  }
  const doc = value as Document
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
  return undefined
}

const hasNull = (record: object) => Object.values(record).includes(null)

/**
 * The document with the null fields of its artists and albums left out, the form the store holds and serves: data
 * files and journals written by version 0.1 said null for an unset field. Records without a null are kept as they are,
 * so a current file costs one pass and no copies.
 */
export function withoutNulls(document: StoredDocument): Document {
  for (const records of [document.artists, document.albums] as object[][])
    for (let i = 0; i < records.length; i++) {
      const record = records[i] as object
      if (hasNull(record)) records[i] = Object.fromEntries(Object.entries(record).filter(([, value]) => value !== null))
    }
  return document as Document
}

/**
 * The document in the form the store holds: artists and albums without nulls (see {@link withoutNulls}), every user
 * with its `disabledAt` (null when a file or journal written before accounts could be disabled has none) and its
 * `credentialsEpoch`, and every credential with its `epoch` (0 when written before credentials epochs). Records that
 * have them are kept as they are.
 */
export function upgradeDocument(document: StoredDocument): Document {
  const users = document.users as { disabledAt?: string | null; credentialsEpoch?: number }[]
  for (let i = 0; i < users.length; i++) {
    const user = users[i] as { disabledAt?: string | null; credentialsEpoch?: number }
    if (user.disabledAt === undefined || user.credentialsEpoch === undefined)
      users[i] = { ...user, disabledAt: user.disabledAt ?? null, credentialsEpoch: user.credentialsEpoch ?? 0 }
  }
  const credentials = document.credentials as { epoch?: number }[]
  for (let i = 0; i < credentials.length; i++) {
    const credential = credentials[i] as { epoch?: number }
    if (credential.epoch === undefined) credentials[i] = { ...credential, epoch: 0 }
  }
  return withoutNulls(document)
}
