// TypeBox's Integer, not Elysia's t.Integer: the latter also accepts numeric strings, and ids are numbers.
import { Type } from '@sinclair/typebox'
import { t } from 'elysia'
import { IntegerParam } from '../http/integer-param.ts'
import { EMAIL_PATTERN } from '../model/email.ts'
import { NAME_PATTERN, STORABLE } from '../model/rules.ts'

const Email = (description: string) =>
  t.String({
    maxLength: 254,
    pattern: EMAIL_PATTERN,
    description,
    examples: ['carlos@rock-legends.com'],
    error: 'an email address such as carlos@rock-legends.com, at most 254 characters',
  })

const NAME_RULE = 'a string of 1–100 characters, not blank'

/** The body of `POST /api/v1/user/signup`. */
export const SignupInput = t.Object(
  {
    name: t.String({
      minLength: 1,
      maxLength: 100,
      pattern: NAME_PATTERN,
      description: 'How the user is called; trimmed.',
      examples: ['Carlos'],
      error: NAME_RULE,
    }),
    email: Email(
      'The address to log in with; trimmed and lower-cased. Unique among users once look-alike forms are folded: full-width, decomposed and differently-cased forms of one address (NFKC, then lower case) are the same address.',
    ),
    password: t.String({
      minLength: 8,
      maxLength: 1024,
      pattern: STORABLE,
      description: 'At least 8 characters (at most 1,024). Stored only as an argon2id hash.',
      examples: ['i-love-rock'],
    }),
  },
  {
    additionalProperties: false,
    examples: [
      { name: 'Carlos', email: 'carlos@rock-legends.com', password: 'i-love-rock' },
      { name: 'Maria', email: 'maria@rock-legends.com', password: 'rock-n-roll' },
    ],
  },
)

/** The body of `POST /api/v1/user/login`. */
export const LoginInput = t.Object(
  {
    email: Email(
      'The address used at sign-up; case, surrounding spaces and look-alike forms (full-width, decomposed: NFKC) do not matter.',
    ),
    password: t.String({
      minLength: 1,
      maxLength: 1024,
      pattern: STORABLE,
      description: 'The password chosen at sign-up.',
    }),
  },
  { additionalProperties: false, examples: [{ email: 'carlos@rock-legends.com', password: 'i-love-rock' }] },
)

/** A user as the API shows it: never the password or its hash. */
export const User = t.Object(
  {
    id: Type.Integer({ format: 'int64', description: 'Assigned by the service; never reused.', examples: [1] }),
    name: t.String({ examples: ['Carlos'] }),
    email: t.String({
      description: 'As typed at sign-up, trimmed and lower-cased.',
      examples: ['carlos@rock-legends.com'],
    }),
  },
  { description: 'A user of the service; never the password or its hash.' },
)

/** The answer to a successful login. */
export const Session = t.Object(
  {
    user: User,
    token: t.String({
      description: 'The bearer token, shown only now: send it as `Authorization: Bearer <token>`.',
      examples: ['rl_tok_8fKq2ZyW0pLxT4vB7nCdE1gHjM3sR5uA'],
    }),
    token_type: t.Literal('Bearer', { description: 'How to send the token.' }),
    expires_at: t.String({
      format: 'date-time',
      description: 'When the token stops working.',
      examples: ['2026-11-23T11:00:00.000Z'],
    }),
  },
  { description: 'A signed-in session: who you are and the bearer token to act as you.' },
)

/** The body of `POST /api/v1/user/api-keys`. */
export const ApiKeyInput = t.Object(
  {
    name: t.String({
      minLength: 1,
      maxLength: 100,
      pattern: NAME_PATTERN,
      description: 'What the key is for, to recognise it in the list; trimmed.',
      examples: ['CI pipeline'],
      error: NAME_RULE,
    }),
  },
  { additionalProperties: false, examples: [{ name: 'CI pipeline' }] },
)

const apiKeyFields = {
  id: Type.Integer({ format: 'int64', description: 'Assigned by the service; never reused.', examples: [3] }),
  name: t.String({ examples: ['CI pipeline'] }),
  prefix: t.String({ description: 'The first characters of the key, to recognise it.', examples: ['rl_key_AbCd'] }),
  created_at: t.String({ format: 'date-time' }),
  last_used_at: t.Optional(t.String({ format: 'date-time', description: 'Left out until the key is first used.' })),
}

/** A personal API key as listed: never the key itself. */
export const ApiKey = t.Object(apiKeyFields, { description: 'A personal API key, without the key itself.' })

/** A personal API key just created, with the key: the only time it is shown. */
export const NewApiKey = t.Object(
  {
    ...apiKeyFields,
    key: t.String({
      description: 'The key, shown only now: send it as `X-API-Key: <key>`. Only its hash is kept.',
      examples: ['rl_key_AbCd9Lm2Qx7Rt4Vw1Yz6Bn3Ks8Pf5Hj0'],
    }),
  },
  { description: 'A personal API key just created, with the key: the only time it is shown.' },
)

/** `id` in `/api/v1/user/api-keys/{id}`. */
export const ApiKeyIdParams = t.Object({
  id: IntegerParam({ minimum: 1, description: 'The id of the personal API key.' }),
})

/**
 * The 204 answer, which has no body. Not `t.Void()`: @elysiajs/openapi 1.4.16 writes a void schema as
 * `content: { type: 'void' }`, which is not valid OpenAPI. The document drops the content of every 204 and keeps
 * this description.
 */
export const NoContent = (description: string) => t.Any({ description })
