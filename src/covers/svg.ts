import type { Palette } from './palette.ts'
import { lineLength } from './wrap-text.ts'
import { element, escapeXml } from './xml.ts'

/** The side of every cover, in pixels: square, like a sleeve. */
export const SIZE = 600

// Generic families only: the picture must render offline, with whatever fonts the viewer has.
const SERIF = "Georgia, 'Times New Roman', serif"
const SANS = "system-ui, -apple-system, 'Segoe UI', Roboto, Helvetica, Arial, sans-serif"

/** The kinds of text on a cover; `em` is a loose average glyph width, enough to size a line without font metrics. */
export const TYPE = {
  display: { family: SERIF, weight: 700, spacing: 0, em: 0.6 },
  caps: { family: SANS, weight: 600, spacing: 2, em: 0.7 },
  label: { family: SANS, weight: 500, spacing: 1, em: 0.6 },
} as const

/** Where and how a block of lines is set. */
export interface TextStyle {
  type: (typeof TYPE)[keyof typeof TYPE]
  x: number
  /** Baseline of the first line. */
  y: number
  size: number
  fill: string
  anchor?: 'start' | 'middle'
}

/** The largest font size, up to `max`, at which the longest of `lines` fits `width` pixels in `type`. */
export const fitSize = (lines: string[], width: number, type: TextStyle['type'], max: number) =>
  Math.floor(Math.min(max, width / (Math.max(1, ...lines.map(lineLength)) * type.em)))

/** A line height that keeps accents of one line clear of descenders of the one above. */
export const leading = (size: number) => Math.round(size * 1.12)

/** Lines of text set one under the other; nothing when there are none. */
export function textBlock(lines: string[], { type, x, y, size, fill, anchor = 'start' }: TextStyle): string {
  if (lines.length === 0) return ''
  const tspans = lines.map((line, i) => element('tspan', { x, dy: i === 0 ? 0 : leading(size) }, escapeXml(line)))
  const attributes = { x, y, 'text-anchor': anchor, 'font-size': size, fill }
  const font = { 'font-family': type.family, 'font-weight': type.weight, 'letter-spacing': type.spacing }
  return element('text', { ...attributes, ...font }, tspans.join(''))
}

/** A whole cover: its accessible name, the palette's gradient as background, then `body` on top. */
export function frame({ key, from, to }: Palette, label: string, body: string[]): string {
  const gradient = element(
    'linearGradient',
    { id: `g-${key}`, x1: 0, y1: 0, x2: 1, y2: 1 },
    [element('stop', { offset: 0, 'stop-color': from }), element('stop', { offset: 1, 'stop-color': to })].join(''),
  )
  const content = [
    element('title', { id: `t-${key}` }, escapeXml(label)),
    element('defs', {}, gradient),
    element('rect', { width: SIZE, height: SIZE, fill: `url(#g-${key})` }),
    ...body.filter(Boolean),
  ]
  const root = { xmlns: 'http://www.w3.org/2000/svg', width: SIZE, height: SIZE, viewBox: `0 0 ${SIZE} ${SIZE}` }
  return element('svg', { ...root, role: 'img', 'aria-labelledby': `t-${key}` }, `\n${content.join('\n')}\n`)
}
