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
