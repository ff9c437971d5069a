import type { SQL } from 'bun'
import { type Credential, type CredentialLimit, CredentialLimitError, type New } from '../store.ts'
import { credentialOf, credentialRow, msOf } from './rows.ts'
import { takeIds } from './writes.ts'

/**
 * Adds a credential in `tx`. With `limit`, the user's row is locked first (`FOR UPDATE`), so that concurrent inserts
 * for one user, from any replica, take turns: each purges the user's dead credentials, counts the live ones of the
 * kind, and refuses or revokes the oldest before inserting.
 */
export async function insertCredential(
  tx: SQL,
  fields: New<Credential>,
  limit: CredentialLimit | undefined,
): Promise<Credential> {
  if (limit) {
    await tx`SELECT id FROM rl_users WHERE id = ${fields.userId} FOR UPDATE`
    const at = msOf(fields.createdAt)
    await tx`
      DELETE FROM rl_credentials
      WHERE user_id = ${fields.userId} AND (revoked_at IS NOT NULL OR expires_ms <= ${at})`
    // What is left is live; oldest first, as ids are given in order of creation.
    const live =
      await tx`SELECT id FROM rl_credentials WHERE user_id = ${fields.userId} AND kind = ${fields.kind} ORDER BY id`
    const excess = live.length - limit.max + 1
    if (excess > 0) {
      if (limit.whenFull === 'refuse') throw new CredentialLimitError(limit.max)
      const oldest = live.slice(0, excess).map((row: { id: string }) => row.id)
      await tx`UPDATE rl_credentials SET revoked_at = ${fields.createdAt} WHERE id = ANY(${tx.array(oldest, 'INT8')}::bigint[])`
    }
  }
  const row = credentialRow(await takeIds(tx, 'credentials', 1), fields)
  await tx`INSERT INTO rl_credentials ${tx(row)}`
  return credentialOf(row)
}

/** Marks a credential revoked at `at` unless it already was (then it stays as it was); undefined when unknown. */
export async function revokeCredential(sql: SQL, id: number, at: string): Promise<Credential | undefined> {
  const [row] = await sql`
    UPDATE rl_credentials SET revoked_at = COALESCE(revoked_at, ${at}) WHERE id = ${id} RETURNING *`
  return row ? credentialOf(row) : undefined
}

/** Deletes every credential dead at `now`; how many went. */
export async function purgeCredentials(sql: SQL, now: string): Promise<number> {
  const at = msOf(now)
  const gone = await sql`DELETE FROM rl_credentials WHERE revoked_at IS NOT NULL OR expires_ms <= ${at} RETURNING id`
  return gone.length
}

/** Revokes, at `at`, every credential of `kind` of the user that is still live then; how many. */
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
