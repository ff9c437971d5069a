import type { SQL } from 'bun'
import type { Credential, NewCredential } from '../../model/credential.ts'
import { makeRoom, takesCredentialAt } from '../rules.ts'
import {
  AccountChangedError,
  type CredentialLimit,
  CredentialLimitError,
  type NewEpoch,
  type UserChanges,
} from '../store.ts'
import { credentialOf, credentialRow, msOf, userOf } from './rows.ts'
import { takeIds } from './writes.ts'

/**
 * Adds a credential in `tx`. The user's row is locked first (`FOR UPDATE`), and read: unless the account is still
 * enabled and at the credentials epoch the credential carries, nothing is inserted ({@link AccountChangedError}).
 * A password reset (`startUserEpoch`) updates that row first, so it waits for an insert that locked the row before
 * it, then revokes what that insert added; an insert that comes after it reads the new epoch. Inserts for one user,
 * from any replica, take turns too: with `limit`, each purges the user's dead credentials, counts the live ones of
 * the kind, and refuses or revokes the oldest before inserting.
 */
export async function insertCredential(
  tx: SQL,
  fields: NewCredential,
  limit: CredentialLimit | undefined,
): Promise<Credential> {
  const epoch = fields.epoch ?? 0
  const [user] = await tx`SELECT credentials_epoch, disabled_at FROM rl_users WHERE id = ${fields.userId} FOR UPDATE`
  const account = user && { disabledAt: user.disabled_at, credentialsEpoch: Number(user.credentials_epoch) }
  if (!takesCredentialAt(account, epoch))
    throw new AccountChangedError(`account ${fields.userId} changed since epoch ${epoch} was read`)
  if (limit) {
    // The rule is `makeRoom` (rules.ts), as in the document store, applied to the user's rows read under the user's
    // lock: in id order, which is the order of creation. Their number is bounded by the cap itself, as each capped
    // insert purges the dead ones.
    const rows = await tx`SELECT * FROM rl_credentials WHERE user_id = ${fields.userId} ORDER BY id`
    const room = makeRoom(rows.map(credentialOf), fields, limit)
    const ids = (credentials: readonly Credential[]) =>
      tx.array(
        credentials.map((credential) => credential.id),
        'INT8',
      )
    if (room.purge.length > 0) await tx`DELETE FROM rl_credentials WHERE id = ANY(${ids(room.purge)}::bigint[])`
    if (room.refuse) throw new CredentialLimitError(limit.max)
    if (room.revoke.length > 0)
      await tx`UPDATE rl_credentials SET revoked_at = ${fields.createdAt} WHERE id = ANY(${ids(room.revoke)}::bigint[])`
  }
  // The id once the user's row is held: a user's credentials get ids in the order they commit.
  const [id] = await takeIds(tx, 'rl_credential_ids', 1)
  const row = credentialRow(id as number, fields)
  await tx`INSERT INTO rl_credentials ${tx(row)}`
  return credentialOf(row)
}

/** Marks a credential revoked at `at` unless it already was (then it stays as it was); undefined when unknown. */
export async function revokeCredential(sql: SQL, id: number, at: string): Promise<Credential | undefined> {
  const [row] = await sql`
    UPDATE rl_credentials SET revoked_at = COALESCE(revoked_at, ${at}) WHERE id = ${id} RETURNING *`
  return row ? credentialOf(row) : undefined
}

/**
 * Deletes every credential dead at `now`; how many went. Over the whole table, so in SQL: its predicate is `isDead`
 * (rules.ts) over the `expires_ms` column (`msOf`).
 */
export async function purgeCredentials(sql: SQL, now: string): Promise<number> {
  const at = msOf(now)
  const gone = await sql`DELETE FROM rl_credentials WHERE revoked_at IS NOT NULL OR expires_ms <= ${at} RETURNING id`
  return gone.length
}

/**
 * Changes the fields of `changes` in account `id`, moves its credentials epoch on and revokes its live tokens at `at`,
 * in `tx`: the user's row first, whose lock makes a concurrent credential insert wait or be waited for (see
 * {@link insertCredential}). `undefined` when there is no such user.
 */
export async function startUserEpoch(
  tx: SQL,
  id: number,
  changes: UserChanges,
  at: string,
): Promise<NewEpoch | undefined> {
  const columns: Record<string, string | null> = {}
  if (changes.passwordHash !== undefined) columns.password_hash = changes.passwordHash
  if (changes.disabledAt !== undefined) columns.disabled_at = changes.disabledAt
  const [row] =
    Object.keys(columns).length > 0
      ? await tx`UPDATE rl_users SET ${tx(columns)}, credentials_epoch = credentials_epoch + 1 WHERE id = ${id} RETURNING *`
      : await tx`UPDATE rl_users SET credentials_epoch = credentials_epoch + 1 WHERE id = ${id} RETURNING *`
  if (!row) return undefined
  return { user: userOf(row), revokedTokens: await revokeAllCredentials(tx, id, 'token', at) }
}

/**
 * Revokes, at `at`, every credential of `kind` of the user that is still live then; how many. The predicate is
 * `liveOf` (rules.ts) in SQL, so that one statement revokes them whatever their number.
 */
export async function revokeAllCredentials(
  sql: SQL,
  userId: number,
  kind: Credential['kind'],
  at: string,
): Promise<number> {
  const revoked = await sql`
    UPDATE rl_credentials SET revoked_at = ${at}
    WHERE user_id = ${userId} AND kind = ${kind} AND revoked_at IS NULL
      AND (expires_ms IS NULL OR expires_ms > ${msOf(at)})
    RETURNING id`
  return revoked.length
}
