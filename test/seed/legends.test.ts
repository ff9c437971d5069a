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

/** Sentences of a description: a split after ., ! or ? followed by a capital, a quote or an opening mark. */
const sentences = (text: string) => text.split(/(?<=[.!?])\s+(?=[\p{Lu}"“¿¡(])/u)

describe('data/legends.json', () => {
  test('holds the 29 artists and 260 albums the researcher curated', () => {
    expect(artists).toHaveLength(29)
    expect(albums).toHaveLength(260)
  })

  test.each(artists.map((artist) => [artist.name, artist] as const))('%s is a valid ArtistInput', (_, artist) => {
    const { albums: _albums, ...fields } = artist
    expect([...Value.Errors(ArtistInput, fields)]).toEqual([])
  })

  test('every album is a valid AlbumInput', () => {
    const invalid = albums.filter(({ album }) => !Value.Check(albumInput, album))
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
})
