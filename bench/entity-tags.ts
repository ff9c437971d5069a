/**
 * `bun bench/entity-tags.ts`: what conditional requests (issue 25) add to a read, in the process, measured apart from
 * everything else: the strong tag of an artist read fresh from the database (the SQL store hands out new objects, so
 * each read computes it; the document store computes it once per record version), beside the JSON text the read
 * serialises anyway; and the weak tag of an encoded list page (made once per encoded page, beside its bytes), beside
 * encoding that page. Small, typical and largest records; the ratio tag/serialise is the figure to read.
 */
import { weakTag } from '../src/http/conditional.ts'
import { artistTag } from '../src/store/entity-tag.ts'

const artist = (id: number, description: number) =>
  Object.freeze({
    id,
    name: 'Luis Alberto Spinetta',
    description: 'x'.repeat(description),
    band: 'Almendra',
    image: `/covers/artists/${id}.svg`,
  })

/** Median nanoseconds per call of `work` over `rounds` rounds of `n` calls. */
function timed(n: number, rounds: number, work: (i: number) => unknown): number {
  const medians: number[] = []
  for (let round = 0; round < rounds; round++) {
    const start = Bun.nanoseconds()
    for (let i = 0; i < n; i++) work(i)
    medians.push((Bun.nanoseconds() - start) / n)
  }
  return medians.sort((a, b) => a - b)[Math.floor(rounds / 2)] ?? Number.NaN
}

const encoder = new TextEncoder()
console.log(`load average: ${(await Bun.file('/proc/loadavg').text()).trim()}`)
for (const size of [200, 2_000, 10_000]) {
  // Fresh records each call, as the SQL store's reads give them: no cached tag or text.
  const records = Array.from({ length: 20_000 }, (_, i) => artist(i + 1, size))
  const tag = timed(records.length, 5, (i) => artistTag(artist(i + 1, size)))
  const json = timed(records.length, 5, (i) => JSON.stringify(artist(i + 1, size)))
  console.log(
    `artist with a ${size}-character description: tag ${(tag / 1000).toFixed(2)} µs, JSON.stringify ${(json / 1000).toFixed(2)} µs (tag/serialise ${(tag / json).toFixed(2)})`,
  )
}
for (const [items, size] of [
  [10, 200],
  [100, 10_000],
] as const) {
  const text = JSON.stringify({ data: Array.from({ length: items }, (_, i) => artist(i + 1, size)) })
  const encode = timed(200, 5, () => encoder.encode(text))
  const bytes = encoder.encode(text)
  const tag = timed(200, 5, () => weakTag(bytes))
  console.log(
    `page of ${items} artists (${(bytes.byteLength / 1024).toFixed(0)} KiB): weak tag ${(tag / 1000).toFixed(1)} µs, encoding it ${(encode / 1000).toFixed(1)} µs (tag/encode ${(tag / encode).toFixed(2)})`,
  )
}
