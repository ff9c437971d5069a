import { describe, expect, test } from 'bun:test'
import { parseCatalogue, readCatalogueFile, SeedError } from '../../src/seed/seed.ts'
import { removeDir, tempDir } from '../support/binary.ts'

const LATEST = 2027
const artist = (fields: Record<string, unknown> = {}) => ({ name: 'Spinetta', albums: [], ...fields })
const catalogue = (...artists: unknown[]) => ({ artists })

/** The message parseCatalogue throws for `value`, or undefined when it accepts it. */
function rejection(value: unknown): string | undefined {
  try {
    parseCatalogue(value, 'fixture.json', LATEST)
    return undefined
  } catch (error) {
    expect(error).toBeInstanceOf(SeedError)
    return (error as Error).message
  }
}

describe('parseCatalogue', () => {
  test.each([
    ['a file that is not an object', null, '(root): must be a JSON object'],
    ['no artists', {}, '/artists: is required'],
    ['an unknown top-level property', { artists: [], extra: 1 }, '/extra: is not a known property (known: artists)'],
    ['an artist that is not an object', catalogue(3), '/artists/0: must be a JSON object'],
    ['a missing name', catalogue({ albums: [] }), '/artists/0/name: is required'],
    ['missing albums', catalogue({ name: 'Pappo' }), '/artists/0/albums: is required'],
    [
      'a blank name',
      catalogue(artist({ name: '   ' })),
      '/artists/0/name: must be a string of 1–200 characters, not blank',
    ],
    [
      'a name over 200 characters',
      catalogue(artist({ name: 'x'.repeat(201) })),
      '/artists/0/name: must be a string of 1–200',
    ],
    ['an id (the store assigns them)', catalogue(artist({ id: 4 })), '/artists/0/id: is not a known property'],
    [
      'a relative image',
      catalogue(artist({ image: 'covers/1.svg' })),
      '/artists/0/image: must be an absolute http(s) URL',
    ],
    ['a band that is not text', catalogue(artist({ band: 7 })), '/artists/0/band: must be a string of at most 200'],
    ['albums that are not a list', catalogue(artist({ albums: {} })), '/artists/0/albums: must be an array'],
    [
      'a year as text',
      catalogue(artist(), artist({ albums: [{ name: 'A' }, { name: 'B', year: '1973' }] })),
      '/artists/1/albums/1/year: must be an integer from 1900 to 2027 or null',
    ],
    [
      'a year after next year',
      catalogue(artist({ albums: [{ name: 'A', year: 2028 }] })),
      '/artists/0/albums/0/year: must be an integer from 1900 to 2027',
    ],
    [
      'an album without a name',
      catalogue(artist({ albums: [{ year: 1973 }] })),
      '/artists/0/albums/0/name: is required',
    ],
    [
      'an unknown album property',
      catalogue(artist({ albums: [{ name: 'A', tracks: 9 }] })),
      '/artists/0/albums/0/tracks: is not a known property (known: name, year, image, kind, sources, note)',
    ],
    [
      'an unknown artist property beside the editorial ones',
      catalogue(artist({ sources: ['https://example.com'], genre: 'rock' })),
      '/artists/0/genre: is not a known property (known: name, description, image, band, sources, note, albums)',
    ],
    [
      'sources that are not a list',
      catalogue(artist({ sources: 'https://example.com' })),
      '/artists/0/sources: must be a list of at least one source, each a non-blank string',
    ],
    [
      'an empty list of sources',
      catalogue(artist({ albums: [{ name: 'A', sources: [] }] })),
      '/artists/0/albums/0/sources: must be a list of at least one source, each a non-blank string',
    ],
    [
      'a blank source',
      catalogue(artist({ sources: ['https://example.com', '  '] })),
      '/artists/0/sources/1: must be a non-blank string',
    ],
    ['a note that is not text', catalogue(artist({ note: 3 })), '/artists/0/note: must be a non-blank string'],
    [
      'a blank note',
      catalogue(artist({ albums: [{ name: 'A', note: '' }] })),
      '/artists/0/albums/0/note: must be a non-blank string',
    ],
  ])('rejects %s, naming the file, the JSON pointer and the problem', (_, value, expected) => {
    const message = rejection(value)
    expect(message).toStartWith('fixture.json is not a valid catalogue:\n')
    expect(message).toContain(`\nfixture.json: ${expected}`)
  })

  test('lists every problem on its own line, up to ten, and says when there are more', () => {
    const message = rejection(catalogue(...Array.from({ length: 12 }, () => ({ name: '', albums: [] }))))
    const lines = (message as string).split('\n')
    expect(lines).toHaveLength(12)
    expect(lines.slice(1, 11)).toEqual(
      Array.from(
        { length: 10 },
        (_, i) => `fixture.json: /artists/${i}/name: must be a string of 1–200 characters, not blank`,
      ),
    )
    expect(lines[11]).toBe('fixture.json: (more problems not shown)')
  })

  test('reports a missing name once, not once per rule it breaks', () => {
    expect((rejection(catalogue({ albums: [] })) as string).split('\n')).toHaveLength(2)
  })

  test('accepts sources and notes on artists and albums, and leaves them out of the entries', () => {
    const sources = ['https://example.com/discography', 'A book, page 12']
    const entries = parseCatalogue(
      catalogue(
        artist({
          name: 'Moris',
          sources,
          note: 'Checked twice.',
          albums: [{ name: '30 minutos de vida', year: 1970, sources, note: 'Mandioca.' }],
        }),
      ),
      'fixture.json',
      LATEST,
    )
    expect(JSON.parse(JSON.stringify(entries))).toStrictEqual([
      { name: 'Moris', albums: [{ name: '30 minutos de vida', year: 1970, kind: 'studio' }] },
    ])
  })

  test('accepts the smallest catalogue: artists with a name and a list of albums, nothing else', () => {
    expect(parseCatalogue(catalogue({ name: 'Pappo', albums: [] }), 'fixture.json', LATEST)).toEqual([
      { name: 'Pappo', albums: [] },
    ])
  })
})

describe('readCatalogueFile', () => {
  test.each([
    ['a missing file', undefined, /^cannot read catalogue .*missing\.json: /],
    ['a file that is not JSON', '{"artists": [', /^.*missing\.json is not valid JSON: /],
  ])('names the file for %s', async (_, content, expected) => {
    const dir = tempDir()
    try {
      const file = `${dir}/missing.json`
      if (content !== undefined) await Bun.write(file, content)
      const error = await readCatalogueFile(file).catch((caught: unknown) => caught)
      expect(error).toBeInstanceOf(SeedError)
      expect((error as Error).message).toMatch(expected)
    } finally {
      removeDir(dir)
    }
  })
})
