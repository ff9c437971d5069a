/**
 * The rules both stores apply, each written once as a pure function: the document store applies them to its records,
 * the SQL store to the rows it reads (or, where a rule must run over a whole table, as SQL whose predicate this file
 * names). A rule changed here changes for both stores; a rule written again inside one store is the drift this file
 * exists to prevent.
 */
import { type Credential, isDead, type NewCredential } from '../model/credential.ts'
import type { User } from '../model/user.ts'
import type { CredentialLimit } from './store.ts'

/** The user's credentials of `kind` still live at `now` (ms since the epoch), in the order given. */
export const liveOf = (credentials: readonly Credential[], kind: Credential['kind'], now: number): Credential[] =>
  credentials.filter((credential) => credential.kind === kind && !isDead(credential, now))

/**
 * Whether a credential issued under `epoch` may be added for `user`: the account exists, is enabled, and no password
 * reset or disable has moved it to another epoch since `epoch` was read. Checked where the insert happens, so that a
 * reset or a disable is wholly before the insert or wholly after it.
 */
export const takesCredentialAt = (
  user: Pick<User, 'disabledAt' | 'credentialsEpoch'> | undefined,
  epoch: number,
): boolean => user !== undefined && user.disabledAt === null && user.credentialsEpoch === epoch

/** What the credential cap asks of a store before it inserts a new credential: see {@link makeRoom}. */
export interface Room {
  /** The user's credentials dead when the new one is made: removed on the way. */
  purge: Credential[]
  /** Live credentials of the kind to revoke (at the new one's `createdAt`), oldest first; empty when there is room. */
  revoke: Credential[]
  /** The limit is reached and its rule is to refuse: nothing is inserted (`CredentialLimitError`). */
  refuse: boolean
}

/**
 * The credential cap. `credentials` are all of the user's, in id order (the order of creation); `fields` the new one.
 * The user's dead credentials (at `fields.createdAt`) are purged; then, if the live ones of the kind leave no room
 * for one more under `limit.max`, the store either refuses or revokes the oldest, so that the new one is at most the
 * `max`th.
 */
export function makeRoom(
  credentials: readonly Credential[],
  { kind, createdAt }: Pick<NewCredential, 'kind' | 'createdAt'>,
  { max, whenFull }: CredentialLimit,
): Room {
  const at = Date.parse(createdAt)
  const purge = credentials.filter((credential) => isDead(credential, at))
  const live = liveOf(credentials, kind, at)
  const excess = live.length - max + 1
  if (excess <= 0) return { purge, revoke: [], refuse: false }
  if (whenFull === 'refuse') return { purge, revoke: [], refuse: true }
  return { purge, revoke: live.slice(0, excess), refuse: false }
}

/**
 * A new record's image: the one given, none when given as null (the seed file said "no image"), and what `cover`
 * makes for the record's kind and id when left out.
 */
export const imageOf = (
  image: string | null | undefined,
  cover: ((kind: 'artist' | 'album', id: number) => string | undefined) | undefined,
  kind: 'artist' | 'album',
  id: number,
): string | undefined => (image !== undefined ? (image ?? undefined) : cover?.(kind, id))
