import { trustEntry } from './http/proxies.ts'
import { parseMetricsAddress } from './metrics/serve-metrics.ts'
import { withCommas } from './text/numbers.ts'
import { UsageError } from './usage-error.ts'

/**
 * How the npm package writes a value on the executable's command line: `value` as text after the flag, `ms` as a
 * duration in milliseconds, `list` comma-separated, `each` one flag per item, `on` the bare flag when true, `off` the
 * bare flag when false, `seed` the bare flag for `true` or `--seed=FILE`, `env` in the option's variable (no flag).
 */
export type CommandLineForm = 'value' | 'ms' | 'list' | 'each' | 'on' | 'off' | 'seed' | 'env'

/** What an option's value is: how its text is read, and how the typings and the npm package write it. */
export interface ValueKind<T> {
  /** The value's type as TypeScript writes it, for the npm package's typings. */
  readonly type: string
  /** How the npm package passes a value on the command line. */
  readonly form: CommandLineForm
  /**
   * Reads `text`, given to `source` (a flag such as `--port`, or a variable such as `PORT`, named in the message);
   * throws {@link UsageError}.
   */
  parse(text: string, source: string): T
  /**
   * Reads the environment variable's text (and a default, written as the variable would be) where that differs from
   * a flag's: one flag per item, but one variable for all of them.
   */
  readonly fromVariable?: (text: string, source: string) => T
  /** The value of the flag given bare (`--read-only`); a flag without it needs a value. */
  readonly bare?: T
  /** Whether the flag takes its value only as `--flag=VALUE` or as a following word that is no flag (`--seed`). */
  readonly optional?: boolean
}

const kind = <T>(value: ValueKind<T>) => value

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }

/** Parses a duration such as `90s`, `30m`, `24h` or `7d` (a bare number is seconds) into milliseconds. */
export function parseDuration(text: string, source = '--token-ttl'): number {
  const match = /^(\d+)(ms|s|m|h|d)?$/.exec(text.trim())
  const ms = match ? Number(match[1]) * (UNITS[match[2] ?? 's'] as number) : Number.NaN
  if (!Number.isSafeInteger(ms) || ms <= 0)
    throw new UsageError(`${source} must be a positive duration such as 90s, 30m, 24h or 7d, not "${text}"`)
  return ms
}

/** A duration of at least `minMs`, e.g. `30m`. */
export const duration = (minMs = 1) =>
  kind<number>({
    type: 'number',
    form: 'ms',
    parse(text, source) {
      const ms = parseDuration(text, source)
      if (ms < minMs) throw new UsageError(`${source} must be at least ${minMs / 1000}s, not "${text}"`)
      return ms
    },
  })

/** A duration such as `365d`, or `off` (or `0`) for none: 0. */
export const durationOrOff = kind<number>({
  type: 'number',
  form: 'ms',
  parse(text, source) {
    const word = text.trim().toLowerCase()
    if (word === 'off' || /^0+(ms|s|m|h|d)?$/.test(word)) return 0
    try {
      return parseDuration(text, source)
    } catch {
      throw new UsageError(`${source} must be a duration such as 365d, or off, not "${text}"`)
    }
  },
})

/** A whole number from `min` to `max`; `unit` names what it counts in the message. */
export const wholeNumber = (min: number, max: number, unit = '') =>
  kind<number>({
    type: 'number',
    form: 'value',
    parse(text, source) {
      const value = /^\d{1,15}$/.test(text.trim()) ? Number(text) : Number.NaN
      if (!(value >= min && value <= max)) {
        const range = max === Number.MAX_SAFE_INTEGER ? `of at least ${min}` : `from ${min} to ${withCommas(max)}`
        throw new UsageError(`${source} must be a whole number${unit && ` of ${unit}`} ${range}, not "${text}"`)
      }
      return value
    },
  })

/** A TCP port, 0 picking a free one. */
export const port = wholeNumber(0, 65535)

/** Text that must not be blank; `what` completes "must …" in the message. */
export const text = (what: string) =>
  kind<string>({
    type: 'string',
    form: 'value',
    parse(value, source) {
      if (value.trim() === '') throw new UsageError(`${source} must ${what}`)
      return value
    },
  })

