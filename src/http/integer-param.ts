import { t } from 'elysia'

/** The largest int64, the bound of every id in the API. */
export const INT64_MAX = 9223372036854775807n

/**
 * A regular expression source matching exactly the decimal integers from `minimum` (0 or 1) to `maximum`, without
 * leading zeros: `8`, `42` and `9223372036854775807` but not `08`, `1e3` or `9223372036854775808`.
 */
export function integerRangePattern(minimum: 0 | 1, maximum: bigint): string {
  const max = maximum.toString()
  const alternatives = minimum === 0 ? ['0'] : []
  if (max.length > 1) alternatives.push(`[1-9]\\d{0,${max.length - 2}}`)
  // Numbers as long as the maximum: equal to it up to some digit, then a smaller digit, then anything.
  for (let i = 0; i < max.length; i++) {
    const digit = Number(max[i])
    const lowest = i === 0 ? 1 : 0
    if (digit <= lowest) continue
    const rest = max.length - i - 1
    alternatives.push(`${max.slice(0, i)}[${lowest}-${digit - 1}]${rest > 0 ? `\\d{${rest}}` : ''}`)
  }
  alternatives.push(max)
  return `^(?:${alternatives.join('|')})$`
}

interface IntegerParamOptions {
  minimum: 0 | 1
  /** The largest value accepted; int64's maximum unless said otherwise. */
  maximum?: bigint
  description: string
  /** What a refusal says the value must be, when the bounds alone would mislead (a limit that is capped). */
  error?: string
}

/**
 * A path or query parameter holding a decimal integer from `minimum` to `maximum`, checked by one compiled regular
 * expression (a decoding transform would cost more than the rest of a read). Handlers convert it with `Number()`;
 * ids above 2^53 lose precision there, which is harmless: no such id is ever assigned.
 */
export const IntegerParam = ({ minimum, maximum = INT64_MAX, description, error }: IntegerParamOptions) =>
  t.String({
    pattern: integerRangePattern(minimum, maximum),
    description,
    examples: ['1'],
    error: error ?? `an integer from ${minimum} to ${maximum}, written in digits only`,
  })
