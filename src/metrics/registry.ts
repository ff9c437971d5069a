/**
 * A small registry of metrics in the Prometheus text format (version 0.0.4): counters, gauges and histograms with
 * fixed buckets, each family with its HELP and TYPE lines. Recording is a number added in place; text is made only
 * when `/metrics` is scraped. Label sets are fixed by the code that records them, never by what a client sends, so
 * the number of series is bounded by constants.
 */

/** Label names and values of one series, in a fixed order. */
export type Labels = Readonly<Record<string, string>>

/** A family of series that renders itself: its HELP, TYPE and sample lines. */
export interface Family {
  readonly name: string
  render(lines: string[]): void
}

/** A label value as the text format wants it: backslash, double quote and newline escaped. */
export const escapeLabel = (value: string) => value.replace(/[\\"\n]/g, (c) => (c === '\n' ? '\\n' : `\\${c}`))

/** `{a="x",b="y"}`, or nothing without labels; `extra` (such as `le`) goes last. */
export function labelText(labels: Labels | undefined, extra?: string): string {
  const parts: string[] = []
  for (const name in labels) parts.push(`${name}="${escapeLabel(labels[name] as string)}"`)
  if (extra) parts.push(extra)
  return parts.length > 0 ? `{${parts.join(',')}}` : ''
}

/** A number as the text format writes it: `+Inf`, `-Inf`, `NaN`, or JavaScript's shortest form. */
export const numberText = (value: number) =>
  value === Number.POSITIVE_INFINITY ? '+Inf' : value === Number.NEGATIVE_INFINITY ? '-Inf' : String(value)

const header = (lines: string[], name: string, help: string, type: string) => {
  lines.push(`# HELP ${name} ${help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')}`, `# TYPE ${name} ${type}`)
}

/** A value that only goes up (`_total` by convention), with no labels. */
export class Counter implements Family {
  value = 0

  constructor(
    readonly name: string,
    readonly help: string,
  ) {}

  inc(by = 1): void {
    this.value += by
  }

  render(lines: string[]): void {
    header(lines, this.name, this.help, 'counter')
    lines.push(`${this.name} ${numberText(this.value)}`)
  }
}

/** One series of a family read when scraped: its labels, and its value then (`undefined` leaves it out). */
export interface ReadSeries {
  labels?: Labels
  read: () => number | undefined
}

/** A value read when scraped: each series from its `read` (a series whose read answers `undefined` is left out). */
export class Gauge implements Family {
  protected readonly type: string = 'gauge'

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly series: readonly ReadSeries[],
  ) {}

  render(lines: string[]): void {
    header(lines, this.name, this.help, this.type)
    for (const { labels, read } of this.series) {
      const value = read()
      if (value !== undefined) lines.push(`${this.name}${labelText(labels)} ${numberText(value)}`)
    }
  }
}

/** A total kept elsewhere and read when scraped (the CPU time the kernel counts), as a gauge is read. */
export class ReadCounter extends Gauge {
  protected override readonly type = 'counter'
}

/**
 * Counts of observations per bucket (not cumulative: made cumulative when rendered), their sum and count. The upper
 * bounds are fixed when it is made; `+Inf` is implied.
 */
export class HistogramSeries {
  readonly counts: Float64Array
  sum = 0
  count = 0

  constructor(readonly bounds: readonly number[]) {
    this.counts = new Float64Array(bounds.length)
  }

  observe(value: number): void {
    const bounds = this.bounds
    const counts = this.counts
    for (let i = 0; i < bounds.length; i++)
      if (value <= (bounds[i] as number)) {
        counts[i] = (counts[i] as number) + 1
        break
      }
    this.sum += value
    this.count++
  }

  /** The `_bucket` lines (cumulative, ending in `+Inf`), `_sum` and `_count` of this series. */
  render(lines: string[], name: string, labels?: Labels): void {
    let cumulative = 0
    for (let i = 0; i < this.bounds.length; i++) {
      cumulative += this.counts[i] as number
      lines.push(`${name}_bucket${labelText(labels, `le="${numberText(this.bounds[i] as number)}"`)} ${cumulative}`)
    }
    lines.push(`${name}_bucket${labelText(labels, 'le="+Inf"')} ${this.count}`)
    lines.push(`${name}_sum${labelText(labels)} ${numberText(this.sum)}`)
    lines.push(`${name}_count${labelText(labels)} ${this.count}`)
  }
}

/** A histogram with no labels. */
export class Histogram implements Family {
  readonly series: HistogramSeries

  constructor(
    readonly name: string,
    readonly help: string,
    bounds: readonly number[],
  ) {
    this.series = new HistogramSeries(bounds)
  }

  observe(value: number): void {
    this.series.observe(value)
  }

  render(lines: string[]): void {
    header(lines, this.name, this.help, 'histogram')
    this.series.render(lines, this.name)
  }
}

/** Writes the HELP and TYPE lines of a family whose samples the caller writes. */
export const familyHeader = header

/** The text of `families`, in order, as `/metrics` answers it. */
export function renderFamilies(families: readonly Family[]): string {
  const lines: string[] = []
  for (const family of families) family.render(lines)
  return `${lines.join('\n')}\n`
}
