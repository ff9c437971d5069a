import { type Palette, paletteOf } from './palette.ts'
import { fitSize, frame, leading, SIZE, TYPE, textBlock } from './svg.ts'
import { wrapText } from './wrap-text.ts'
import { element, xmlChars } from './xml.ts'

/** What an artist's picture shows. */
export interface ArtistCoverFields {
  name: string
  band?: string
}

/** What an album's cover shows. */
export interface AlbumCoverFields {
  title: string
  artist: string
  year?: number
}

const MARGIN = 48
const WIDTH = SIZE - 2 * MARGIN

/** A record sliding out of the sleeve, bottom right; drawn before the title so the title stays on top. */
function record({ accent, from }: Palette): string {
  const at = { cx: 470, cy: 470 }
  const groove = (r: number) =>
    element('circle', { ...at, r, fill: 'none', stroke: accent, 'stroke-opacity': 0.22, 'stroke-width': 2 })
  return [
    element('circle', { ...at, r: 190, fill: '#000', 'fill-opacity': 0.45 }),
    ...[160, 128, 96].map(groove),
    element('circle', { ...at, r: 54, fill: accent }),
    element('circle', { ...at, r: 7, fill: from }),
  ].join('')
}

/** The cover of an album: its title large, its artist above, its year below, in colours drawn from both names. */
export function albumCover(fields: AlbumCoverFields): string {
  const [title, artist, { year }] = [xmlChars(fields.title), xmlChars(fields.artist), fields]
  const palette = paletteOf(`${artist}\n${title}`)
  const artistLines = wrapText(artist.toLocaleUpperCase('es'), 30, 2)
  const titleLines = wrapText(title, 16, 4)
  const titleSize = fitSize(titleLines, WIDTH, TYPE.display, 88)
  const yearLines = year === undefined ? [] : [String(year)]
  const body = [
    record(palette),
    element('rect', { x: MARGIN, y: MARGIN, width: 64, height: 6, fill: palette.accent }),
    textBlock(artistLines, {
      type: TYPE.caps,
      x: MARGIN,
      y: 100,
      size: fitSize(artistLines, WIDTH, TYPE.caps, 24),
      fill: palette.accent,
    }),
    textBlock(titleLines, {
      type: TYPE.display,
      x: MARGIN,
      y: 180 + Math.round(titleSize * 0.8),
      size: titleSize,
      fill: palette.text,
    }),
    textBlock(yearLines, { type: TYPE.caps, x: MARGIN, y: SIZE - MARGIN, size: 40, fill: palette.text }),
  ]
  return frame(palette, `${title} — ${artist}${year === undefined ? '' : `, ${year}`}`, body)
}

/** One or two letters standing for a name: the first letters of its first and last words. */
export function initials(name: string): string {
  const words = name.match(/[\p{L}\p{N}][\p{L}\p{N}\p{M}'’.-]*/gu) ?? []
  const picked = words.length > 1 ? [words[0], words.at(-1)] : words.length === 1 ? words : [name.trim()]
  return picked
    .map((word) => Array.from((word ?? '').normalize('NFC'))[0] ?? '?')
    .join('')
    .toLocaleUpperCase('es')
}

/** The picture of an artist: a monogram, the name under it and the band under that, in colours drawn from the name. */
export function artistCover(fields: ArtistCoverFields): string {
  const name = xmlChars(fields.name)
  const band = fields.band === undefined ? undefined : xmlChars(fields.band)
  const palette = paletteOf(name)
  const nameLines = wrapText(name, 18, 2)
  const nameSize = fitSize(nameLines, WIDTH, TYPE.display, 64)
  const nameY = 390 + Math.round(nameSize * 0.8)
  // A two-line name leaves room for one line of band.
  const bandLines = band ? wrapText(band, 40, 3 - nameLines.length) : []
  const bandY = nameY + leading(nameSize) * (nameLines.length - 1) + 48
  const centred = { x: SIZE / 2, anchor: 'middle' } as const
  const body = [
    element('circle', { cx: 300, cy: 200, r: 130, fill: palette.accent, 'fill-opacity': 0.16 }),
    element('circle', { cx: 300, cy: 200, r: 130, fill: 'none', stroke: palette.accent, 'stroke-width': 4 }),
    textBlock([initials(name)], { ...centred, type: TYPE.display, y: 240, size: 112, fill: palette.text }),
    textBlock(nameLines, { ...centred, type: TYPE.display, y: nameY, size: nameSize, fill: palette.text }),
    textBlock(bandLines, {
      ...centred,
      type: TYPE.label,
      y: bandY,
      size: fitSize(bandLines, WIDTH, TYPE.label, 24),
      fill: palette.accent,
    }),
  ]
  return frame(palette, band ? `${name} — ${band}` : name, body)
}
