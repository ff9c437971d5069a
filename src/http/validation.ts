import type { ValidationError } from 'elysia'
import { fieldDetail, type ValueErrorLike } from '../model/field-detail.ts'
import { type FieldError, invalid, type Problem } from './problem.ts'

function fieldError(error: ValueErrorLike, on: string): FieldError {
  const where = on === 'body' ? { pointer: error.path } : { parameter: error.path.slice(1) }
  return { ...where, detail: fieldDetail(error) }
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
