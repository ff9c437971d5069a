import { t } from 'elysia'
import { invalid } from './problem.ts'

/** The largest int64, the bound of every id and offset in the API. */
export const INT64_MAX = 9223372036854775807n

interface IntegerParamOptions {
  /** The parameter's name, for error messages. */
  name: string
  minimum: number
  /** The largest value accepted; int64's maximum unless said otherwise. */
  maximum?: bigint
  /** Larger values are lowered to this one instead of rejected. */
  cap?: number
  description: string
}

/**
 * A path or query parameter holding a decimal integer from `minimum` to `maximum`, decoded to a number (ids above
 * 2^53 lose precision, which is harmless: no such id is ever assigned).
 * Stricter than a numeric coercion on purpose: `1e3`, `0x10`, `+5`, ` 7` and `1.0` are all rejected.
 */
export function IntegerParam({ name, minimum, maximum = INT64_MAX, cap, description }: IntegerParamOptions) {
  const fail = (detail: string) => invalid([{ parameter: name, detail }])
  return t
    .Transform(
      t.String({
        pattern: '^[0-9]+$',
        description,
        examples: [String(Math.max(minimum, 1))],
        error: `an integer of at least ${minimum}, written in digits only`,
      }),
    )
    .Decode((value) => {
      const number = BigInt(value)
      if (number > maximum) throw fail(`must be at most ${maximum}, got ${value}`)
      if (number < BigInt(minimum)) throw fail(`must be at least ${minimum}, got ${value}`)
      return cap !== undefined && number > BigInt(cap) ? cap : Number(number)
    })
    .Encode(String)
}
