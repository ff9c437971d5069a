import { withResolvers } from '#runtime'
import type { StoreMetrics } from '../../metrics/metrics.ts'
import type { StoreAvailability } from '../availability.ts'
import { Batch } from './batch.ts'
import type { Persistence } from './persistence.ts'
import type { Records } from './records.ts'

/** A mutation applied in a batch: it reads and changes records through the batch, and returns its result. */
export type Mutation<T> = (batch: Batch) => T

interface Pending {
  mutation: Mutation<unknown>
  resolve: (result: unknown) => void
  reject: (error: unknown) => void
  /** A probe of the disk ({@link GroupCommit.probe}): no change anyone asked for, so not counted in the metrics. */
  probe?: true
}

/**
 * Lets every mutation that arrives while a commit is in flight share the next one, so that write throughput grows
 * with concurrency instead of collapsing into one fsync per request. Mutations are applied to the records one by one,
 * in arrival order, when their batch starts; a mutation that throws fails alone. The batch is then persisted once:
 * every mutation in it is acknowledged together, or rolled back and refused together.
 *
 * It drives the layers below it (the batch, the records, the persistence) and is called by the store above it,
 * never the other way round.
 *
 * @example
 * const commits = new GroupCommit(records, journalPersistence)
 * const id = await commits.submit((batch) => batch.nextId('artists')) // resolves once the batch is durable
 */
export class GroupCommit {
  private queue: Pending[] = []
  private running: Promise<void> | undefined
  /** The batch the next commit carries; bookkeeping (see {@link pending}) joins it before it starts. */
  private next: Batch
  /** Where commits are counted (`--metrics`); none by default. */
  metrics: StoreMetrics | undefined

  /**
   * Commits mutations of `records`, made durable by `persistence`; whether persisting works is noted in
   * `availability`.
   */
  constructor(
    private readonly records: Records,
    private readonly persistence: Persistence,
    private readonly availability?: StoreAvailability,
  ) {
    this.next = new Batch(records)
  }

  /** The batch the next commit will carry: for bookkeeping that rides along with it (`Batch.note`). */
  get pending(): Batch {
    return this.next
  }

  /** Applies `mutation` in the next batch and resolves with its result once the batch is durable. */
  submit<T>(mutation: Mutation<T>): Promise<T> {
    return this.enqueue(mutation)
  }

  /**
   * Commits nothing but the counters (`Batch.probe`), to learn whether the disk takes a commit again; resolves once
   * it did. Not counted as a commit, nor as a failed one: nobody asked for a change.
   */
  probe(): Promise<void> {
    return this.enqueue((batch) => batch.probe(), true)
  }

  private enqueue<T>(mutation: Mutation<T>, probe?: true): Promise<T> {
    const { promise, resolve, reject } = withResolvers<T>()
    this.queue.push({ mutation, resolve: resolve as (result: unknown) => void, reject, probe })
    this.running ??= this.drain()
    return promise
  }

  /** Resolves when no mutation is pending or being persisted. */
  async idle(): Promise<void> {
    while (this.running) await this.running
  }

  private async drain(): Promise<void> {
    // Start on the next microtask: mutations submitted in the same tick join the first batch.
    await null
    try {
      while (this.queue.length > 0) {
        const batch = this.next
        const applied: [Pending, unknown][] = []
        for (const pending of this.queue.splice(0)) {
          try {
            applied.push([pending, pending.mutation(batch)])
          } catch (error) {
            pending.reject(error)
          }
        }
        if (applied.length === 0) continue
        // Bookkeeping from now on rides with the commit after this one.
        this.next = new Batch(this.records)
        // A batch with nothing to persist tells nothing of the disk.
        const telling = !batch.isEmpty
        const turn = this.availability?.turn ?? 0
        const asked = applied.filter(([pending]) => !pending.probe).length
        try {
          await batch.persist(this.persistence)
        } catch (error) {
          batch.rollback()
          if (asked > 0) this.metrics?.commitFailures.inc()
          this.availability?.failed(error, turn)
          for (const [pending] of applied) pending.reject(error)
          continue
        }
        if (telling) this.availability?.succeeded(turn)
        if (asked > 0) this.metrics?.committed(asked)
        for (const [pending, result] of applied) pending.resolve(result)
      }
    } finally {
      this.running = undefined
    }
  }
}
