import { describe, expect, test } from 'bun:test'
import { Value } from '@sinclair/typebox/value'
import legends from '../../data/legends.json' with { type: 'json' }
import { ALBUM_KINDS, AlbumInput } from '../../src/model/album.ts'
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
  test('holds the 32 artists and 307 albums the researcher curated', () => {
    expect(artists).toHaveLength(32)
    expect(albums).toHaveLength(307)
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
      ['Indio Solari', 'Lobo suelto, cordero atado', 1993],
      ['Vicentico', 'Yo te avisé!!', 1987],
      ['León Gieco', '4º LP', 1979],
      ['Ricardo Mollo', 'Otroletravaladna', 1995],
    ])('%s has the landmark %s (%i)', (artist, title, year) => {
      expect(albumOf(artist, title)?.year).toBe(year)
    })

    test.each([
      ['Moris', null, ['30 minutos de vida', 'Fiebre de vivir', 'Mundo moderno', 'Sur y después']],
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
      albumOf('Indio Solari', 'Lobo suelto, cordero atado'),
      albumOf('Vicentico', 'Yo te avisé!!'),
      ...['Moris', 'Willy Quiroga', 'Federico Moura'].flatMap((name) => {
        const artist = artistNamed(name)
        return [artist, ...(artist?.albums ?? [])]
      }),
    ]

    test('every corrected or added entry names at least two distinct sources', () => {
      const entries = checked() as ({ name: string; sources?: string[] } | undefined)[]
      expect(entries).toHaveLength(6 + 3 + 7 + 5 + 6)
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
      expect(noteOf(artist)).toStartWith(`${title} (`)
      expect(noteOf(artist)).toContain('removed')
    })

    test('Girando is dated 2004, when it was recorded and reviewed, not 2003', () => {
      expect(albumOf('Juanse', 'Girando')?.year).toBe(2004)
      expect(entry('Juanse', 'Girando')?.note).toStartWith('The year was 2003, corrected to 2004.')
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
      expect(note.toLowerCase()).toContain(kind.toLowerCase())
      expect(note).toMatch(/not (a studio album|an album)/i)
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
      expect(entry(artist, title)?.note).toStartWith('Added.')
    })

    test('every album corrected, annotated or added names at least two distinct sources', () => {
      const checked = [['Juanse', 'Girando'], ...notStudio, ...added].map(([artist, title]) => entry(artist, title))
      expect(checked).toHaveLength(1 + 9 + 10)
      const short = checked.filter((album) => new Set(album?.sources ?? []).size < 2).map((album) => album?.name)
      expect(short).toEqual([])
    })
  })

  // The rules of docs/api.md, "The legends": titles and years of the first release, one kind per album, one list per
  // band's albums. Each entry corrected, annotated or added names its sources and says what changed in its note.
  describe('as checked against the rules for titles, years, kinds and bands', () => {
    type Entry = { name: string; year: number; kind?: string; sources?: string[]; note?: string }
    const entry = (artist: string, title: string) =>
      ((artistNamed(artist)?.albums ?? []) as Entry[]).find((album) => album.name === title)

    test.each([
      ['Moris', 'Ciudad de guitarras callejeras', 1974, 'the year was 1973, corrected to 1974'],
      ['León Gieco', '4º LP', 1979, 'the year was 1978, corrected to 1979'],
      ['Luis Alberto Spinetta', 'Almendra', 1970, 'the year was 1969, corrected to 1970'],
      ['Indio Solari', 'Lobo suelto, cordero atado', 1993, 'one entry, as released'],
      ['Fabiana Cantilo', 'Inconsciente colectivo', 2005, '2005 by the rule for years'],
    ] as const)('%s: %s is dated %i, and its note says why with two sources or more', (artist, title, year, says) => {
      const album = entry(artist, title)
      expect(album?.year).toBe(year)
      expect(album?.note?.toLowerCase()).toContain(says.toLowerCase())
      expect(new Set(album?.sources).size).toBeGreaterThanOrEqual(2)
    })

    test('the two discs of Lobo suelto, cordero atado are one entry, not two', () => {
      const titles = (artistNamed('Indio Solari')?.albums ?? []).map((album) => album.name)
      expect(titles.filter((title) => /lobo suelto|cordero atado/i.test(title))).toEqual(['Lobo suelto, cordero atado'])
    })

    test.each([
      ['Indio Solari', '¡Bang! ¡Bang! Estás liquidado', 'The spelling is disputed'],
      ['Hilda Lizarazu', 'Perro de playa', 'the year is disputed'],
      ['Luis Alberto Spinetta', 'Spinettalandia y sus amigos', 'first released in 1971 by RCA as "Almendra"'],
    ])('%s: %s says in its note what is disputed or was first released', (artist, title, says) => {
      expect(entry(artist, title)?.note?.toLowerCase()).toContain(says.toLowerCase())
      expect(new Set(entry(artist, title)?.sources).size).toBeGreaterThanOrEqual(2)
    })

    test('the descriptions corrected say what the sources do', () => {
      const described = (name: string) => artistNamed(name)?.description ?? ''
      expect(described('Gustavo Cerati')).toContain('Colores santos (1992)')
      expect(described('Gustavo Cerati')).toContain('Amor amarillo (1993)')
      expect(described('Gustavo Cerati')).not.toContain('After the band split in 1997 he pursued')
      expect(described('Pity Álvarez')).toContain('On 12 July 2018 he shot and killed Cristian Díaz')
      expect(described('Pity Álvarez')).toContain('in February 2023 the trial was suspended')
      const pappo = described('Pappo')
      expect(pappo.indexOf('Los Abuelos de la Nada')).toBeLessThan(pappo.indexOf('Los Gatos'))
      expect(described('Ricardo Mollo')).not.toContain('best-selling')
      // Each note says what the description got wrong, beside its sources.
      for (const name of ['Gustavo Cerati', 'Pity Álvarez', 'Pappo', 'Ricardo Mollo'])
        expect((artistNamed(name) as { note?: string }).note, name).toMatch(/\bdescription\b/)
    })

    const phrases: [string, RegExp][] = [
      ['live', /\ba live album\b/i],
      ['ep', /\ban EP\b/i],
      ['compilation', /\ba compilation\b/i],
      ['soundtrack', /\ba soundtrack\b/i],
      ['re-recordings', /\ban album of re-recordings\b/i],
    ]
    // "not a live album", "not an album of re-recordings": a note may say what an album is not.
    const negated = /\bnot (?:a|an|an album of) (?:live album|EP|compilation|soundtrack|re-recordings)\b/gi
    /** The kinds a note says its album is, from the phrases above. */
    const kindsSaid = (note: string) =>
      phrases.filter(([, phrase]) => phrase.test(note.replace(negated, ''))).map(([kind]) => kind)

    test('every album has one kind of release, of the API’s list', () => {
      const kinds = albums.map(({ album }) => (album as Entry).kind)
      expect(kinds.filter((kind) => !ALBUM_KINDS.includes(kind as never))).toEqual([])
    })

    test('every album whose note says live, EP, compilation, soundtrack or re-recordings has that kind', () => {
      const wrong = albums
        .map(({ artist, album }) => ({ artist: artist.name, ...(album as Entry) }))
        .filter(({ note, kind }) => {
          const said = kindsSaid(note ?? '')
          return said.length > 0 && (said.length > 1 || said[0] !== kind)
        })
        .map(({ artist, name, kind, note }) => `${artist}: ${name} is ${kind}, its note says ${kindsSaid(note ?? '')}`)
      expect(wrong).toEqual([])
    })

    test('every album of another kind than studio says which in its note, with its sources', () => {
      const unsaid = albums
        .map(({ artist, album }) => ({ artist: artist.name, ...(album as Entry) }))
        .filter(
          ({ kind, note, sources }) => kind !== 'studio' && (kindsSaid(note ?? '')[0] !== kind || !sources?.length),
        )
        .map(({ artist, name }) => `${artist}: ${name}`)
      expect(unsaid).toEqual([])
      const kindOf = (artist: string, title: string) => entry(artist, title)?.kind
      expect(kindOf('Pappo', 'Pappo & Amigos')).toBe('re-recordings')
      expect(kindOf('Pappo', "Pappo's Blues Volumen 7")).toBe('re-recordings')
      expect(kindOf('Vicentico', 'Último acto')).toBe('studio')
      expect(entry('Vicentico', 'Último acto')?.note).toContain('not an album of re-recordings')
      expect(entry('Juanse', 'Expreso bongo')?.note).toContain("Juanse's own album, not a Ratones Paranoicos album")
      expect(kindOf('León Gieco', '4º LP')).toBe('studio')
    })

    test('a band’s album is listed under one artist; only a collective’s, PorSuiGieco, under each of its members', () => {
      const listings = new Map<string, string[]>()
      for (const { artist, album } of albums) {
        const key = `${album.name} (${album.year})`
        listings.set(key, [...(listings.get(key) ?? []), artist.name])
      }
      const shared = [...listings].filter(([, under]) => under.length > 1)
      expect(shared).toEqual([['PorSuiGieco (1976)', ['Charly García', 'León Gieco', 'Nito Mestre', 'Raúl Porchetto']]])
    })

    test('band names a band of the artist’s own list, never a collective, a single or a passing membership', () => {
      const bands = Object.fromEntries(artists.map((artist) => [artist.name, artist.band]))
      expect(bands).toMatchObject({
        'León Gieco': null,
        'Raúl Porchetto': null,
        'Fabiana Cantilo': null,
        Moris: null,
        'Skay Beilinson': null,
        'David Lebón': null,
        'Pedro Aznar': null,
        'Pity Álvarez': 'Intoxicados',
        'Nito Mestre': 'Los Desconocidos de Siempre',
        'Luis Alberto Spinetta': 'Spinetta Jade',
      })
    })

    const added = [
      ['Luis Alberto Spinetta', "A 18' del sol", 1977],
      ['Luis Alberto Spinetta', 'Only Love Can Sustain', 1979],
      ['Charly García', 'Pubis angelical', 1982],
      ['Charly García', "Serú '92", 1992],
      ['Charly García', 'Sinfonías para adolescentes', 2000],
      ['Pappo', 'Aeroblus', 1977],
      ['Luca Prodan', 'Corpiños en la madrugada', 1983],
      ['Litto Nebbia', 'Beat N° 1', 1969],
      ['Litto Nebbia', 'Muerte en la catedral', 1973],
      ['Willy Quiroga', 'Es una nube, no hay duda', 1973],
      ['Ricardo Iorio', 'Ultimando', 2003],
      ['Ricardo Iorio', 'Toro y pampa', 2006],
      ['Pity Álvarez', 'El exilio de las especies', 2008],
      ['Nito Mestre', 'Nito Mestre y los Desconocidos de Siempre 2', 1978],
      ['Fito Páez', 'Futurología Arlt', 2022],
      ['Fito Páez', 'The Golden Light', 2022],
    ] as const

    test.each(added)('%s has %s (%i), added with two sources or more', (artist, title, year) => {
      expect(entry(artist, title)?.year).toBe(year)
      expect(entry(artist, title)?.note).toStartWith('Added.')
      expect(new Set(entry(artist, title)?.sources).size).toBeGreaterThanOrEqual(2)
    })

    test('nothing one source alone supports is added', () => {
      for (const [artist, title] of [
        ['Pappo', 'Caso cerrado'],
        ['Pappo', 'Blues local'],
        ['Luis Alberto Spinetta', 'Fuego gris'],
        ['David Lebón', 'Siempre estaré'],
        ['Juanse', 'Electroshock, nena'],
      ] as const)
        expect(entry(artist, title), `${artist}: ${title}`).toBeUndefined()
    })
  })
})
