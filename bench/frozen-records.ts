/**
 * `bun bench/frozen-records.ts`: what freezing records costs, since the stores hand out frozen records. Makes,
 * reads and copies (`{ ...record, field }`, as every store write does) 100,000 artist-shaped records, plain and
 * frozen, alternating in each round so both see the same machine load; prints the median of each and the ratio.
 * In-process and single-threaded: a figure for comparison side by side, not a claim about a server's throughput.
 */
const N = 100_000
const ROUNDS = 15

type Row = { id: number; name: string; description?: string; image?: string; band?: string }

function make(freeze: boolean): Row[] {
  const rows = new Array<Row>(N)
  for (let i = 0; i < N; i++) {
    const row: Row = { id: i + 1, name: `Artist ${i}`, description: undefined, image: `https://img/${i}.jpg` }
    if (i % 3) row.band = 'Band'
    rows[i] = freeze ? Object.freeze(row) : row
  }
  return rows
}

function read(rows: readonly Row[]): number {
  let sum = 0
  for (const row of rows) sum += row.id + row.name.length + (row.band ? 1 : 0)
  return sum
}

const copy = (rows: readonly Row[]) => rows.map((row) => ({ ...row, name: 'renamed' }))

function ms(work: () => unknown): number {
  const start = Bun.nanoseconds()
  work()
  return (Bun.nanoseconds() - start) / 1e6
}

const median = (values: number[]) => values.toSorted((a, b) => a - b)[values.length >> 1] as number
const times: Record<string, number[]> = {}
const add = (name: string, value: number) => {
  times[name] ??= []
  times[name].push(value)
}
let sink = 0
for (let round = 0; round < ROUNDS; round++)
  for (const frozen of round % 2 ? [true, false] : [false, true]) {
    const label = frozen ? 'frozen' : 'plain'
    let rows: Row[] = []
    add(
      `make ${label}`,
      ms(() => (rows = make(frozen))),
    )
    add(
      `read ${label}`,
      ms(() => (sink += read(rows))),
    )
    add(
      `copy ${label}`,
      ms(() => (sink += copy(rows).length)),
    )
  }
for (const step of ['make', 'read', 'copy']) {
  const plain = median(times[`${step} plain`] as number[])
  const frozen = median(times[`${step} frozen`] as number[])
  console.log(
    `${step} ${N} records: plain ${plain.toFixed(2)} ms, frozen ${frozen.toFixed(2)} ms (x${(frozen / plain).toFixed(2)})`,
  )
}
if (sink === 0) console.log('')
