/**
 * `bun bench/cache-memory.ts [--ref REF | --baseline BINARY] [--rounds N] [--write]`: how much a visitor's list pages
 * make the server hold, since anyone can ask for pages the server then keeps encoded. Two compiled servers side by
 * side (see two-builds.ts): a baseline built from `REF` (HEAD by default) or `BINARY`, and `dist/rock-legends` from
 * the working tree. Each, fresh and over
 * `:memory:`, gets 130 of the largest artists the API accepts (every character one JSON writes as six), then anonymous
 * `GET`s of distinct list pages; its resident memory (VmRSS) is read before the pages and again after them, once it
 * has been idle for a while. `--write` records the section in bench/RESULTS.md.
 */
import { rmSync } from 'node:fs'
import { ensureBinary } from '../test/support/binary.ts'
import { describeMachine } from './machine.ts'
import { median, table, utc } from './markdown.ts'
import { writeNamedSection } from './results-file.ts'
import { type ServerProcess, startRockLegends } from './server-process.ts'
import { baselineBinary } from './two-builds.ts'

const KEY = 'bench-key'
const ARTISTS = 130
const args = process.argv.slice(2)
const option = (name: string) => {
  const at = args.indexOf(name)
  return at >= 0 ? args[at + 1] : undefined
}
const ROUNDS = Number(option('--rounds') ?? 2)
const REF = option('--ref') ?? 'HEAD'
// Long enough for the engine's collector to run on an idle process.
const SETTLE_MS = 3000

/** The largest artist the API accepts, of a character JSON writes as six (`\u0001`): about 75 KB as JSON. */
function largeArtist(i: number): string {
  const filler = (length: number) => '\u0001'.repeat(length)
  const name = `Artist ${i} `
  return JSON.stringify({
    name: `${name}${filler(200 - name.length)}`,
    description: filler(10_000),
    image: `/${filler(2047)}`,
    band: filler(200),
  })
}

interface Scenario {
  label: string
  /** The list pages asked, each once. */
  paths: string[]
}

const SCENARIOS: Scenario[] = [
  {
    label: '100 distinct pages of up to 100 artists: `?limit=100&offset=0…99`',
    paths: Array.from({ length: 100 }, (_, i) => `/api/v1/artists?limit=100&offset=${i}`),
  },
  {
    label: '390 distinct pages of 1 to 3 artists (pages small enough to be kept): `?limit=1…3&offset=0…129&sort=name`',
    paths: Array.from({ length: 390 }, (_, i) => `/api/v1/artists?limit=${1 + (i % 3)}&offset=${i % 130}&sort=name`),
  },
]

const MB = 1e6
const mb = (bytes: number) => `${(bytes / MB).toFixed(0)} MB`

/** A fresh server of `binary` with the large artists; the memory it grows by over the scenario's pages. */
async function measure(binary: string, scenario: Scenario): Promise<{ grown: number; before: number; after: number }> {
  const server: ServerProcess = await startRockLegends(['--data', ':memory:', '--api-key', KEY], undefined, binary)
  try {
    for (let i = 1; i <= ARTISTS; i++) {
      const response = await fetch(`${server.url}/api/v1/artists`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': KEY },
        body: largeArtist(i),
      })
      if (response.status !== 201) throw new Error(`creating artist ${i}: ${response.status} ${await response.text()}`)
    }
    // Routes compiled and the records' serialised text made: what the server holds without any cache.
    for (const offset of [0, 100]) await (await fetch(`${server.url}/api/v1/artists?limit=100&offset=${offset}`)).text()
    await Bun.sleep(SETTLE_MS)
    const before = (await server.memory()).rss
    for (const path of scenario.paths) {
      const response = await fetch(`${server.url}${path}`)
      await response.arrayBuffer()
      if (response.status !== 200) throw new Error(`${path}: ${response.status}`)
    }
    await Bun.sleep(SETTLE_MS)
    const after = (await server.memory()).rss
    return { grown: after - before, before, after }
  } finally {
    await server.stop()
  }
}

async function main() {
  const given = option('--baseline')
  const baseline = given ? { binary: given, commit: 'given', dir: undefined } : await baselineBinary(REF)
  const current = await ensureBinary()
  const grown: Record<'before' | 'after', number[][]> = {
    before: SCENARIOS.map(() => []),
    after: SCENARIOS.map(() => []),
  }
  const resident: Record<'before' | 'after', number[][]> = {
    before: SCENARIOS.map(() => []),
    after: SCENARIOS.map(() => []),
  }
  try {
    for (let round = 0; round < ROUNDS; round++)
      for (const [i, scenario] of SCENARIOS.entries())
        for (const build of round % 2 === 0 ? (['before', 'after'] as const) : (['after', 'before'] as const)) {
          const result = await measure(build === 'before' ? baseline.binary : current, scenario)
          grown[build][i]?.push(result.grown)
          resident[build][i]?.push(result.after)
          process.stderr.write(
            `round ${round + 1}, ${scenario.label}, ${build}: grew ${mb(result.grown)} (${mb(result.before)} → ${mb(result.after)})\n`,
          )
        }
  } finally {
    if (baseline.dir) rmSync(baseline.dir, { recursive: true, force: true })
  }
  const rows = SCENARIOS.map((scenario, i) => {
    const [b, a] = [grown.before[i] as number[], grown.after[i] as number[]]
    return [
      scenario.label,
      `${mb(median(b))} (${b.map(mb).join(', ')})`,
      `${mb(median(a))} (${a.map(mb).join(', ')})`,
      mb(median(resident.before[i] as number[])),
      mb(median(resident.after[i] as number[])),
    ]
  })
  const machine = await describeMachine('')
  const command = `bun bench/cache-memory.ts${given ? ` --baseline ${given}` : REF === 'HEAD' ? '' : ` --ref ${REF}`} --rounds ${ROUNDS}`
  const section = [
    '## Cache memory: what a visitor’s list pages make the server hold',
    '',
    `Measured ${utc(new Date())} with \`${command}\` on ${machine.cpu}, ${machine.cores} cores, ${machine.memory}, ${machine.kernel}, Bun ${machine.bun}. Two compiled servers side by side, each fresh for every scenario and round, \`--data :memory: --log off\`: **before** is commit ${baseline.commit} (the list pages kept by count: up to 1,024 encoded pages per list), **after** is this working tree (every cache of list pages bounded by bytes, 16 MiB each as estimated, no page over 2 MiB kept). Each server gets ${ARTISTS} of the largest artists the API accepts, every character of their name, description, image and band one that JSON writes as six bytes (\`\\u0001\`, about 75 KB of JSON each), and every record is served once; then, after ${SETTLE_MS / 1000} s idle, its resident memory (VmRSS) is read, the scenario's pages are asked anonymously one after another, and after ${SETTLE_MS / 1000} s idle the memory is read again. **Grown** is the difference, the median of ${ROUNDS} rounds (each round's in parentheses); **resident** is the memory after the pages.`,
    '',
    table(
      [
        ['Pages asked', 'left'],
        ['Grown before', 'right'],
        ['Grown after', 'right'],
        ['Resident before', 'right'],
        ['Resident after', 'right'],
      ],
      rows,
    ),
    '',
    'A page of 100 such artists is 7.5 MB: it is answered but no longer kept (larger than an eighth of its cache), so asking for pages no longer makes the server hold them. Small pages are still kept, up to the cache’s budget, the pages used longest ago going first.',
  ].join('\n')
  process.stdout.write(`${section}\n`)
  if (args.includes('--write')) await writeNamedSection('cache-memory', section)
}

await main()
