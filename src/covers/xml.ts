// Characters XML 1.0 forbids even when escaped: C0 controls other than tab, newline and carriage return, and the
// two noncharacters. A name may hold them (the API only asks for non-blank text), so they are dropped, not escaped.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point.
const NOT_XML = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' }

/** Text without what XML cannot hold: lone surrogates become U+FFFD, forbidden characters are dropped. */
export const xmlChars = (text: string): string => text.toWellFormed().replace(NOT_XML, '')

/** Makes any text safe inside an XML element or a quoted attribute: escapes markup, drops what XML cannot hold. */
export const escapeXml = (text: string): string =>
  xmlChars(text).replace(/[&<>"']/g, (char) => ENTITIES[char] as string)

/**
 * One element: every attribute value is escaped here, so no caller can forget; `children` is markup already built
 * with this function or {@link escapeXml}. Without children the element is self-closing.
 */
export function element(name: string, attributes: Record<string, string | number>, children?: string): string {
  const attrs = Object.entries(attributes)
    .map(([key, value]) => ` ${key}="${escapeXml(String(value))}"`)
    .join('')
  return children === undefined ? `<${name}${attrs}/>` : `<${name}${attrs}>${children}</${name}>`
}
