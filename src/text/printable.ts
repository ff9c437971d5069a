// Text from users (a name given at sign-up, a request's target, an answer of another server) is printed to terminals
// and logs. Printed raw, its control characters would act: ESC starts sequences that clear lines, move the cursor,
// forge rows of a table or set the window's title; a newline starts a log line of the sender's making; the bidi
// overrides make text read in another order than it is stored. Each is shown instead, visibly and unambiguously:
// `\x1b`, `\n`, `\u{202e}`, and a backslash as `\\`.

/**
 * What must not reach a terminal as it is: C0 controls, DEL, C1 controls (U+0080–U+009F, CSI among them), the line
 * and paragraph separators, the bidi embeddings and overrides (U+202A–U+202E) and isolates (U+2066–U+2069).
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point.
const UNPRINTABLE = /[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]/
const UNPRINTABLE_OR_BACKSLASH = new RegExp(`[\\\\${UNPRINTABLE.source.slice(1, -1)}]`, 'g')
const UNPRINTABLE_ALL = new RegExp(UNPRINTABLE.source, 'g')
/** The same, but for a text of several lines, whose newlines (and tabs, which move nothing else) are kept. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point.
const UNPRINTABLE_BUT_NEWLINE = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g

const NAMED: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' }

function escaped(character: string): string {
  const named = NAMED[character]
  if (named !== undefined) return named
  const code = character.charCodeAt(0)
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u{${code.toString(16)}}`
}

/**
 * `text` with every control character shown as an escape (and a backslash doubled, so the escapes cannot be
 * forged): one line, safe to print in a table cell, a message or a log field.
 *
 * @example
 * printable('Ana\x1b[2J\u202e') // 'Ana\\x1b[2J\\u{202e}'
 */
export function printable(text: string): string {
  if (!UNPRINTABLE.test(text) && !text.includes('\\')) return text
  return text.replace(UNPRINTABLE_OR_BACKSLASH, escaped)
}

/**
 * A message that quotes what users gave (an email, another server's answer), as one line with every control
 * character shown as an escape. Backslashes stay as they are (a Windows path reads as it is written).
 */
export function printableMessage(text: string): string {
  return UNPRINTABLE.test(text) ? text.replace(UNPRINTABLE_ALL, escaped) : text
}

/**
 * `text`, which may have several lines (a stack trace, a usage text), with every control character but the newline
 * and the tab shown as an escape. Backslashes stay as they are: this guards a terminal, not the meaning of each line.
 */
export function printableLines(text: string): string {
  return text.replace(UNPRINTABLE_BUT_NEWLINE, escaped)
}

/**
 * What JSON.stringify leaves as it is, and a terminal does not: DEL, the C1 controls, the separators and the bidi
 * controls. (It escapes the C0 controls itself.)
 */
const RAW_IN_JSON = /[\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g

/**
 * JSON text (from JSON.stringify) with the characters it leaves raw but a terminal would act on written as `\uXXXX`:
 * the same JSON value, safe to print.
 *
 * @example
 * printableJson(JSON.stringify({ name: 'a\u202eb' })) // '{"name":"a\\u202eb"}'
 */
export function printableJson(json: string): string {
  return json.replace(RAW_IN_JSON, (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`)
}
