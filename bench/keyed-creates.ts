/**
 * `bun bench/keyed-creates.ts [--creates N] [--rounds N]`: what an `Idempotency-Key` costs a create, in-process
 * (`app.handle`, no sockets), over a data file and over a durable PostgreSQL of the bench's own
 * (bench/sql-bench.ts). For each store: N creates one after the other (the latency of one create) and N creates 16 at
 * a time (the throughput), each with a new key and without one, in alternating rounds; figures are medians of the
 * rounds. Prints a Markdown table for bench/RESULTS.md. Every key is the service key's, so the bound per account is
 * raised to the bound in all (64 MiB): the defaults' 1 MiB holds about 4,000 such answers, fewer than a long run makes.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { loadavg } from 'node:os'
import { join } from 'node:path'
import { createApp } from '../src/app.ts'
import { IDEMPOTENCY_LIMITS } from '../src/store/idempotency.ts'
import { openJsonFileStore } from '../src/store/json-file/json-file.ts'
import { openSqlStore } from '../src/store/sql/sql-store.ts'
import type { Store } from '../src/store/store.ts'
import { describeMachine } from './machine.ts'
import { withBenchPostgres } from './sql-bench.ts'

const argument = (flag: string, fallback: number) => {
  const at = process.argv.indexOf(flag)
  return at > 0 ? Number(process.argv[at + 1]) : fallback
}
const CREATES = argument('--creates', 300)
const ROUNDS = argument('--rounds', 3)
const KEY = 'bench-key'
const CONCURRENCY = 16

interface Figures {
  /** Median ms of one create, sent one after the other. */
  serialMs: number
  /** Creates per second, 16 at a time. */
  perSecond: number
}

const median = (values: number[]) => {
  const sorted = values.toSorted((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)] as number
}

/** Runs the rounds over `store`: keyed and keyless alternating, so drift hits both alike. */
async function measure(store: Store): Promise<{ keyed: Figures; keyless: Figures }> {
  const idempotency = { ...IDEMPOTENCY_LIMITS, bytesPerScope: IDEMPOTENCY_LIMITS.bytesInAll }
  const app = createApp({ store, apiKeys: [KEY], report: () => {}, idempotency })
  let n = 0
  const create = async (keyed: boolean) => {
    const headers: Record<string, string> = { 'x-api-key': KEY, 'content-type': 'application/json' }
    n += 1
    if (keyed) headers['idempotency-key'] = `k-${n}`
    const response = await app.handle(
      new Request('http://localhost/api/v1/artists', {
        method: 'POST',
        headers,
        body: JSON.stringify({ name: `Artist ${n}` }),
      }),
    )
    if (response.status !== 201) throw new Error(`create answered ${response.status}: ${await response.text()}`)
    await response.arrayBuffer()
  }
  const serial = async (keyed: boolean) => {
    const times: number[] = []
    for (let i = 0; i < CREATES; i++) {
      const started = performance.now()
      await create(keyed)
      times.push(performance.now() - started)
    }
    return median(times)
  }
  const parallel = async (keyed: boolean) => {
    let left = CREATES
    const started = performance.now()
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (left-- > 0) await create(keyed)
      }),
    )
    return CREATES / ((performance.now() - started) / 1000)
  }
  // Warm-up: both paths compiled and the store's statements prepared.
  for (const keyed of [true, false]) for (let i = 0; i < 50; i++) await create(keyed)
  const seen = { keyed: { serial: [] as number[], rate: [] as number[] }, keyless: { serial: [], rate: [] } } as Record<
    'keyed' | 'keyless',
    { serial: number[]; rate: number[] }
  >
  for (let round = 0; round < ROUNDS; round++)
    for (const keyed of round % 2 ? [true, false] : [false, true]) {
      const into = seen[keyed ? 'keyed' : 'keyless']
      into.serial.push(await serial(keyed))
      into.rate.push(await parallel(keyed))
    }
  const figures = ({ serial, rate }: { serial: number[]; rate: number[] }) => ({
    serialMs: median(serial),
    perSecond: median(rate),
  })
  return { keyed: figures(seen.keyed), keyless: figures(seen.keyless) }
}

const results: [string, { keyed: Figures; keyless: Figures }][] = []
const loadBefore = loadavg()[0] as number
let postgresVersion = ''
await withBenchPostgres('keyed-creates', async (pg, workDir) => {
  postgresVersion = pg.version
  const dir = await mkdtemp(join(workDir, 'file-'))
  const file = await openJsonFileStore(join(dir, 'db.json'))
  try {
    results.push(['data file', await measure(file)])
  } finally {
    await file.close()
    await rm(dir, { recursive: true, force: true })
  }
  await pg.createDatabase('rl_keyed')
  const sql = await openSqlStore(pg.url('rl_keyed'))
  try {
    results.push(['PostgreSQL', await measure(sql)])
  } finally {
    await sql.close()
  }
})

const ms = (value: number) => `${value.toFixed(2)} ms`
const rate = (value: number) => Math.round(value).toLocaleString('en-US')
const { cpu, cores, memory, kernel, bun } = await describeMachine('')
console.log(
  `${cpu}, ${cores} cores, ${memory}, ${kernel}, Bun ${bun}, PostgreSQL ${postgresVersion}; load average ${loadBefore.toFixed(1)} → ${(loadavg()[0] as number).toFixed(1)}`,
)
console.log(`${CREATES} creates per run, ${ROUNDS} rounds, medians; ${CONCURRENCY} at a time for creates/s\n`)
console.log('| Store | One create, no key | One create, keyed | Creates/s, no key | Creates/s, keyed |')
console.log('| --- | ---: | ---: | ---: | ---: |')
for (const [name, { keyed, keyless }] of results)
  console.log(
    `| ${name} | ${ms(keyless.serialMs)} | ${ms(keyed.serialMs)} | ${rate(keyless.perSecond)} | ${rate(keyed.perSecond)} |`,
  )
