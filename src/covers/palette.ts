/** The colours of one cover, as `#rrggbb`: a two-stop background, an accent, and text that reads on both. */
export interface Palette {
  from: string
  to: string
  accent: string
  text: string
  /** Stable per name; keeps ids unique when several covers are inlined into one page. */
  key: string
}

/** The contrast every text colour keeps against both background stops: WCAG AA for normal text, with a margin. */
export const MIN_CONTRAST = 4.8

const TEXT = '#fbf7ef'

/** FNV-1a over the UTF-16 code units: tiny, stable across runs and platforms, and well spread for short names. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i)
    hash = Math.imul(hash, 0x01000193)
  }
  return hash >>> 0
}

const hex = (channel: number) =>
  Math.round(channel * 255)
    .toString(16)
    .padStart(2, '0')

/** HSL (degrees, 0–1, 0–1) to `#rrggbb`: hex, because not every SVG renderer reads CSS3 `hsl()`. */
export function hslToHex(hue: number, saturation: number, lightness: number): string {
  const chroma = saturation * Math.min(lightness, 1 - lightness)
  const channel = (n: number) => {
    const k = (n + hue / 30) % 12
    return lightness - chroma * Math.max(-1, Math.min(k - 3, 9 - k, 1))
  }
  return `#${hex(channel(0))}${hex(channel(8))}${hex(channel(4))}`
}

/** WCAG relative luminance of `#rrggbb`. */
function luminance(color: string): number {
  const [r, g, b] = [1, 3, 5].map((at) => {
    const value = Number.parseInt(color.slice(at, at + 2), 16) / 255
    return value <= 0.04045 ? value / 12.92 : ((value + 0.055) / 1.055) ** 2.4
  }) as [number, number, number]
  return 0.2126 * r + 0.7152 * g + 0.0722 * b
}

/** WCAG contrast ratio of two `#rrggbb` colours, from 1 to 21. */
export function contrast(a: string, b: string): number {
  const [light, dark] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number]
  return (light + 0.05) / (dark + 0.05)
}

/** The colour of `hue` and `saturation` nearest to `lightness`, moved by `step` until `ok` holds. */
function adjust(hue: number, saturation: number, lightness: number, step: number, ok: (color: string) => boolean) {
  let color = hslToHex(hue, saturation, lightness)
  for (let l = lightness; !ok(color) && l > 0 && l < 1; l += step) color = hslToHex(hue, saturation, l)
  return color
}

/**
 * The colours of a cover, derived from `name` alone so that a record always gets the same picture. Hues vary freely;
 * lightness is then pushed until the text and the accent keep {@link MIN_CONTRAST} on both background stops, since a
 * yellow and a blue of the same HSL lightness differ widely in luminance.
 */
export function paletteOf(name: string): Palette {
  const hash = fnv1a(name.normalize('NFC'))
  const hue = hash % 360
  const shift = 25 + ((hash >>> 9) % 50)
  const readable = (color: string) => contrast(TEXT, color) >= MIN_CONTRAST
  const from = adjust(hue, 0.55, 0.3, -0.02, readable)
  const to = adjust((hue + shift) % 360, 0.6, 0.14, -0.02, readable)
  const onBoth = (color: string) => contrast(color, from) >= MIN_CONTRAST && contrast(color, to) >= MIN_CONTRAST
  const accent = adjust((hue + 180 + shift) % 360, 0.75, 0.7, 0.02, onBoth)
  return { from, to, accent, text: TEXT, key: hash.toString(36) }
}
