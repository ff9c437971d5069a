/**
 * `bun bench/album-costs.ts [--albums N] [--runs N]`: what one artist's many albums cost the requests that read them,
 * in-process through `app.handle` over an in-memory store: a list sorted or searched at each request would hold the
 * event loop for as long as it takes. One artist gets `--albums` albums (20,000 by default; the API refuses more than
 * `MAX_ALBUMS_PER_ARTIST`, so they are loaded through the store, as an operator's catalogue is) and, for comparison,
 * one gets 499, with names of 200 characters (accented, and with `&`, which HTML escapes). Measured per case:
 *
 * - `GET /api/v1/artists/1/albums?limit=1&sort=name`: the first request, then the median and worst of `--runs` more;
 *   also with a search (`q`), and the wait of a `/healthz` sent together with one such request (the event loop is
 *   busy while the list is sorted: nothing else is answered meanwhile);
 * - `GET /artists/1` (the web page): time, size of the answer and the growth of the process's resident memory.
 *
 * The script uses nothing newer than the store and app interfaces, so a worktree of an older commit runs the same
 * file for a side-by-side comparison: `git worktree add /tmp/before <commit>`, copy this file to its bench/, run both.
 */
import { loadavg } from 'node:os'
import { createApp } from '../src/app.ts'
import { openMemoryStore } from '../src/store/document/memory.ts'
import { describeMachine } from './machine.ts'
import { table } from './markdown.ts'

const KEY = 'bench-key'
const args = process.argv.slice(2)
const option = (name: string, fallback: number) => {
  const at = args.indexOf(name)
  return at >= 0 ? Number(args[at + 1]) : fallback
}
const ALBUMS = option('--albums', 20_000)
const RUNS = option('--runs', 20)

/** A 200-character album name, numbered so that no two are alike and their name order is not their id order. */
const albumName = (i: number, count: number) =>
  `Canción ${String((i * 7919) % count).padStart(6, '0')} & ${'Ñandú sinfónico & más '.repeat(10)}`.slice(0, 200)

const ms = (value: number) => (value < 1 ? value.toFixed(3) : value < 100 ? value.toFixed(1) : value.toFixed(0))
const mb = (bytes: number) => (bytes / 2 ** 20).toFixed(1)
const median = (values: number[]) => values.toSorted((a, b) => a - b)[Math.floor(values.length / 2)] as number

interface Measured {
  albums: number
  firstSort: number
  sortMedian: number
  sortWorst: number
  searchMedian: number
  healthzWait: number
  pageMs: number
  pageBytes: number
  pageRss: number
}

async function measure(albums: number): Promise<Measured> {
  const store = openMemoryStore()
  await store.load([
    {
      name: 'Prolific',
      image: null,
      albums: Array.from({ length: albums }, (_, i) => ({
        name: albumName(i, albums),
        year: 1970 + (i % 50),
        image: null,
      })),
    },
  ])
  const app = createApp({ store, apiKeys: [KEY], report: () => {} })
  const get = async (path: string, accept = 'application/json') => {
    const started = performance.now()
    const response = await app.handle(new Request(`http://localhost${path}`, { headers: { accept } }))
    const bytes = (await response.arrayBuffer()).byteLength
    if (response.status !== 200) throw new Error(`${path} answered ${response.status}`)
    return { ms: performance.now() - started, bytes }
  }
  const SORT = '/api/v1/artists/1/albums?limit=1&sort=name'
  const firstSort = (await get(SORT)).ms
  const sorts: number[] = []
  for (let i = 0; i < RUNS; i++) sorts.push((await get(SORT)).ms)
  const searches: number[] = []
  for (let i = 0; i < RUNS; i++) searches.push((await get(`${SORT}&q=sinfonico`)).ms)
  // Sent together: the health check is answered once the list request lets go of the event loop.
  const started = performance.now()
  const [, healthzWait] = await Promise.all([
    get(`${SORT}&offset=3`),
    app.handle(new Request('http://localhost/healthz')).then(async (response) => {
      await response.arrayBuffer()
      return performance.now() - started
    }),
  ])
  Bun.gc(true)
  const rssBefore = process.memoryUsage().rss
  const page = await get('/artists/1', 'text/html')
  const pageRss = process.memoryUsage().rss - rssBefore
  await store.close()
  return {
    albums,
    firstSort,
    sortMedian: median(sorts),
    sortWorst: Math.max(...sorts),
    searchMedian: median(searches),
    healthzWait,
    pageMs: page.ms,
    pageBytes: page.bytes,
    pageRss,
  }
}

const load = loadavg()[0] as number
const rows: string[][] = []
// The smaller case first, so that the larger one's memory does not weigh on it.
for (const albums of [499, ALBUMS]) {
  const m = await measure(albums)
  rows.push([
    m.albums.toLocaleString('en'),
    ms(m.firstSort),
    ms(m.sortMedian),
    ms(m.sortWorst),
    ms(m.searchMedian),
    ms(m.healthzWait),
    ms(m.pageMs),
    mb(m.pageBytes),
    mb(m.pageRss),
  ])
}
const machine = await describeMachine('')
const when = new Date().toISOString().slice(0, 16).replace('T', ' ')
let commit = ''
try {
  commit = Bun.spawnSync(['git', 'describe', '--always', '--dirty'], { cwd: import.meta.dir })
    .stdout.toString()
    .trim()
} catch {}
process.stdout.write(
  [
    `## Album costs: one artist with many albums (${import.meta.dir}, commit ${commit || 'unknown'})`,
    '',
    `Measured ${when} UTC with \`bun bench/album-costs.ts --albums ${ALBUMS} --runs ${RUNS}\` on ${machine.cpu}, ${machine.cores} cores, ${machine.memory}, Bun ${machine.bun}; one-minute load average ${load.toFixed(2)} (the machine is shared). In-process through \`app.handle\`, in-memory store; album names of 200 characters. Times in ms; sizes in MiB.`,
    '',
    table(
      [
        ['Albums', 'right'],
        ['First `sort=name`', 'right'],
        ['Next, median', 'right'],
        ['Next, worst', 'right'],
        ['With `q`, median', 'right'],
        ['`/healthz` sent beside', 'right'],
        ['`/artists/1` ms', 'right'],
        ['`/artists/1` MiB', 'right'],
        ['RSS growth MiB', 'right'],
      ],
      rows,
    ),
    '',
  ].join('\n'),
)
