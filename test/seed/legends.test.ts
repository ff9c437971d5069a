import { describe, expect, test } from 'bun:test'
import { Value } from '@sinclair/typebox/value'
import legends from '../../data/legends.json' with { type: 'json' }
import { AlbumInput } from '../../src/model/album.ts'
import { ArtistInput } from '../../src/model/artist.ts'

// The curated catalogue is data a reader trusts: these checks hold it to the API's own rules, then to the shape a
// careful editor would give it. They do not prove facts; they catch typos, slips and invented data.
const latestYear = new Date().getUTCFullYear() + 1
const albumInput = AlbumInput(latestYear)
const artists = legends.artists
const albums = artists.flatMap((artist) => artist.albums.map((album) => ({ artist, album })))

/** An entry of the file without the editorial `sources` and `note`, which the API never sees: what it must accept. */
const apiFields = <T extends object>(entry: T) => {
  const { sources: _sources, note: _note, ...fields } = entry as T & { sources?: unknown; note?: unknown }
  return fields
}

/** The artist of this name, and the album of this title from the artist's list. */
const artistNamed = (name: string) => artists.find((artist) => artist.name === name)
const albumOf = (artist: string, title: string) =>
  (artistNamed(artist)?.albums as { name: string; year: number }[] | undefined)?.find((album) => album.name === title)

