/**
 * A user's credential, a bearer token or a personal API key: the one model from which the key's request body and
 * answers, the credential as both stores keep it, the data file's check and the documentation derive.
 */
import { type Static, Type } from '@sinclair/typebox'
import { acceptedProperties, servedProperties } from './form.ts'
import { SHORT_NAME_RULES, STORED_ID } from './rules.ts'

/** Each field of a personal API key as listed, served and documented. */
const fields = {
  name: Type.String({ examples: ['CI pipeline'] }),
  prefix: Type.String({ description: 'The first characters of the key, to recognise it.', examples: ['rl_key_AbCd'] }),
  created_at: Type.String({ format: 'date-time' }),
  last_used_at: Type.String({ format: 'date-time', description: 'Left out until the key is first used.' }),
}

/** The body of `POST /api/v1/user/api-keys`. */
export const ApiKeyInput = Type.Object(
  acceptedProperties(
    { name: fields.name },
    { name: { ...SHORT_NAME_RULES, description: 'What the key is for, to recognise it in the list; trimmed.' } },
    ['name'],
  ),
  { additionalProperties: false, examples: [{ name: 'CI pipeline' }] },
)

const served = {
  id: Type.Integer({ format: 'int64', description: 'Assigned by the service; never reused.', examples: [3] }),
  ...servedProperties(fields, ['name', 'prefix', 'created_at']),
}

/** A personal API key as listed: never the key itself. */
export const ApiKey = Type.Object(served, { description: 'A personal API key, without the key itself.' })

/** A personal API key just created, with the key: the only time it is shown. */
export const NewApiKey = Type.Object(
  {
    ...served,
    key: Type.String({
      description: 'The key, shown only now: send it as `X-API-Key: <key>`. Only its hash is kept.',
      examples: ['rl_key_AbCd9Lm2Qx7Rt4Vw1Yz6Bn3Ks8Pf5Hj0'],
    }),
  },
  { description: 'A personal API key just created, with the key: the only time it is shown.' },
)

const timestamp = Type.String()
const nullable = <S extends typeof timestamp>(schema: S) => Type.Union([schema, Type.Null()])
// The credentials epoch of its account that it was issued under (see `User`).
const epoch = Type.Integer({ minimum: 0 })

/** A bearer token or personal API key of a user as both stores hold it: only the SHA-256 hash of its secret. */
export const Credential = Type.Object({
  id: STORED_ID,
  userId: STORED_ID,
  kind: Type.Union([Type.Literal('token'), Type.Literal('key')]),
  name: nullable(Type.String()),
  hash: Type.String(),
  prefix: Type.String(),
  createdAt: timestamp,
  expiresAt: nullable(timestamp),
  lastUsedAt: nullable(timestamp),
  revokedAt: nullable(timestamp),
  epoch,
})

/** A credential, as the stores hold it. */
export type Credential = Static<typeof Credential>

/** A credential as a data file, a journal or a backup may hold it: those written before epochs have none (upgrade.ts). */
export const StoredCredential = Type.Object({
  ...Credential.properties,
  name: nullable(Type.String(SHORT_NAME_RULES)),
  epoch: Type.Optional(epoch),
})

/**
 * The fields of a new credential. `epoch` is the account's credentials epoch as its issuer read it, before the check
 * the credential is issued on (the password, the caller's credential); left out, it is 0, the first, which can only
 * make the insert refused, never let one through that should not be.
 */
export type NewCredential = Omit<Credential, 'id' | 'epoch'> & { epoch?: number }

/**
 * Whether a credential can never be used again at `now` (ms since the epoch): revoked, or expired. An expiry that is
 * not a date never comes (`Date.parse` gives NaN); the SQL store's `expires_ms` column is null then (`msOf`), and its
 * purge (`revoked_at IS NOT NULL OR expires_ms <= now`) is this predicate over the whole table.
 */
export const isDead = (credential: Credential, now: number): boolean =>
  credential.revokedAt !== null || (credential.expiresAt !== null && Date.parse(credential.expiresAt) <= now)
