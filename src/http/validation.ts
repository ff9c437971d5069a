import type { ValidationError } from 'elysia'
import { UNSTORABLE_DETAIL, unstorable } from '../model/rules.ts'
import { describeSchema, type SchemaLike } from '../model/schema-words.ts'
import { type FieldError, invalid, type Problem } from './problem.ts'

interface ValueErrorLike {
  path: string
  type: number
  schema: SchemaLike
  value: unknown
}

// TypeBox ValueErrorType codes that need their own wording.
const UNEXPECTED_PROPERTY = 42
const REQUIRED_PROPERTY = 45

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
  return { ...where, detail: `must be ${describeSchema(error.schema)}` }
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
