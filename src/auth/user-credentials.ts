import { isDead } from '../model/credential.ts'
import type { Store } from '../store/store.ts'
import type { CredentialCheck } from './guard.ts'
import { sameHash } from './secrets.ts'

/**
 * The credential check for users' bearer tokens (`Authorization: Bearer rl_tok_…`) and personal API keys
 * (`X-API-Key: rl_key_…`, or as a bearer token). A token sent as `X-API-Key`, or one expired, revoked or unknown, is
 * simply not found, so the guard answers all of them with the same 401; so are those of an account the operator disabled, and
 * bearer tokens issued under an older credentials epoch than their account's (before its password was reset). A use
 * is recorded as `lastUsedAt`.
 *
 * @example
 * const guard = authGuard([serviceKeys(apiKeys), userCredentials(store, () => new Date())])
 */
export function userCredentials(store: Store, now: () => Date): CredentialCheck {
  return async (scheme, hash) => {
    const credential = await store.credentials.findByHash(hash)
    // The map lookup is keyed by the hash, not the secret, so its timing reveals nothing usable; the constant-time
    // comparison is the check that counts.
    if (!credential || !sameHash(credential.hash, hash)) return undefined
    // A key goes in either header; a token only as a bearer token, as it was issued.
    if (scheme === 'api-key' && credential.kind !== 'key') return undefined
    const at = now()
    if (isDead(credential, at.getTime())) return undefined
    // Read on every request, so that disabling an account refuses its tokens and keys from the next request on.
    const user = await store.users.get(credential.userId)
    if (!user || user.disabledAt) return undefined
    // A token was issued on the strength of the password its account had then: one from before a reset is refused
    // even if its revocation were lost. Personal keys survive a reset by design (SECURITY.md): the user made them,
    // lists them and revokes them, and a key made by a request in flight during the reset is as one made just before.
    if (credential.kind === 'token' && credential.epoch < user.credentialsEpoch) return undefined
    store.credentials.noteUse(credential.id, at.toISOString())
    return { kind: 'user', userId: credential.userId, credentialId: credential.id, via: credential.kind }
  }
}
