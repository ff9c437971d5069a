import pkg from '../../package.json' with { type: 'json' }
import { HttpMetrics } from './http-metrics.ts'
import { processFamilies } from './process-metrics.ts'
import { Counter, type Family, Gauge, Histogram, ReadCounter, renderFamilies } from './registry.ts'

/** Upper bounds of the changes one commit carries (the group commit's batch size). */
export const COMMIT_CHANGES_BUCKETS = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]
/** Upper bounds of one fsync of the journal, in seconds: from a fast SSD's 0.1 ms to a struggling disk's second. */
export const FSYNC_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1]

/** Operations on the database pool in flight, counted by the SQL store (Bun.SQL tells nothing of its pool). */
export class PoolUse {
  /** Store operations started and not yet settled; each holds one pooled connection while it runs. */
  inFlight = 0

  /** `max` is the pool's size (`--db-pool`). */
  constructor(readonly max: number) {}
}

/** The data file's sizes, read when scraped. */
export interface FileSizes {
  journalBytes(): number
  dataFileBytes(): number
}

/**
 * The longest a scrape waits for the store's check (a database's `SELECT 1`, which gives up after 2 s by itself):
 * a scrape never hangs on a database that went silent.
 */
export const SCRAPE_CHECK_MS = 3000

/**
 * What the store records: whether it is up, commits and their batch sizes (both stores), the journal's fsyncs, size
 * and compactions (a data file), the pool (a database); and the requests refused because it was not up. The store
 * calls these only once instrumented (`Store.instrument`); a server without `--metrics` never makes one.
 */
export class StoreMetrics {
  readonly unavailable = new Counter(
    'rock_legends_store_unavailable_total',
    'Requests refused with 503 because the store could not serve them (store-unavailable, database-unavailable).',
  )
  readonly commits = new Counter(
    'rock_legends_store_commits_total',
    'Commits that made a batch of changes durable: a group commit (data file, memory) or a transaction (PostgreSQL).',
  )
  readonly commitFailures = new Counter(
    'rock_legends_store_commit_failures_total',
    'Commits the disk or the database could not take: every change in them was refused.',
  )
  readonly commitChanges = new Histogram(
    'rock_legends_store_commit_changes',
    'Changes carried by each commit: the batch size of the group commit.',
    COMMIT_CHANGES_BUCKETS,
  )
  readonly fsync = new Histogram(
    'rock_legends_journal_fsync_seconds',
    'Time of each fsync of the journal, which every commit to a data file waits for.',
    FSYNC_BUCKETS,
  )
  readonly compactions = new Counter(
    'rock_legends_journal_compactions_total',
    'Compactions that folded the journal into the data file.',
  )
  readonly compactionFailures = new Counter(
    'rock_legends_journal_compaction_failures_total',
    'Compactions that failed (nothing is lost: the journal keeps every change, and compaction is tried again).',
  )
  /** The data file's sizes, set by a store over a data file. */
  files: FileSizes | undefined
  /** The pool's use, set by a store over a database. */
  pool: PoolUse | undefined
  /** Whether the store can serve, as its operations find it; set by the store. */
  availability: { readonly up: boolean } | undefined
  /** Asked before each scrape, set by a store that can be asked cheaply (a database: `SELECT 1`). */
  check: (() => Promise<void>) | undefined
  private checking: Promise<void> | undefined

  /** Counts the use of a pool of `max` connections (a store over a database). */
  poolOf(max: number): PoolUse {
    this.pool = new PoolUse(max)
    return this.pool
  }

  /** A commit of `changes` changes is durable. */
  committed(changes: number): void {
    this.commits.inc()
    this.commitChanges.observe(changes)
  }

  /** A request was refused with 503: the store could not serve it. */
  refused(): void {
    this.unavailable.inc()
  }

