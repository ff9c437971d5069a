/** How often a store found away is tried again, in ms, when nothing else asks it meanwhile. */
export const PROBE_EVERY_MS = 5000

/** What a {@link StoreAvailability} tells whoever watches it (the server's log). */
export interface AvailabilityWatcher {
  /** The store cannot serve: `error` is the failure that showed it. */
  away(error: unknown): void
  /** It serves again, `ms` after it went away. */
  back(ms: number): void
}

/**
 * Whether a store can serve right now, as its own operations find it: away at the first one that fails because the
 * store cannot be used (a database out of reach, a disk that refuses the journal), back at the first that succeeds.
 * Noting an outcome costs a comparison; nothing runs while the store serves. While it is away, `probe` (a check of the
 * database, a commit of nothing to the journal) runs every `probeEveryMs` after the previous one settled, so that the
 * store is found back even when no request asks for it.
 *
 * An outcome is news only in the state its operation began in: a write that began before the database went away and
 * succeeds late does not bring it back, and a read that began during the outage and fails after it is over does not
 * send it away again. Operations read {@link turn} when they begin and pass it along.
 *
 * @example
 * const turn = availability.turn
 * try {
 *   await query()
 *   availability.succeeded(turn)
 * } catch (error) {
 *   if (error instanceof DatabaseUnavailableError) availability.failed(error, turn)
 * }
 */
export class StoreAvailability {
  /** Moves on at every change of state. */
  turn = 0
  private awaySince: number | undefined
  private timer: ReturnType<typeof setTimeout> | undefined
  private watcher: AvailabilityWatcher | undefined
  private closed = false

  /** `probe` resolves when the store serves, rejects when it does not; the store's own outcomes reach us anyway. */
  constructor(
    private readonly probe: () => Promise<unknown>,
    readonly probeEveryMs = PROBE_EVERY_MS,
  ) {}

  /** Whether the store serves, as far as its latest operations tell. */
  get up(): boolean {
    return this.awaySince === undefined
  }

  /** Tells `watcher` of every change from now on (one watcher: the server's log). */
  watch(watcher: AvailabilityWatcher): void {
    this.watcher = watcher
  }

  /** An operation that began at `turn` succeeded. */
  succeeded(turn: number): void {
    if (this.awaySince === undefined || turn !== this.turn) return
    const ms = Date.now() - this.awaySince
    this.awaySince = undefined
    this.turn += 1
    clearTimeout(this.timer)
    this.timer = undefined
    this.watcher?.back(ms)
  }

  /** An operation that began at `turn` failed because the store cannot be used. */
  failed(error: unknown, turn: number): void {
    if (this.awaySince !== undefined || turn !== this.turn || this.closed) return
    this.awaySince = Date.now()
    this.turn += 1
    this.watcher?.away(error)
    this.probeLater()
  }

  /** Stops probing: the store is closed. */
  close(): void {
    this.closed = true
    clearTimeout(this.timer)
    this.timer = undefined
  }

  private probeLater(): void {
    this.timer = setTimeout(() => {
      const turn = this.turn
      // The probe's outcome is noted here too, for a probe that does not go through the store's own noting.
      this.probe().then(
        () => this.succeeded(turn),
        () => {
          // Still the same outage: otherwise whoever changed the state since has seen to the next probe.
          if (turn === this.turn && !this.closed) this.probeLater()
        },
      )
    }, this.probeEveryMs)
    // A store away must not keep a process alive that has nothing else to do.
    this.timer.unref?.()
  }
}
