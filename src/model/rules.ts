/** Rules shared by the fields of several resources. */
import { Type } from '@sinclair/typebox'

/** A name: 1–200 characters and not blank (the service trims it before storing). */
export const NAME_RULES = {
  minLength: 1,
  maxLength: 200,
  pattern: '\\S',
  error: 'a string of 1–200 characters, not blank',
}

const IMAGE_RULE = 'an absolute http(s) URL or a path on this server (starting with one /), at most 2048 characters'

/** A picture: an absolute http(s) URL, or a path on this server such as a generated cover. */
export const IMAGE_RULES = {
  maxLength: 2048,
  pattern: '^(?:https?://[^\\s/?#]+[^\\s]*|/(?!/)[^\\s]*)$',
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
