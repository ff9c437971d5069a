import { expect, test } from 'bun:test'
import legends from '../../data/legends.json' with { type: 'json' }
import { builtInCatalogue, parseCatalogue } from '../../src/seed/seed.ts'

// The built-in catalogue is checked and converted when the executable is built (src/seed/built-in.ts, a macro):
// what `--seed` loads must be exactly what checking data/legends.json at start-up gives, keys left unset included.
test('the embedded catalogue is data/legends.json as the catalogue reader gives it', () => {
  const read = parseCatalogue(legends, 'the built-in catalogue')
  const embedded = builtInCatalogue()
  expect(embedded).toStrictEqual(read)
  expect(embedded.map((entry) => Object.keys(entry))).toEqual(read.map((entry) => Object.keys(entry)))
  expect(embedded.flatMap((entry) => entry.albums.map((album) => Object.keys(album)))).toEqual(
    read.flatMap((entry) => entry.albums.map((album) => Object.keys(album))),
  )
})

test('each call gives a new copy, which a caller may change without changing the next', () => {
  const first = builtInCatalogue()
  expect(builtInCatalogue()).not.toBe(first)
  expect(builtInCatalogue()[0]).not.toBe(first[0])
})
