/**
 * `bun bench/search.ts [--artists N] [--runs N] [--write]`: how fast the artist list answers a search (`q`) and a
 * name order (`sort`) over a large catalogue, in-process through `app.handle` (routing, validation, the store and
 * serialising included; no socket). Each case runs `--runs` times after a warm-up; the table gives the median and
 * the 95th percentile. Also times what is built on first use (the search text, the name order) and what a write
 * costs the next search. `--write` records the section in bench/RESULTS.md.
 */
import { loadavg } from 'node:os'
import { join } from 'node:path'
import { createApp } from '../src/app.ts'
import { parseCatalogue } from '../src/seed/seed.ts'
import { openMemoryStore } from '../src/store/document/memory.ts'
import { writeCatalogue } from './catalogue.ts'
import { describeMachine } from './machine.ts'
import { table } from './markdown.ts'
import { writeNamedSection } from './results-file.ts'

const KEY = 'bench-key'

const args = process.argv.slice(2)
const option = (name: string, fallback: number) => {
  const at = args.indexOf(name)
  return at >= 0 ? Number(args[at + 1]) : fallback
}
const ARTISTS = option('--artists', 100_000)
const RUNS = option('--runs', 200)

const CASES: [string, string][] = [
  ['a page, no search (the baseline)', '/api/v1/artists?offset=50000'],
  ['`q=zzz`: no match', '/api/v1/artists?q=zzz'],
  ['`q=%2342424`: a few matches', '/api/v1/artists?q=%2342424'],
  ['`q=garcia`: 1 artist in 29', '/api/v1/artists?q=garcia'],
  ['`q=ser%C3%BA`: 3 in 29 (by band)', '/api/v1/artists?q=ser%C3%BA'],
  ['`q=a`: nearly all', '/api/v1/artists?q=a'],
  ['`sort=name`, a page in the middle', '/api/v1/artists?sort=name&offset=50000'],
  ['`q=garcia&sort=-name`', '/api/v1/artists?q=garcia&sort=-name'],
  ['`q=a&sort=name`: nearly all, by name', '/api/v1/artists?q=a&sort=name'],
]

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]
const ms = (value: number | undefined) => (value === undefined ? '' : value < 1 ? value.toFixed(3) : value.toFixed(2))

async function main() {
  const file = join(import.meta.dir, '.work', `search-${ARTISTS}.json`)
  await writeCatalogue(file, ARTISTS)
  const store = openMemoryStore()
  await store.load(parseCatalogue(await Bun.file(file).json(), file))
  const app = createApp({ store, apiKeys: [KEY], report: () => {} })
  const get = async (path: string) => {
    const started = performance.now()
    const response = await app.handle(new Request(`http://localhost${path}`))
    await response.arrayBuffer()
    if (response.status !== 200) throw new Error(`${path} answered ${response.status}`)
    return performance.now() - started
  }
  const send = (method: string, path: string, body: unknown) =>
    app.handle(
      new Request(`http://localhost${path}`, {
        method,
        headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      }),
    )

  // What is built on first use: the search text on the first search, the name order on the first sort.
  const firstSearch = await get('/api/v1/artists?q=zzz')
  const firstSort = await get('/api/v1/artists?sort=name')
  // What a write costs the next search: a new artist is appended; a renamed one has the text rebuilt.
  await send('POST', '/api/v1/artists', { name: 'Moris' })
  const afterCreate = await get('/api/v1/artists?q=zzz&sort=name')
  await send('PUT', '/api/v1/artists/1', { name: 'Luis Alberto Spinetta (Flaco)' })
  const afterRename = await get('/api/v1/artists?q=zzz&sort=name')

  const rows: string[][] = []
  const loadBefore = loadavg()[0] as number
  for (const [name, path] of CASES) {
    for (let i = 0; i < 5; i++) await get(path)
    const times: number[] = []
    for (let i = 0; i < RUNS; i++) times.push(await get(path))
    times.sort((a, b) => a - b)
    const total = (
      (await (await app.handle(new Request(`http://localhost${path}`))).json()) as { meta: { total: number } }
    ).meta.total
    rows.push([name, total.toLocaleString('en'), ms(percentile(times, 0.5)), ms(percentile(times, 0.95))])
  }
  const loadAfter = loadavg()[0] as number
  const machine = await describeMachine('')
  const when = new Date().toISOString().slice(0, 16).replace('T', ' ')
  const section = [
    `## Search and order: ${ARTISTS.toLocaleString('en')} artists`,
    '',
    `Measured ${when} UTC with \`bun bench/search.ts --artists ${ARTISTS} --runs ${RUNS}\` on ${machine.cpu}, ${machine.cores} cores, ${machine.memory}, ${machine.kernel}, Bun ${machine.bun}. In-process through \`app.handle\` (routing, validation, the store and the JSON of the page; no socket), over an in-memory store of the generated catalogue (bench/catalogue.ts: the 29 legends cycled, names numbered \`#n\`). Limit 10; ${RUNS} runs per case after 5 warm-ups. One-minute load average ${loadBefore.toFixed(2)} before and ${loadAfter.toFixed(2)} after (the machine is shared). Goal: a search within a few milliseconds.`,
    '',
    table(
      [
        ['Request', 'left'],
        ['Matches', 'right'],
        ['Median ms', 'right'],
        ['p95 ms', 'right'],
      ],
      rows,
    ),
    '',
    `Built on first use, then kept up to date by each write: the first search took ${ms(firstSearch)} ms (folding every name and band into one search text), the first name order ${ms(firstSort)} ms (sorting with a Spanish collator). The first search and sort after a create took ${ms(afterCreate)} ms (the new artist is appended to both); after a rename ${ms(afterRename)} ms (the search text is joined again from the folded names it keeps; the name order moves one entry).`,
  ].join('\n')
  process.stdout.write(`${section}\n`)
  if (args.includes('--write')) await writeNamedSection('search', section)
}

await main()