/** Sentences of a description: a split after ., ! or ? followed by a capital, a quote or an opening mark. */
const sentences = (text: string) => text.split(/(?<=[.!?])\s+(?=[\p{Lu}"“¿¡(])/u)

describe('data/legends.json', () => {
  test('holds the 32 artists and 289 albums the researcher curated', () => {
    expect(artists).toHaveLength(32)
    expect(albums).toHaveLength(289)
  })

  test.each(artists.map((artist) => [artist.name, artist] as const))('%s is a valid ArtistInput', (_, artist) => {
    const { albums: _albums, ...fields } = artist
    expect([...Value.Errors(ArtistInput, apiFields(fields))]).toEqual([])
  })

  test('every album is a valid AlbumInput', () => {
    const invalid = albums.filter(({ album }) => !Value.Check(albumInput, apiFields(album)))
    expect(invalid.map(({ artist, album }) => `${artist.name}: ${album.name}`)).toEqual([])
  })

  test('points at no remote picture, so the catalogue works offline (records get generated covers)', () => {
    const records = [...artists, ...albums.map(({ album }) => album)] as { image?: unknown }[]
    const remote = records.filter((record) => typeof record.image === 'string' && !record.image.startsWith('/'))
    expect(remote).toEqual([])
  })

  test('names and titles are trimmed, single-spaced and unique', () => {
    const untidy = [...artists.map((a) => a.name), ...albums.map(({ album }) => album.name)].filter(
      (name) => name !== name.trim() || /\s{2}/.test(name) || name !== name.normalize('NFC'),
    )
    expect(untidy).toEqual([])
    expect(new Set(artists.map((artist) => artist.name)).size).toBe(artists.length)
    for (const artist of artists)
      expect(new Set(artist.albums.map((album) => album.name)).size, artist.name).toBe(artist.albums.length)
  })

  test('years are those of recorded Argentine rock and listed in order', () => {
    for (const artist of artists) {
      const years = artist.albums.map((album) => album.year)
      expect(
        years.every((year) => year >= 1965 && year <= new Date().getUTCFullYear()),
        artist.name,
      ).toBe(true)
      expect(years, artist.name).toEqual([...years].sort((a, b) => a - b))
    }
  })

  test('albums fall within the lives the descriptions give (posthumous releases allowed two years)', () => {
    const wrong: string[] = []
    for (const { name, description, albums: list } of artists) {
      const life = /\((\d{4})–(\d{4})\)/.exec(description)
      const born = Number(life?.[1] ?? /born[^.)]*?(\d{4})/.exec(description)?.[1] ?? Number.NaN)
      const died = Number(life?.[2] ?? Number.NaN)
      const years = list.map((album) => album.year)
      if (Math.min(...years) < born + 14) wrong.push(`${name}: first album ${Math.min(...years)}, born ${born}`)
      if (Math.max(...years) > died + 2) wrong.push(`${name}: last album ${Math.max(...years)}, died ${died}`)
    }
    expect(wrong).toEqual([])
  })

  test.each(artists.map((artist) => [artist.name, artist] as const))(
    '%s has a description of 2–3 sentences naming the artist and the band',
    (name, artist) => {
      const text = artist.description
      expect(sentences(text).length).toBeGreaterThanOrEqual(2)
      expect(sentences(text).length).toBeLessThanOrEqual(3)
      expect(text).toMatch(/[.!?]$/)
      expect(text).toContain(name.split(' ').at(-1) as string)
      if (artist.band) expect(text).toContain(artist.band)
    },
  )

  // Facts corrected or added against published discographies: each names its sources in the file.
  describe('as checked against published discographies', () => {
    test.each([
      ['Fito Páez', 'Los años salvajes', 2021],
      ['León Gieco', 'El fantasma de Canterville', 1977],
    ])('%s: %s came out in %i', (artist, title, year) => {
      expect(albumOf(artist, title)?.year).toBe(year)
    })

    test('Javier Martínez is described as he is now: died in 2024', () => {
      const description = artistNamed('Javier Martínez')?.description ?? ''
      expect(description).toStartWith('Javier Martínez (1946–2024) was ')
      expect(description).not.toContain(' is an ')
      expect(description).toContain('Manal')
    })

    test.each([
      ['Indio Solari', 'Lobo suelto', 1993],
      ['Indio Solari', 'Cordero atado', 1993],
      ['Vicentico', 'Yo te avisé!!', 1987],
      ['León Gieco', '4º LP', 1978],
      ['Ricardo Mollo', 'Otroletravaladna', 1995],
    ])('%s has the landmark %s (%i)', (artist, title, year) => {
      expect(albumOf(artist, title)?.year).toBe(year)
    })

    test.each([
      ['Moris', 'Los Beatniks', ['30 minutos de vida', 'Fiebre de vivir', 'Mundo moderno', 'Sur y después']],
      ['Willy Quiroga', 'Vox Dei', ['Caliente', 'La Biblia', 'Jeremías, pies de plomo', 'Estamos en la pecera']],
      ['Federico Moura', 'Virus', ['Wadu Wadu', 'Recrudece', 'Agujero interior', 'Locura', 'Superficies de placer']],
    ])('adds %s (%s) with at least four confirmed albums', (name, band, titles) => {
      const artist = artistNamed(name)
      expect(artist?.band).toBe(band)
      expect(artist?.albums.length).toBeGreaterThanOrEqual(4)
      expect(artist?.albums.map((album) => album.name)).toEqual(expect.arrayContaining(titles))
    })

    /** Every corrected or added entry: these must each carry two sources or more. */
    const checked = () => [
      albumOf('Fito Páez', 'Los años salvajes'),
      albumOf('León Gieco', 'El fantasma de Canterville'),
      albumOf('León Gieco', '4º LP'),
      artistNamed('Javier Martínez'),
      albumOf('Indio Solari', 'Lobo suelto'),
      albumOf('Indio Solari', 'Cordero atado'),
      albumOf('Vicentico', 'Yo te avisé!!'),
      ...['Moris', 'Willy Quiroga', 'Federico Moura'].flatMap((name) => {
        const artist = artistNamed(name)
        return [artist, ...(artist?.albums ?? [])]
      }),
    ]

    test('every corrected or added entry names at least two distinct sources', () => {
      const entries = checked() as ({ name: string; sources?: string[] } | undefined)[]
      expect(entries).toHaveLength(7 + 3 + 7 + 4 + 6)
      const short = entries.filter((entry) => new Set(entry?.sources ?? []).size < 2).map((entry) => entry?.name)
      expect(short).toEqual([])
    })

    test('sources are absolute http(s) addresses, and notes are sentences', () => {
      const records = [...artists, ...albums.map(({ album }) => album)] as { sources?: string[]; note?: string }[]
      const sources = records.flatMap((record) => record.sources ?? [])
      expect(sources.length).toBeGreaterThan(0)
      expect(sources.filter((source) => !URL.canParse(source) || !/^https?:$/.test(new URL(source).protocol))).toEqual(
        [],
      )
      const notes = records.flatMap((record) => record.note ?? [])
      expect(notes.filter((note) => !/^\S[\s\S]*[.!?]$/.test(note))).toEqual([])
    })
  })

  // Albums checked one by one against published sources: each change names its sources beside the entry, and its note
  // says what was changed (a removal, a correction, an album that is not a studio album, an addition).
  describe('as checked album by album against published sources', () => {
    /** The album entry of this title, with its editorial fields. */
    const entry = (artist: string, title: string) =>
      ((artistNamed(artist)?.albums ?? []) as { name: string; year: number; sources?: string[]; note?: string }[]).find(
        (album) => album.name === title,
      )
    const noteOf = (name: string) => (artistNamed(name) as { note?: string } | undefined)?.note ?? ''

    test.each([
      ['Andrés Calamaro', 'Romaré'],
      ['Pappo', 'Caso cerrado'],
      ['Indio Solari', 'En directo'],
    ])('%s: %s, which no two sources confirm, is gone, and the artist says why', (artist, title) => {
      expect(albumOf(artist, title)).toBeUndefined()
      expect(noteOf(artist)).toStartWith(`Issue 22: ${title} (`)
      expect(noteOf(artist)).toContain('removed')
    })

    test('Girando is dated 2004, when it was recorded and reviewed, not 2003', () => {
      expect(albumOf('Juanse', 'Girando')?.year).toBe(2004)
      expect(entry('Juanse', 'Girando')?.note).toStartWith('Issue 22: the year was 2003, corrected to 2004.')
    })

    /** Live albums, EPs and compilations: each says what it is, and no description calls it a studio album. */
    const notStudio = [
      ['Gustavo Cerati', 'Ruido blanco', 'a live album'],
      ['Gustavo Cerati', 'Comfort y música para volar', 'MTV Unplugged'],
      ['Gustavo Cerati', '11 episodios sinfónicos', 'a live album'],
      ['Charly García', 'Adiós Sui Generis', 'a live album'],
      ['Charly García', 'No llores por mí, Argentina', 'a live album'],
      ['Luis Alberto Spinetta', 'Camalotus', 'an EP'],
      ['Luca Prodan', 'Fiebre', 'posthumous'],
      ['Miguel Mateos', 'Rockas vivas', 'a live album'],
      ['Vicentico', 'Vasos vacíos', 'a compilation'],
    ] as const

    test.each(notStudio)('%s: %s says in its note that it is not a studio album (%s)', (artist, title, kind) => {
      const note = entry(artist, title)?.note ?? ''
      expect(note).toStartWith('Issue 22: ')
      expect(note).toContain(kind)
      expect(note).toMatch(/not (a studio album|an album)/)
    })

    test('no description presents a live album, EP or compilation as a studio album', () => {
      const wrong = notStudio.filter(([artist, title]) => {
        const description = artistNamed(artist)?.description ?? ''
        return sentences(description).some((sentence) => sentence.includes(title) && /studio/i.test(sentence))
      })
      expect(wrong).toEqual([])
      expect(artistNamed('Miguel Mateos')?.description).toContain('live album Rockas vivas')
    })

    const added = [
      ['Luis Alberto Spinetta', 'Spinettalandia y sus amigos', 1971],
      ['Raúl Porchetto', 'Che pibe', 1982],
      ['Raúl Porchetto', 'Reina madre', 1983],
      ['Ricardo Iorio', 'Almafuerte', 1998],
      ['Skay Beilinson', 'El engranaje de cristal', 2016],
      ['Skay Beilinson', 'En el corazón del laberinto', 2019],
      ['Fabiana Cantilo', 'Algo mejor', 1991],
      ['Celeste Carballo', 'Celeste y La Generación', 1985],
      ['Miguel Mateos', 'Zas', 1982],
      ['Pity Álvarez', 'Buen día', 2001],
    ] as const

    test.each(added)('%s has the essential studio album %s (%i), marked as added', (artist, title, year) => {
      expect(albumOf(artist, title)?.year).toBe(year)
      expect(entry(artist, title)?.note).toStartWith('Issue 22: added.')
    })

    test('every album corrected, annotated or added names at least two distinct sources', () => {
      const checked = [['Juanse', 'Girando'], ...notStudio, ...added].map(([artist, title]) => entry(artist, title))
      expect(checked).toHaveLength(1 + 9 + 10)
      const short = checked.filter((album) => new Set(album?.sources ?? []).size < 2).map((album) => album?.name)
      expect(short).toEqual([])
    })
  })
})
