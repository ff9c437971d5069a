/**
 * The user account: the one model from which the sign-up and login bodies, the user as the API shows it, the account
 * as both stores keep it, the data file's check and the documentation derive.
 */
import { type Static, Type } from '@sinclair/typebox'
import { EMAIL_PATTERN } from './email.ts'
import { acceptedProperties, servedProperties } from './form.ts'
import { RECORD_ID, SHORT_NAME_RULES, STORABLE, STORED_ID } from './rules.ts'

/** Each field of an account a client sends or is shown, as served and documented. */
const fields = {
  name: Type.String({ examples: ['Carlos'] }),
  email: Type.String({
    description: 'As typed at sign-up, trimmed and lower-cased.',
    examples: ['carlos@rock-legends.com'],
  }),
  password: Type.String(),
}

/** The rule of an email address a client sends; `description` says what the address is for. */
export const emailRules = (description: string) => ({
  maxLength: 254,
  pattern: EMAIL_PATTERN,
  description,
  error: 'an email address such as carlos@rock-legends.com, at most 254 characters',
})

/** What a client's value must also be at sign-up, field by field. */
const signupRules = {
  name: { ...SHORT_NAME_RULES, description: 'How the user is called; trimmed.' },
  email: emailRules(
    'The address to log in with; trimmed and lower-cased. Unique among users once look-alike forms are folded: full-width, decomposed and differently-cased forms of one address (NFKC, then lower case) are the same address.',
  ),
  password: {
    minLength: 8,
    maxLength: 1024,
    pattern: STORABLE,
    description: 'At least 8 characters (at most 1,024). Stored only as an argon2id hash.',
    examples: ['i-love-rock'],
  },
}

/** What a client's value must also be at login. */
const loginRules = {
  email: emailRules(
    'The address used at sign-up; case, surrounding spaces and look-alike forms (full-width, decomposed: NFKC) do not matter.',
  ),
  password: { minLength: 1, maxLength: 1024, pattern: STORABLE, description: 'The password chosen at sign-up.' },
}

/** The body of `POST /api/v1/user/signup`, and what the operator gives to add an account. */
export const SignupInput = Type.Object(acceptedProperties(fields, signupRules, ['name', 'email', 'password']), {
  additionalProperties: false,
  examples: [
    { name: 'Carlos', email: 'carlos@rock-legends.com', password: 'i-love-rock' },
    { name: 'Maria', email: 'maria@rock-legends.com', password: 'rock-n-roll' },
  ],
})

/** What a client sends to sign up. */
export type SignupInput = Static<typeof SignupInput>

/** The body of `POST /api/v1/user/login`. */
export const LoginInput = Type.Object(
  acceptedProperties({ email: fields.email, password: fields.password }, loginRules, ['email', 'password']),
  { additionalProperties: false, examples: [{ email: 'carlos@rock-legends.com', password: 'i-love-rock' }] },
)

/** A user as the API shows it: never the password or its hash. */
export const PublicUser = Type.Object(
  { id: RECORD_ID, ...servedProperties({ name: fields.name, email: fields.email }, ['name', 'email']) },
  { description: 'A user of the service; never the password or its hash.' },
)

/** A user as the API shows it. */
export type PublicUser = Static<typeof PublicUser>

/** The answer to a successful login. */
export const Session = Type.Object(
  {
    user: PublicUser,
    token: Type.String({
      description: 'The bearer token, shown only now: send it as `Authorization: Bearer <token>`.',
      examples: ['rl_tok_8fKq2ZyW0pLxT4vB7nCdE1gHjM3sR5uA'],
    }),
    token_type: Type.Literal('Bearer', { description: 'How to send the token.' }),
    expires_at: Type.String({
      format: 'date-time',
      description: 'When the token stops working.',
      examples: ['2026-11-23T11:00:00.000Z'],
    }),
  },
  { description: 'A signed-in session: who you are and the bearer token to act as you.' },
)

const timestamp = Type.String()

// What the stores keep of an account besides what the API shows.
const disabledAt = Type.Union([timestamp, Type.Null()])
const credentialsEpoch = Type.Integer({ minimum: 0 })

/**
 * A registered user as both stores hold it; the password is kept only as an argon2id hash. `disabledAt` is when the
 * operator disabled the account (`rock-legends users disable`), or null: a disabled account cannot log in and its
 * tokens and keys are refused. `credentialsEpoch` is moved on (by `users.startEpoch`) when what was issued on the
 * strength of the account as it was must end, a password reset: a credential is stored only while its account is
 * still at the epoch its issuer read before checking the password (see `credentials.insert`), and a bearer token of
 * an older epoch is refused at use. New accounts start at 0.
 */
export const User = Type.Object({
  id: STORED_ID,
  name: Type.String(),
  email: Type.String(),
  passwordHash: Type.String(),
  createdAt: timestamp,
  disabledAt,
  credentialsEpoch,
})

/** A registered user, as the stores hold it. */
export type User = Static<typeof User>

/**
 * A user as a data file, a journal or a backup may hold it: files written before accounts could be disabled have no
 * `disabledAt`, and those written before credentials epochs no `credentialsEpoch` (see upgrade.ts).
 */
export const StoredUser = Type.Object({
  ...User.properties,
  // Held to what sign-up accepts; the hash's form and cost are checked apart (model/password-hash.ts).
  name: Type.String(SHORT_NAME_RULES),
  email: Type.String(emailRules('As typed at sign-up, trimmed and lower-cased.')),
  disabledAt: Type.Optional(disabledAt),
  credentialsEpoch: Type.Optional(credentialsEpoch),
})

/** The fields of a new account: the store assigns the id, and every account starts at credentials epoch 0. */
export type NewUser = Omit<User, 'id' | 'credentialsEpoch'>
