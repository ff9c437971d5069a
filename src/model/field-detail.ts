/**
 * How a refused field is worded, wherever it is refused: a request body or parameter (http/validation.ts), the
 * operator's command line (ops/accounts.ts), a catalogue file (seed/catalogue-file.ts). One rule, one sentence.
 */
import type { TSchema } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { InvalidFieldError } from './errors.ts'
import { UNSTORABLE_DETAIL, unstorable } from './rules.ts'

/** The parts of a schema its wording reads. */
export interface SchemaLike {
  type?: string
  anyOf?: SchemaLike[]
  minLength?: number
  maxLength?: number
  minimum?: number
  maximum?: number
  pattern?: string
  properties?: Record<string, unknown>
  /** A hand-written description of what the value must be, preferred over the generated one. */
  error?: string
}

/** One refusal of a TypeBox check, as its `Errors` gives it. */
export interface ValueErrorLike {
  path: string
  type: number
  schema: SchemaLike
  value: unknown
}

// TypeBox ValueErrorType codes that need their own wording.
const UNEXPECTED_PROPERTY = 42
const REQUIRED_PROPERTY = 45

const range = (low: number | undefined, high: number | undefined, unit = '') =>
  low !== undefined && high !== undefined
    ? ` of ${low}–${high}${unit}`
    : high !== undefined
      ? ` of at most ${high}${unit}`
      : low !== undefined
        ? ` of at least ${low}${unit}`
        : ''

/** What a value of `schema` must be, in words: "a string of 1–200 characters", "an integer from 1900 to 2027 or null". */
export function describeSchema(schema: SchemaLike): string {
  if (schema.error) return schema.error
  if (schema.anyOf) return schema.anyOf.map(describeSchema).join(' or ')
  switch (schema.type) {
    case 'string':
      return `a string${range(schema.minLength, schema.maxLength, ' characters')}`
    case 'integer':
    case 'number': {
      const noun = schema.type === 'integer' ? 'an integer' : 'a number'
      if (schema.minimum !== undefined && schema.maximum !== undefined)
        return `${noun} from ${schema.minimum} to ${schema.maximum}`
      if (schema.minimum !== undefined) return `${noun} of at least ${schema.minimum}`
      return noun
    }
    case 'null':
      return 'null'
    case 'object':
      return 'a JSON object'
    case 'array':
      return 'an array'
    default:
      return schema.type ? `of type ${schema.type}` : 'valid'
  }
}

/** What is wrong with the field `error` names: "is required", "must be a string of 1–100 characters", … */
export function fieldDetail(error: ValueErrorLike): string {
  if (error.type === REQUIRED_PROPERTY) return 'is required'
  if (error.type === UNEXPECTED_PROPERTY) {
    const known = Object.keys(error.schema.properties ?? {}).join(', ')
    return `is not a known property${known ? ` (known: ${known})` : ''}`
  }
  // Said apart from the field's own rule, which a client could not tell from the refusal.
  if (typeof error.value === 'string' && unstorable(error.value)) return UNSTORABLE_DETAIL
  return `must be ${describeSchema(error.schema)}`
}

/**
 * Throws an {@link InvalidFieldError} naming the first field of `value` that `schema` refuses, worded as the API
 * words it, for values that do not come through a validated route.
 */
export function checkFields(schema: TSchema, value: unknown): void {
  const first = Value.Errors(schema, value).First()
  if (first) throw new InvalidFieldError(first.path || '/', fieldDetail(first as ValueErrorLike))
}
