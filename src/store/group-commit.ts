interface Batch {
  promise: Promise<void>
  resolve: () => void
  reject: (error: unknown) => void
}

function batch(): Batch {
  const { promise, resolve, reject } = Promise.withResolvers<void>()
  // A rejection nobody awaits (a touch() with no writer) must not crash the process.
  promise.catch(() => {})
  return { promise, resolve, reject }
}

/**
 * Serialises writes and lets every change that arrives while one write is in flight share the next one, so that
 * write throughput grows with concurrency instead of collapsing into one fsync per request.
 *
 * @example
 * const commits = new GroupCommit(() => db.write())
 * mutate(db.data); await commits.request() // resolves once a write that started after the mutation is durable
 */
export class GroupCommit {
  private pending: Batch | undefined
  private running: Promise<void> | undefined

  /**
   * `write` persists the current state. When it throws, `recover` prepares a rollback and returns it; the rollback
   * runs synchronously together with rejecting every waiter, so no change slips in between the two.
   */
  constructor(
    private readonly write: () => Promise<void>,
    private readonly recover: () => Promise<() => void> = async () => () => {},
  ) {}

  /** Resolves once a write that began after this call has succeeded; rejects if that write failed. */
  request(): Promise<void> {
    this.pending ??= batch()
    const { promise } = this.pending
    this.running ??= this.drain()
    return promise
  }

  /** Resolves when no write is in flight or pending. */
  async idle(): Promise<void> {
    while (this.running) await this.running
  }

  private async drain(): Promise<void> {
    try {
      while (this.pending) {
        const current = this.pending
        this.pending = undefined
        try {
          await this.write()
          current.resolve()
        } catch (error) {
          const rollback = await this.recover().catch(() => () => {})
          rollback()
          // Changes waiting for the next write were made on top of the failed one and were rolled back with it.
          const waiting = this.pending as Batch | undefined
          this.pending = undefined
          current.reject(error)
          waiting?.reject(error)
        }
      }
    } finally {
      this.running = undefined
    }
  }
}
