import { describe, expect, test } from 'bun:test'
import legends from '../../data/legends.json' with { type: 'json' }
import { albumCover, artistCover, initials } from '../../src/covers/cover.ts'
import { contrast, hslToHex, MIN_CONTRAST, paletteOf } from '../../src/covers/palette.ts'
import { wrapText } from '../../src/covers/wrap-text.ts'
import { escapeXml } from '../../src/covers/xml.ts'

/**
 * Problems that would make `svg` not well-formed XML or not self-contained: markup characters left raw in text,
 * characters XML forbids, and any reference that would make a viewer fetch something.
 */
function svgProblems(svg: string): string[] {
  const problems: string[] = []
  const text = svg.replace(/<[^<>]*>/g, '')
  if (/[<>]/.test(text)) problems.push('raw < or > in text')
  if (/&(?!(?:amp|lt|gt|quot|apos);)/.test(svg)) problems.push('an unescaped &')
  // biome-ignore lint/suspicious/noControlCharactersInRegex: looking for characters XML forbids.
  if (/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/.test(svg)) problems.push('a character XML forbids')
  if (/href|@import|<script|<image|<foreignObject|url\((?!#)/i.test(svg)) problems.push('an external reference')
  if (svg.replace('xmlns="http://www.w3.org/2000/svg"', '').includes('://')) problems.push('a URL')
  const opened = (svg.match(/<[a-zA-Z][^>]*[^/]>|<[a-zA-Z]+>/g) ?? []).length
  const closed = (svg.match(/<\/[a-zA-Z]+>/g) ?? []).length
  if (opened !== closed) problems.push(`${opened} elements opened, ${closed} closed`)
  return problems
}

const tricky = 'Tom & Jerry <b>"Ñandú"</b> \'¿y?\' \u0001 \ud800'

describe('albumCover and artistCover', () => {
  test('draw every seeded artist and album as well-formed, self-contained SVG', () => {
    const covers = legends.artists.flatMap((artist) => [
      artistCover({ name: artist.name, band: artist.band ?? undefined }),
      ...artist.albums.map((album) =>
        albumCover({ title: album.name, artist: artist.name, year: album.year ?? undefined }),
      ),
    ])
    expect(covers).toHaveLength(32 + 307)
    expect(covers.flatMap(svgProblems)).toEqual([])
  })

  test.each([
    ['an album', () => albumCover({ title: tricky, artist: tricky })],
    ['an artist', () => artistCover({ name: tricky, band: tricky })],
  ])('escape markup and drop what XML cannot hold for %s', (_, draw) => {
    const svg = draw()
    expect(svgProblems(svg)).toEqual([])
    expect(svg).toContain('Tom &amp; Jerry &lt;b&gt;&quot;Ñandú&quot;&lt;/b&gt;')
    expect(svg).not.toContain('<b>')
  })

  test('show the title, artist and year, and name the whole record in <title> for screen readers', () => {
    const svg = albumCover({ title: 'Artaud', artist: 'Luis Alberto Spinetta', year: 1973 })
    expect(svg).toStartWith('<svg xmlns="http://www.w3.org/2000/svg"')
    expect(svg).toContain('<title id="t-')
    expect(svg).toContain('>Artaud — Luis Alberto Spinetta, 1973</title>')
    expect(svg).toContain('>Artaud</tspan>')
    expect(svg).toContain('>LUIS ALBERTO SPINETTA</tspan>')
    expect(svg).toContain('>1973</tspan>')
    expect(albumCover({ title: 'Artaud', artist: 'Luis Alberto Spinetta' })).not.toContain('1973')
  })

  test('cut a long name with an ellipsis on the picture but keep it whole in <title>', () => {
    const name = `${'Larguísimo '.repeat(18)}fin`
    const svg = artistCover({ name })
    expect(svg).toContain(`<title id="t-${paletteOf(name).key}">${name}</title>`)
    expect(svg).toContain('…</tspan>')
    expect(svg).not.toContain('fin</tspan>')
  })

  test('are the same picture for the same record and differ between names', () => {
    const charly = { name: 'Charly García', band: 'Serú Girán' }
    expect(artistCover(charly)).toBe(artistCover({ ...charly }))
    const backgrounds = new Set(legends.artists.map((artist) => paletteOf(artist.name).from))
    expect(backgrounds.size).toBeGreaterThan(20)
  })

  test('use no named fonts but generic fallbacks that exist everywhere', () => {
    const families = [...albumCover({ title: 'A', artist: 'B', year: 1 }).matchAll(/font-family="([^"]*)"/g)]
    expect(families.length).toBeGreaterThan(0)
    for (const [, family] of families) expect(family).toMatch(/, (serif|sans-serif)$/)
  })
})

describe('paletteOf', () => {
  test('keeps text and accent readable on both background stops, whatever the name', () => {
    let worst = Number.POSITIVE_INFINITY
    for (let i = 0; i < 3000; i++) {
      const { from, to, accent, text } = paletteOf(`name ${i}`)
      worst = Math.min(worst, contrast(text, from), contrast(text, to), contrast(accent, from), contrast(accent, to))
    }
    expect(worst).toBeGreaterThanOrEqual(MIN_CONTRAST)
  })

  test('converts HSL to hex', () => {
    expect([hslToHex(0, 1, 0.5), hslToHex(120, 1, 0.25), hslToHex(240, 1, 0.5), hslToHex(0, 0, 1)]).toEqual([
      '#ff0000',
      '#008000',
      '#0000ff',
      '#ffffff',
    ])
  })
})

describe('helpers', () => {
  test.each([
    ['Luis Alberto Spinetta', 'LS'],
    ['Pappo', 'P'],
    ['Ángel "el Tano" Ñúñez', 'ÁÑ'],
    ['¡¿!', '¡'],
  ])('initials(%p) is %p', (name, expected) => {
    expect(initials(name)).toBe(expected)
  })

  test.each([
    ['Los niños que escriben en el cielo', 16, 4, ['Los niños que', 'escriben en el', 'cielo']],
    ['Desatormentándonos', 10, 4, ['Desatormen', 'tándonos']],
    ['uno dos tres cuatro cinco', 9, 2, ['uno dos', 'tres…']],
    ['  Pan  ', 16, 4, ['Pan']],
  ])('wrapText(%p, %p, %p)', (text, width, lines, expected) => {
    expect(wrapText(text, width, lines)).toEqual(expected)
  })

  test('escapeXml escapes the five markup characters and never splits a character', () => {
    expect(escapeXml(`<a href="x">'&'</a>`)).toBe('&lt;a href=&quot;x&quot;&gt;&apos;&amp;&apos;&lt;/a&gt;')
    expect(escapeXml('🎸\ud800x')).toBe('🎸\ufffdx')
  })
})
