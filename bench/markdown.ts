import type { Machine } from './machine.ts'

/** The median of `values` (NaN for none). */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = sorted.length >> 1
  if (sorted.length === 0) return Number.NaN
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2
}

/** A whole number with thousands separators: `12,345`. */
export const count = (n: number) => Math.round(n).toLocaleString('en-US')
/** Milliseconds with about three significant digits: `0.48 ms`, `15.8 ms`, `244 ms`. */
export const ms = (n: number) => `${n < 10 ? n.toFixed(2) : n < 100 ? n.toFixed(1) : n.toFixed(0)} ms`
/** Microseconds with one decimal: `12.4 µs`. */
export const micros = (n: number) => `${n.toFixed(1)} µs`
/** A ratio with two decimals: `0.67×`. */
export const ratio = (n: number) => `${n.toFixed(2)}×`
/** Bytes as megabytes (10^6) with one decimal: `18.5 MB`. */
export const megabytes = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`
/** `met` or a bold `missed`. */
export const verdict = (met: boolean) => (met ? 'met' : '**missed**')

/** A column of a Markdown table: its title and alignment. */
export type Column = [title: string, align: 'left' | 'right']

/** A Markdown table, padded the way Biome formats Markdown so that RESULTS.md passes `biome check` as written. */
export function table(columns: readonly Column[], rows: readonly string[][]): string {
  const widths = columns.map(([title], i) => Math.max(3, title.length, ...rows.map((row) => row[i]?.length ?? 0)))
  const right = (i: number) => columns[i]?.[1] === 'right'
  const width = (i: number) => widths[i] as number
  const line = (cells: readonly string[]) =>
    `| ${cells.map((cell, i) => (right(i) ? cell.padStart(width(i)) : cell.padEnd(width(i)))).join(' | ')} |`
  const rule = widths.map((w, i) => (right(i) ? `${'-'.repeat(w - 1)}:` : '-'.repeat(w)))
  return [line(columns.map(([title]) => title)), `| ${rule.join(' | ')} |`, ...rows.map(line)].join('\n')
}

/** One goal of a side-by-side benchmark: the rate of one target over another's, round by round. */
export interface Goal {
  /** What was requested, e.g. `GET one artist`. */
  request: string
  /** What the rate counts: `req/s` or `creates`. */
  kind: string
  /** The names of the two targets, as the report writes them. */
  of: string
  over: string
  /** The ratio to reach, or none for a figure given as context. */
  goal?: number
  /** The ratio of each round (the runs of a round were back to back). */
  ratios: readonly number[]
  /** `over`'s CPU per request over `of`'s: how many times less CPU `of` spends. */
  byCpu: number
}

/** The goals of a side-by-side benchmark as a table: the median ratio, the rounds that reached it, the verdict. */
export function goalsTable(between: string, goals: readonly Goal[]): string {
  const columns: Column[] = [
    [`Goal (the rate of one ${between} over another)`, 'left'],
    ['Measured', 'right'],
    ['Rounds that reached it: ratio per round', 'left'],
    ['By CPU per request', 'right'],
    ['Verdict', 'left'],
  ]
  const rows = goals.map(({ request, kind, of, over, goal, ratios, byCpu }) => {
    const headline = median(ratios)
    const reached = goal === undefined ? '' : `${ratios.filter((each) => each >= goal).length} of ${ratios.length}: `
    return [
      `${request}: ${kind} of ${of} ${goal === undefined ? 'over' : `≥ ${goal}×`} ${over}`,
      `**${ratio(headline)}**`,
      `${reached}${ratios.map(ratio).join(', ')}`,
      ratio(byCpu),
      goal === undefined ? 'context' : verdict(headline >= goal),
    ]
  })
  return table(columns, rows)
}

/** The machine as a one-row table. */
export function machineTable(machine: Machine): string {
  const columns: Column[] = [
    ['CPU', 'left'],
    ['Cores', 'right'],
    ['Memory', 'right'],
    ['Kernel', 'left'],
    ['Bun', 'left'],
    ['wrk', 'left'],
  ]
  const { cpu, cores, memory, kernel, bun, wrk } = machine
  return table(columns, [[cpu, String(cores), memory, kernel, bun, wrk]])
}

/** `date` as `2026-11-22 11:40 UTC`. */
export const utc = (date: Date) => `${date.toISOString().slice(0, 16).replace('T', ' ')} UTC`
