import { parseArgs } from 'node:util'
import { type Command, defaultOf, OPTIONS, type OptionDeclaration, type OptionKey, type ValueOf } from '../options.ts'
import { UsageError } from '../usage-error.ts'

/** The environment a command reads, as `process.env` holds it. */
export type Environment = Record<string, string | undefined>

/** What a command line gave, read lazily so that `--help` wins over any value that would not parse. */
export interface CommandLine {
  /** Whether the flag was given. */
  flagged(key: OptionKey): boolean
  /** Whether the flag was given, or the variable set (to anything), where the command reads it. */
  given(key: OptionKey): boolean
  /** The value: the last flag's, else (where the command reads the variable) the variable's, else the default. */
  value<K extends OptionKey>(key: K): ValueOf<K> | undefined
  /** The value of the flag alone: the last one given, or every one for a flag given once per item (`--api-key`). */
  flagValue<K extends OptionKey>(key: K): ValueOf<K> | undefined
  /** The value of the variable alone (read whatever the command's source is). */
  envValue<K extends OptionKey>(key: K): ValueOf<K> | undefined
  /** The words that are no flag or flag value, in order. */
  words: readonly string[]
}

/** The options `command` takes, by key. */
export function optionsOf(command: Command): [OptionKey, OptionDeclaration][] {
  return (Object.entries(OPTIONS) as [OptionKey, OptionDeclaration][]).filter(
    ([, option]) => option.commands[command] !== undefined,
  )
}

/**
 * Reads `argv` for `command` with the flags the table declares for it; `refuse` words the message for a flag it
 * does not take. Throws {@link UsageError} for a flag it does not know, a value missing or given to a switch.
 */
export function readCommandLine(
  command: Command,
  argv: readonly string[],
  env: Environment,
  refuse: (flag: string) => string,
): CommandLine {
  const taken = optionsOf(command)
  const byFlag = new Map(taken.flatMap(([key, option]) => (option.flag ? [[option.flag, key] as const] : [])))
  const config = Object.fromEntries(
    taken.flatMap(([, option]) =>
      option.flag
        ? [
            [
              option.flag,
              {
                type: option.kind.bare === undefined ? 'string' : 'boolean',
                ...(option.short ? { short: option.short } : {}),
              },
            ],
          ]
        : [],
    ),
  ) as NonNullable<Parameters<typeof parseArgs>[0]>['options']
  // Not strict: the table's own messages say what is wrong, rather than util's.
  const { tokens } = parseArgs({
    args: [...argv],
    options: config,
    strict: false,
    allowPositionals: true,
    tokens: true,
  })
  // The texts given to each flag (`undefined` for a bare one), in order.
  const texts = new Map<OptionKey, (string | undefined)[]>()
  const words: string[] = []
  let consumed = -1
  for (const [i, token] of tokens.entries()) {
    if (token.kind === 'option-terminator') continue
    if (token.kind === 'positional') {
      if (token.index !== consumed) words.push(token.value)
      continue
    }
    const key = byFlag.get(token.name)
    if (!key) throw new UsageError(refuse(token.rawName))
    const option: OptionDeclaration = OPTIONS[key]
    let text = token.value
    if (option.kind.bare === undefined && text === undefined) throw new UsageError(`${token.rawName} needs a value`)
    if (option.kind.optional) {
      // `--seed FILE` is read as `--seed=FILE`: a word right after a flag with an optional value is its value, unless
      // it looks like a flag itself (`-`, `-x`).
      const next = tokens[i + 1]
      const adjacent = next?.kind === 'positional' && next.index === token.index + 1
      if (text === undefined && adjacent && !next.value.startsWith('-')) {
        text = next.value
        consumed = next.index
      }
    } else if (option.kind.bare !== undefined && text !== undefined)
      throw new UsageError(`${token.rawName} takes no value`)
    if (option.once && texts.has(key)) throw new UsageError(`${token.rawName} names one store: give it once`)
    texts.set(key, [...(texts.get(key) ?? []), text])
  }

  const flagValue = <K extends OptionKey>(key: K): ValueOf<K> | undefined => {
    const given = texts.get(key)
    if (!given) return undefined
    const option: OptionDeclaration = OPTIONS[key]
    const source = `--${option.flag}`
    const read = (text: string | undefined) => (text === undefined ? option.kind.bare : option.kind.parse(text, source))
    // A flag given once per item (`--api-key A --api-key B`) gathers them; any other, the last one wins.
    const value = option.kind.form === 'each' ? given.flatMap((text) => read(text) as unknown[]) : read(given.at(-1))
    return value as ValueOf<K>
  }
  /** The variable's text, undefined when it is unset, or empty where empty counts as unset. */
  const variable = (option: OptionDeclaration) => {
    const text = option.env === undefined ? undefined : env[option.env]
    return text === undefined || (text.trim() === '' && !option.emptyRefused) ? undefined : text
  }
  const envValue = <K extends OptionKey>(key: K): ValueOf<K> | undefined => {
    const option: OptionDeclaration = OPTIONS[key]
    const text = variable(option)
    const read = option.kind.fromVariable ?? option.kind.parse
    return text === undefined ? undefined : (read(text, option.env as string) as ValueOf<K>)
  }
  const declared = (key: OptionKey): OptionDeclaration => OPTIONS[key]
  const fromEnv = (key: OptionKey) => declared(key).commands[command] === 'env'
  const variableSet = (key: OptionKey) => variable(declared(key)) !== undefined
  return {
    words,
    flagged: (key) => texts.has(key),
    given: (key) => texts.has(key) || (fromEnv(key) && variableSet(key)),
    flagValue,
    envValue,
    value(key) {
      // An option a command takes from the flag alone is named on purpose: no variable, no default.
      if (!fromEnv(key)) return flagValue(key)
      // A value that reads as unset (a blank address) leaves the default in force.
      return (texts.has(key) ? flagValue(key) : envValue(key)) ?? defaultOf(key)
    },
  }
}

/** The usage text's lines for the flags of `command`: the flag and its value, then what it does, wrapped. */
export function optionLines(command: Command, width = 118): string {
  const lines: string[] = []
  for (const [, option] of optionsOf(command)) {
    if (!option.flag) continue
    const flag = `${option.short ? `-${option.short}, ` : ''}--${option.flag}${option.value ? ` ${option.value}` : ''}`
    const shown =
      option.default !== undefined && option.kind.bare === undefined ? option.default || undefined : undefined
    const said = shown ?? option.unset
    const variable =
      option.env && option.commands[command] === 'env'
        ? ` (${option.env}${option.kind.form === 'each' ? ', comma-separated' : ''}${said ? `, default ${said}` : ''})`
        : said
          ? ` (default ${said})`
          : ''
    const words = `${option.help}${variable}`.split(' ')
    let line = flag.length <= 21 ? `  ${flag.padEnd(22)}` : `  ${flag}\n${' '.repeat(24)}`
    let column = line.length - line.lastIndexOf('\n') - 1
    for (const [i, word] of words.entries()) {
      if (i > 0 && column + 1 + word.length > width) {
        line += `\n${' '.repeat(24)}${word}`
        column = 24 + word.length
      } else {
        line += `${i > 0 ? ' ' : ''}${word}`
        column += (i > 0 ? 1 : 0) + word.length
      }
    }
    lines.push(line)
  }
  return lines.join('\n')
}
