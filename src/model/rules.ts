/** Rules shared by the fields of several resources. */
import { Type } from '@sinclair/typebox'

// A character no text sent to the service may hold, whatever the field: U+0000, which PostgreSQL cannot keep in text,
// or a UTF-16 surrogate without its partner (a lead not followed by a trail, a trail not preceded by a lead), which
// UTF-8, and so a database, cannot encode: Bun.SQL would store U+FFFD in its place without a word.
const UNSTORABLE = '\\u0000|[\\uD800-\\uDBFF](?![\\uDC00-\\uDFFF])|(?:^|[^\\uD800-\\uDBFF])[\\uDC00-\\uDFFF]'

/**
 * The start of every text field's pattern: a lookahead that refuses U+0000 and unpaired surrogates, so that the JSON
 * file and PostgreSQL accept and refuse the same values (a 400 naming the field, on either). One scan, linear on any
 * length, and the same with or without the `u` flag (ajv adds it, TypeBox does not).
 */
export const STORABLE = `^(?![\\s\\S]*?(?:${UNSTORABLE}))`

const storable = new RegExp(STORABLE)

/** Whether `text` holds U+0000 or an unpaired surrogate, which no field accepts (see {@link STORABLE}). */
export const unstorable = (text: string): boolean => !storable.test(text)

/** What a refusal of such text says, for every field alike. */
export const UNSTORABLE_DETAIL = 'must not contain U+0000 or an unpaired UTF-16 surrogate'

/** The rule of a text field with no pattern of its own: any text but {@link STORABLE}'s. */
export const TEXT_RULES = { pattern: STORABLE }

/** The pattern of a name: not blank (some character besides whitespace), nothing {@link STORABLE} refuses. */
export const NAME_PATTERN = `${STORABLE}\\s*\\S`

/** A name: 1–200 characters and not blank (the service trims it before storing). */
export const NAME_RULES = {
  minLength: 1,
  maxLength: 200,
  pattern: NAME_PATTERN,
  error: 'a string of 1–200 characters, not blank',
}

/** The name of an account or of a personal API key: 1–100 characters and not blank (trimmed before it is stored). */
export const SHORT_NAME_RULES = {
  minLength: 1,
  maxLength: 100,
  pattern: NAME_PATTERN,
  error: 'a string of 1–100 characters, not blank',
}

const IMAGE_RULE = 'an absolute http(s) URL or a path on this server (starting with one /), at most 2048 characters'

/** A picture: an absolute http(s) URL, or a path on this server such as a generated cover. */
export const IMAGE_RULES = {
  maxLength: 2048,
  pattern: `${STORABLE}(?:https?://[^\\s/?#]+[^\\s]*|/(?!/)[^\\s]*)$`,
  description: `A picture: ${IMAGE_RULE}.`,
  error: IMAGE_RULE,
}

/** The id of a served record: assigned by the service from a counter. */
// TypeBox's Integer, not Elysia's t.Integer: the latter also accepts numeric strings such as "1973".
export const RECORD_ID = Type.Integer({
  format: 'int64',
  description: 'Assigned by the service; never reused.',
  examples: [1],
})

/**
 * The id of a stored record, as a data file or backup must hold it: a safe integer, which every JSON client reads
 * exactly (past 2^53 − 1, two ids can be the same number).
 */
export const STORED_ID = Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER })

/** The counter of a collection: the last id it gave, 0 before the first (a store gives no id past a safe integer). */
export const STORED_COUNTER = Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER })
