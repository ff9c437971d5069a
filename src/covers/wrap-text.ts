const ELLIPSIS = '…'

/** Splits text into code points, so that no line or cut ever splits a surrogate pair. */
const codePoints = (text: string) => Array.from(text.normalize('NFC'))

/** Cuts a word longer than a line into line-sized pieces. */
function pieces(word: string, width: number): string[] {
  const chars = codePoints(word)
  const out: string[] = []
  for (let i = 0; i < chars.length; i += width) out.push(chars.slice(i, i + width).join(''))
  return out
}

/** Ends a line with an ellipsis, keeping it within `width` characters. */
function ellipsize(line: string, width: number): string {
  const chars = codePoints(line)
  return `${chars
    .slice(0, Math.max(0, width - 1))
    .join('')
    .trimEnd()}${ELLIPSIS}`
}

/**
 * Wraps text greedily at spaces into at most `maxLines` lines of at most `width` characters; what does not fit is
 * cut and marked with an ellipsis. Names are short, so there are no font metrics here: the caller sizes the font
 * from the longest line.
 */
export function wrapText(text: string, width: number, maxLines: number): string[] {
  const words = text.trim().split(/\s+/).filter(Boolean)
  const lines: string[] = []
  let current = ''
  for (const word of words.flatMap((each) => pieces(each, width))) {
    const joined = current ? `${current} ${word}` : word
    if (codePoints(joined).length <= width) current = joined
    else {
      lines.push(current)
      current = word
    }
  }
  if (current) lines.push(current)
  if (lines.length <= maxLines) return lines
  const kept = lines.slice(0, maxLines)
  kept[maxLines - 1] = ellipsize(`${kept[maxLines - 1]} `, width)
  return kept
}

/** The length of a line in characters, as {@link wrapText} counts them. */
export const lineLength = (line: string) => codePoints(line).length
