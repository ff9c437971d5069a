import type { ValidationError } from 'elysia'
import { UNSTORABLE_DETAIL, unstorable } from '../model/rules.ts'
import { type FieldError, invalid, type Problem } from './problem.ts'

interface SchemaLike {
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

interface ValueErrorLike {
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
export function describe(schema: SchemaLike): string {
  if (schema.error) return schema.error
  if (schema.anyOf) return schema.anyOf.map(describe).join(' or ')
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

function fieldError(error: ValueErrorLike, on: string): FieldError {
  const name = error.path.slice(1)
  const where = on === 'body' ? { pointer: error.path } : { parameter: name }
  if (error.type === REQUIRED_PROPERTY) return { ...where, detail: 'is required' }
  if (error.type === UNEXPECTED_PROPERTY) {
    const known = Object.keys(error.schema.properties ?? {}).join(', ')
    return { ...where, detail: `is not a known property${known ? ` (known: ${known})` : ''}` }
  }
  // Said apart from the field's own rule, which a client could not tell from the refusal.
  if (typeof error.value === 'string' && unstorable(error.value)) return { ...where, detail: UNSTORABLE_DETAIL }
  return { ...where, detail: `must be ${describe(error.schema)}` }
}

/** Turns Elysia's validation error into a 400 problem with one entry per invalid field or parameter. */
export function validationProblem(error: ValidationError): Problem {
  const on = error.type
  const errors: FieldError[] = []
  const seen = new Set<string>()
  for (const each of error.all as unknown as ValueErrorLike[]) {
    // TypeBox reports a missing property twice (required, then wrong type): keep the first, clearest one.
    if (seen.has(each.path)) continue
    seen.add(each.path)
    errors.push(fieldError(each, on))
  }
  return invalid(errors)
}
