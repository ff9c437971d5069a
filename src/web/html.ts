/** Markup that is safe to send as it is: built by {@link html}, or by {@link raw} from text known to be markup. */
export class Html {
  /** Wraps `text`, which must already be markup. */
  constructor(readonly text: string) {}

  /** The markup itself. */
  toString(): string {
    return this.text
  }
}

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }

/** Makes any text safe inside an element or a quoted attribute; lone surrogates become U+FFFD. */
export const escapeHtml = (text: string): string =>
  text.toWellFormed().replace(/[&<>"']/g, (char) => ENTITIES[char] as string)

/** Marks `text` as markup, unescaped: only for text this server wrote itself. */
export const raw = (text: string): Html => new Html(text)

function part(value: unknown): string {
  if (value instanceof Html) return value.text
  if (Array.isArray(value)) return value.map(part).join('')
  if (value === undefined || value === null || value === false) return ''
  return escapeHtml(String(value))
}

/**
 * A template tag that escapes every interpolated value, so no caller can forget: {@link Html} values are inserted
 * as they are, arrays are joined, and `undefined`, `null` and `false` leave nothing (for conditional parts).
 *
 * @example
 * html`<h1>${artist.name}</h1>${artist.band && html`<p>${artist.band}</p>`}`
 */
export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let text = strings[0] as string
  for (let i = 0; i < values.length; i++) text += part(values[i]) + (strings[i + 1] as string)
  return new Html(text)
}
