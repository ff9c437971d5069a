interface Pending {
  apply: () => unknown
  resolve: (result: unknown) => void
  reject: (error: unknown) => void
}

/**
 * Lets every change that arrives while a commit is in flight share the next one, so that write throughput grows
 * with concurrency instead of collapsing into one fsync per request. Changes are applied in memory one by one, in
 * arrival order, when their batch starts; a change that throws fails alone. The batch is then persisted once:
 * every change in it is acknowledged together, or rolled back and refused together.
 *
 * @example
 * const commits = new GroupCommit(() => journal.append(changes), () => undo())
 * const artist = await commits.submit(() => insertArtist(fields)) // resolves once the batch is durable
 */
export class GroupCommit {
  private queue: Pending[] = []
  private running: Promise<void> | undefined

  /** `persist` makes the changes applied since the last call durable; `rollback` undoes them when it fails. */
  constructor(
    private readonly persist: () => Promise<void>,
    private readonly rollback: () => void,
  ) {}

  /** Applies `apply` in the next batch and resolves with its result once the batch is durable. */
  submit<T>(apply: () => T): Promise<T> {
    const { promise, resolve, reject } = Promise.withResolvers<T>()
    this.queue.push({ apply, resolve: resolve as (result: unknown) => void, reject })
    this.running ??= this.drain()
    return promise
  }

  /** Resolves when no change is pending or being persisted. */
  async idle(): Promise<void> {
    while (this.running) await this.running
  }

  private async drain(): Promise<void> {
    // Start on the next microtask: changes submitted in the same tick join the first batch.
    await null
    try {
      while (this.queue.length > 0) {
        const applied: [Pending, unknown][] = []
        for (const change of this.queue.splice(0)) {
          try {
            applied.push([change, change.apply()])
          } catch (error) {
            change.reject(error)
          }
        }
        if (applied.length === 0) continue
        try {
          await this.persist()
        } catch (error) {
          this.rollback()
          for (const [change] of applied) change.reject(error)
          continue
        }
        for (const [change, result] of applied) change.resolve(result)
      }
    } finally {
      this.running = undefined
    }
  }
}