  /**
   * Brings {@link availability} up to date before a scrape: the store's check, if it has one, given at most
   * {@link SCRAPE_CHECK_MS}; scrapes at the same moment share one. Its outcome reaches the availability through the
   * store; never rejects.
   */
  async refresh(): Promise<void> {
    const check = this.check
    if (!check) return
    this.checking ??= check()
      .catch(() => {})
      .finally(() => {
        this.checking = undefined
      })
    let timer: ReturnType<typeof setTimeout> | undefined
    const late = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, SCRAPE_CHECK_MS)
    })
    await Promise.race([this.checking, late])
    clearTimeout(timer)
  }

  /** The families of the store at hand: the journal's for a data file, the pool's for a database. */
  families(): Family[] {
    const availability = this.availability
    const families: Family[] = [
      new Gauge(
        'rock_legends_store_up',
        'Whether the store can serve now (1) or not (0): the database answers, or the data file takes commits.',
        [{ read: () => (availability === undefined ? undefined : availability.up ? 1 : 0) }],
      ),
      this.unavailable,
      this.commits,
      this.commitFailures,
      this.commitChanges,
    ]
    const files = this.files
    if (files)
      families.push(
        this.fsync,
        new Gauge('rock_legends_journal_bytes', 'Size of the journal beside the data file.', [
          { read: () => files.journalBytes() },
        ]),
        new Gauge('rock_legends_data_file_bytes', 'Size of the data file as last written.', [
          { read: () => files.dataFileBytes() },
        ]),
        this.compactions,
        this.compactionFailures,
      )
    const pool = this.pool
    if (pool)
      families.push(
        new Gauge('rock_legends_db_pool_connections_max', 'Connections the database pool may open (--db-pool).', [
          { read: () => pool.max },
        ]),
        new Gauge(
          'rock_legends_db_pool_connections_in_use',
          'Pooled connections in use: store operations in flight, at most the pool size.',
          [{ read: () => Math.min(pool.inFlight, pool.max) }],
        ),
        new Gauge(
          'rock_legends_db_pool_operations_waiting',
          'Store operations waiting for a pooled connection: those in flight beyond the pool size.',
          [{ read: () => Math.max(0, pool.inFlight - pool.max) }],
        ),
      )
    return families
  }
}

/**
 * Backups the server took and failed to take (`--backup-every`): the schedule (src/server.ts) calls {@link taken} once
 * a backup file is complete under its final name, {@link failed} when an attempt gave up. Without a schedule both stay
 * 0: a `rock-legends backup` through the server writes its file itself, which the server cannot see complete.
 */
export class BackupMetrics {
  readonly backups = new Counter('rock_legends_backups_total', 'Backups written completely.')
  readonly failures = new Counter('rock_legends_backup_failures_total', 'Backups that failed.')
  private last: number | undefined
  private intervalS: number | undefined

  /** Backups are taken every `ms` (`--backup-every`). */
  scheduled(ms: number): void {
    this.intervalS = ms / 1000
  }

  /** A backup is complete under its final name. */
  taken(at = Date.now()): void {
    this.backups.inc()
    this.last = at / 1000
  }

  /** A backup attempt failed (and left no file under a final name). */
  failed(): void {
    this.failures.inc()
  }

  families(): Family[] {
    return [
      this.backups,
      this.failures,
      new Gauge('rock_legends_last_backup_timestamp_seconds', 'When the last complete backup was taken (Unix time).', [
        { read: () => this.last },
      ]),
      new Gauge('rock_legends_backup_interval_seconds', 'How often backups are scheduled (--backup-every).', [
        { read: () => this.intervalS },
      ]),
    ]
  }
}

/**
 * The certificate an HTTPS server serves: when it expires, how many new ones it took on, and how many it refused (a
 * reload that found a pair it cannot serve, and kept the one it had).
 */
export class TlsMetrics {
  readonly reloads = new Counter(
    'rock_legends_tls_certificate_reloads_total',
    'New certificates served after a reload.',
  )
  readonly rejections = new Counter(
    'rock_legends_tls_certificate_reload_failures_total',
    'Reloads that found a certificate or key that cannot be served; the one served before was kept.',
  )
  private notAfter: number | undefined
  /** ACME orders by outcome, with `--https`: none counted (and no series) otherwise. */
  private acmeOrders: Record<'obtained' | 'renewed' | 'failed', number> | undefined

  /**
   * An ACME order ended with `outcome`: the first certificate, a renewal, or a renewal that failed; without one, the
   * certificates come from ACME and the series start at 0.
   */
  ordered(outcome?: 'obtained' | 'renewed' | 'failed'): void {
    this.acmeOrders ??= { obtained: 0, renewed: 0, failed: 0 }
    if (outcome) this.acmeOrders[outcome]++
  }