/** Text, trimmed, where blank means unset, and so the default. */
export const optionalText = kind<string | undefined>({
  type: 'string',
  form: 'value',
  parse: (value) => value.trim() || undefined,
})

/** An http(s) URL. */
export const httpUrl = kind<string>({
  type: 'string',
  form: 'value',
  parse(value, source) {
    if (!URL.canParse(value) || !/^https?:$/.test(new URL(value).protocol))
      throw new UsageError(`${source} must be an http(s) URL such as http://127.0.0.1:3000, not "${value}"`)
    return value
  },
})

/** One of `choices`. */
export const oneOf = <const T extends string>(choices: readonly T[]) =>
  kind<T>({
    type: choices.map((choice) => `'${choice}'`).join(' | '),
    form: 'value',
    parse(value, source) {
      if ((choices as readonly string[]).includes(value)) return value as T
      const listed = `${choices.slice(0, -1).join(', ')} or ${choices.at(-1)}`
      throw new UsageError(`${source} must be ${listed}, not "${value}"`)
    },
  })

const items = (value: string) =>
  value
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean)

/** Comma-separated items, blanks dropped. */
export const list = kind<readonly string[]>({ type: 'readonly string[]', form: 'list', parse: items })

/**
 * Secrets given one per flag (`--api-key A --api-key B`), or comma-separated in the variable; none may be blank.
 */
export const secrets = kind<readonly string[]>({
  type: 'readonly string[]',
  form: 'each',
  parse(value, source) {
    if (value.trim() === '') throw new UsageError(`${source} must not be empty`)
    return [value]
  },
  fromVariable: items,
})

/** A variable's on/off: `true` or `1` for on; `false`, `0` or empty for off. */
function readSwitch(value: string, source: string): boolean {
  const word = value.trim().toLowerCase()
  if (word === 'true' || word === '1') return true
  if (word === '' || word === 'false' || word === '0') return false
  throw new UsageError(`${source} must be true or false, not "${value}"`)
}

/** A switch: the bare flag turns it on. */
export const on = kind<boolean>({ type: 'boolean', form: 'on', parse: readSwitch, bare: true })

/** A switch named for turning something off (`--no-ui`): the bare flag, or the variable set to true, makes it false. */
export const off = kind<boolean>({
  type: 'boolean',
  form: 'off',
  parse: (value, source) => !readSwitch(value, source),
  bare: false,
})

/** `--seed [FILE]`: `true` for the built-in catalogue, `false` for none, or a catalogue file. */
export const seed = kind<boolean | string>({
  type: 'boolean | string',
  form: 'seed',
  parse(value) {
    if (value === '' || value === 'true' || value === '1') return true
    if (value === 'false' || value === '0') return false
    return value
  },
  bare: true,
  optional: true,
})

/** `[HOST:]PORT` of a listener of its own; blank is unset. */
export const listenAddress = kind<string | undefined>({
  type: 'string',
  form: 'value',
  parse(value, source) {
    if (value.trim() === '') return undefined
    if (!parseMetricsAddress(value))
      throw new UsageError(`${source} must be [HOST:]PORT, such as 9464 or 127.0.0.1:9464, not "${value}"`)
    return value.trim()
  },
})

/** A positive number of bytes; blank is unset. */
export const bytes = kind<number | undefined>({
  type: 'number',
  form: 'env',
  parse(value, source) {
    if (value.trim() === '') return undefined
    const count = /^\d{1,15}$/.test(value.trim()) ? Number(value) : 0
    if (count <= 0) throw new UsageError(`${source} must be a positive number of bytes, not "${value}"`)
    return count
  },
})

/** Comma-separated addresses, CIDR ranges and the words `loopback` and `private`, each checked. */
export const proxies = kind<readonly string[]>({
  type: 'readonly string[]',
  form: 'list',
  parse(value, source) {
    try {
      return items(value).map(trustEntry)
    } catch (error) {
      throw new UsageError(`${source}: ${(error as Error).message}`)
    }
  },
})
