import { INT64_MAX, integerRangePattern } from '../http/integer-param.ts'
import { DEFAULT_LIMIT } from '../http/pagination.ts'
import type { Parameter, Schema } from './shapes.ts'

// What the document says beyond the bounds the runtime pattern checks: defaults and examples. `limit` has no
// `maximum`: a larger one is accepted and lowered to the most a page holds (its description says so, and
// `meta.limit` reports the limit applied), and a client generated from the document must not refuse it.
const extras: Record<string, Schema> = {
  limit: { default: DEFAULT_LIMIT, examples: [DEFAULT_LIMIT, 50] },
  offset: { default: 0, examples: [0, 10] },
}

/**
 * The bounds of an integer parameter from its runtime pattern, or `undefined` for any other pattern. The pattern is
 * rebuilt from the bounds found and compared whole, so a pattern this does not understand is never misread.
 */
export function integerBounds(pattern: string): { minimum: 0 | 1; maximum: bigint } | undefined {
  const alternatives = /^\^\(\?:(.*)\)\$$/.exec(pattern)?.[1]?.split('|')
  const last = alternatives?.at(-1)
  if (!alternatives || !last || !/^[1-9]\d*$/.test(last)) return undefined
  const bounds = { minimum: alternatives[0] === '0' ? 0 : 1, maximum: BigInt(last) } as const
  return integerRangePattern(bounds.minimum, bounds.maximum) === pattern ? bounds : undefined
}

/**
 * Documents a parameter as what it means rather than how it is checked. Integer parameters are strings with an
 * exact-range pattern at runtime (a decoding transform would cost more than the rest of a read); the document
 * shows them as `integer`, `int64`, with their bounds and default.
 */
export function documentParameter(parameter: Parameter): Parameter {
  const { description, ...schema } = parameter.schema
  const bounds = typeof schema.pattern === 'string' ? integerBounds(schema.pattern) : undefined
  const documented: Parameter = { ...parameter, schema }
  if (typeof description === 'string') documented.description = description
  if (!bounds) return documented
  documented.schema = {
    type: 'integer',
    format: 'int64',
    minimum: bounds.minimum,
    // int64's own maximum is what `format: int64` says, and a JSON number cannot hold it exactly anyway.
    ...(bounds.maximum < INT64_MAX ? { maximum: Number(bounds.maximum) } : {}),
    examples: [1],
    ...extras[parameter.name],
  }
  return documented
}