  /** The certificate served on new connections expires at `notAfter`. */
  served(notAfter: Date): void {
    this.notAfter = notAfter.getTime() / 1000
  }

  /** A new certificate is served. */
  reloaded(): void {
    this.reloads.inc()
  }

  /** A reload found a pair that cannot be served. */
  rejected(): void {
    this.rejections.inc()
  }

  families(): Family[] {
    if (this.notAfter === undefined) return []
    return [
      new Gauge(
        'rock_legends_tls_certificate_expiry_timestamp_seconds',
        'When the certificate served on new connections expires (Unix time).',
        [{ read: () => this.notAfter }],
      ),
      this.reloads,
      this.rejections,
      ...(this.acmeOrders
        ? [
            new ReadCounter(
              'rock_legends_acme_orders_total',
              'ACME orders by outcome: obtained (a first certificate), renewed, failed (a renewal that failed; the certificate served is kept).',
              (['obtained', 'renewed', 'failed'] as const).map((outcome) => ({
                labels: { outcome },
                read: () => this.acmeOrders?.[outcome],
              })),
            ),
          ]
        : []),
    ]
  }
}

/**
 * Every metric of one server (`--metrics`), rendered as Prometheus text by {@link render}. Made only when metrics are
 * asked for: without it nothing is counted anywhere.
 *
 * @example
 * const metrics = new Metrics()
 * const app = createApp({ store, metrics })
 * metrics.render() // '# HELP rock_legends_http_requests_total …'
 */
export class Metrics {
  readonly http = new HttpMetrics()
  readonly store = new StoreMetrics()
  readonly backups = new BackupMetrics()
  /** The certificate of an HTTPS server; no series without HTTPS. */
  readonly tls = new TlsMetrics()
  /** The namespaces of `--fixtures`, read when scraped; set by a server with fixtures. */
  fixtures: FixtureGauges | undefined
  private memory: NodeJS.MemoryUsage | undefined

  private readonly process: Family[] = [
    new Gauge('rock_legends_build_info', 'The version of this build, as a label; always 1.', [
      { labels: { version: pkg.version, bun: Bun.version }, read: () => 1 },
    ]),
    // The engine's own figures, which no standard name covers; the process's are under the standard names below.
    new Gauge('rock_legends_process_heap_used_bytes', "JavaScript heap in use by live objects (the engine's count).", [
      { read: () => this.memory?.heapUsed },
    ]),
    new Gauge('rock_legends_process_heap_total_bytes', 'JavaScript heap the engine holds, used or not.', [
      { read: () => this.memory?.heapTotal },
    ]),
    ...processFamilies(),
  ]

  /** The text `/metrics` answers, once the store has been asked whether it serves (bounded: see `refresh`). */
  async scrape(): Promise<string> {
    await this.store.refresh()
    return this.render()
  }

  /** Every family with its HELP and TYPE lines, as they stand. */
  render(): string {
    this.memory = process.memoryUsage()
    return renderFamilies([
      ...this.http.families(),
      ...this.store.families(),
      ...this.backups.families(),
      ...this.tls.families(),
      ...fixtureFamilies(this.fixtures),
      ...this.process,
    ])
  }
}

/** What `--fixtures` tells the metrics of its namespaces, read when scraped. */
export interface FixtureGauges {
  namespaces(): number
  bytes(): number
  budgetBytes: number
}

/** The families of the fixture namespaces: none without `--fixtures`. */
function fixtureFamilies(fixtures: FixtureGauges | undefined): Family[] {
  if (!fixtures) return []
  return [
    new Gauge('rock_legends_fixtures_namespaces', 'Named namespaces the fixture server holds (--fixtures).', [
      { read: () => fixtures.namespaces() },
    ]),
    new Gauge(
      'rock_legends_fixtures_bytes',
      'What the named namespaces hold together, as their budget counts it (journals, kept changes, what they wrote).',
      [{ read: () => fixtures.bytes() }],
    ),
    new Gauge('rock_legends_fixtures_budget_bytes', 'Their budget (--fixtures-memory).', [
      { read: () => fixtures.budgetBytes },
    ]),
  ]
}
