import type { SQL } from 'bun'
import type { Attempt, Hit, Limiter, RateLimit, Recents, RecentsRule } from '../store.ts'
import { ReadBatcher } from './reads.ts'
import { inTransaction } from './retry.ts'

/** How often one limiter sweeps the attempts that left its window, at most, while there is no backlog (ms). */
export const SWEEP_EVERY_MS = 60_000
/** How many rows one sweep deletes at most: a sweep stays one short statement however large the backlog. */
export const SWEEP_BATCH = 1000

/** Runs one operation of the limiter: the SQL store passes its own, which adds a deadline and maps lost databases. */
export type Operate = <T>(operation: () => Promise<T>) => Promise<T>

// The id of a key's head row in `rl_attempts`; an attempt's id is a UUID, never empty.
const HEAD = ''

/** Seconds until the oldest of the newest `limit` times leaves the window (at least 1), or 0 below the limit. */
function secondsToWait(newestFirst: readonly number[], { limit, windowMs }: RateLimit, now: number): number {
  const oldestCounted = newestFirst[limit - 1]
  if (oldestCounted === undefined) return 0
  return Math.max(1, Math.ceil((oldestCounted + windowMs - now) / 1000))
}

/** Deletes at most {@link SWEEP_BATCH} rows of limiter `name` last touched at or before `start`; resolves with how many. */
async function deleteExpired(sql: SQL, name: string, start: number): Promise<number> {
  const gone = await sql`
    DELETE FROM rl_attempts WHERE (limiter, subject, id) IN (
      SELECT limiter, subject, id FROM rl_attempts
      WHERE limiter = ${name} AND at_ms <= ${start}::bigint
      LIMIT ${SWEEP_BATCH}
    )
    RETURNING 1`
  return gone.length
}

/**
 * The SQL store's {@link Limiter}: attempts are rows of `rl_attempts`, shared by every replica that uses the same
 * limiter name, so a limit of 5 holds across all replicas together. Times are the app's clock in ms (BIGINT), as
 * the document store's limiter has them. The semantics are {@link MemoryLimiter}'s, and the tests play one script of
 * operations against both.
 *
 * Each key has a head row (`id = ''`) besides its attempts. A `hit` takes the key's turn by upserting that row, which
 * locks it until the transaction ends, and only then counts and inserts:
 *
 * - PostgreSQL (READ COMMITTED): the upsert waits for any other transaction holding the head row, on whichever
 *   replica, to commit. Every later statement of this transaction takes a new snapshot, so the count sees every
 *   attempt committed by the hits that held the row before it. Hits of one key thus run one after the other from
 *   the count to the commit: when `limit` attempts are in the window, every later hit counts them and refuses. Of
 *   any number of concurrent hits at most `limit` pass, and, unlike insert-then-count schemes, no fewer than the
 *   free places (an insert-first scheme lets concurrent hits see each other and all refuse).
 * - CockroachDB (SERIALIZABLE): the transactions are serializable anyway, so check-then-count cannot be interleaved;
 *   the head row turns what would be a read-write conflict into a plain wait on one row. Aborts (40001) are retried
 *   by `inTransaction`.
 *
 * No advisory lock, trigger or isolation level of its own: the upsert on a plain primary key is portable. `settle`,
 * `forgive`, `forgetSettled` and the sweep only mark or delete rows, which can never let a hit pass that should not.
 *
 * Rows are bounded by the attempts made, not by a count of keys (there is no eviction, so no lock can be flooded
 * away): a key holds at most `limit` attempts in its window (`hit` refuses beyond, leaving no row; `record` trims
 * to the newest `limit`) and one head row. Rows that left the window are deleted by the key's next `hit` or
 * `record`, and by a sweep of at most {@link SWEEP_BATCH} rows that each limiter runs during a hit at most every
 * {@link SWEEP_EVERY_MS} (at every hit while the last sweep found a full batch). So the table holds the attempts of
 * one window, plus a minute's worth and at most one batch per replica.
 *
 * @example
 * const failures = new SqlLimiter(sql, 'login-failures-per-client', { limit: 20, windowMs: 15 * 60_000 }, Date.now)
 * const { attempt, retryAfter } = await failures.hit('203.0.113.66')
 */
export class SqlLimiter implements Limiter {
  /** When (by the clock) the next sweep is due. */
  private nextSweep = Number.NEGATIVE_INFINITY

  /** A limiter over the pool `sql` counting the attempts named `name` by `rule`, at the times `clock` gives. */
  constructor(
    private readonly sql: SQL,
    private readonly name: string,
    private readonly rule: RateLimit,
    private readonly clock: () => number,
    private readonly operate: Operate = (operation) => operation(),
  ) {}

  hit(key: string): Promise<Hit> {
    return this.operate(async () => {
      const now = this.clock()
      const hit = await inTransaction(this.sql, async (tx): Promise<Hit> => {
        await this.takeTurn(tx, key, now)
        const id = Bun.randomUUIDv7()
        // The count before this attempt comes back with it, so the answer knows what remains without asking again.
        const [inserted] = await tx`
          WITH counted AS (
            SELECT count(*)::int AS n FROM rl_attempts
            WHERE limiter = ${this.name} AND subject = ${key} AND id <> ${HEAD} AND at_ms > ${now - this.rule.windowMs}::bigint
          )
          INSERT INTO rl_attempts (limiter, subject, id, at_ms, settled)
          SELECT ${this.name}, ${key}, ${id}, ${now}::bigint, 0 FROM counted
          WHERE counted.n < ${this.rule.limit}
          RETURNING id, (SELECT n FROM counted) AS before`
        if (inserted)
          return {
            attempt: { key, at: now, id },
            retryAfter: 0,
            remaining: Math.max(0, this.rule.limit - Number(inserted.before) - 1),
          }
        return { attempt: undefined, retryAfter: secondsToWait(await this.times(tx, key, now), this.rule, now) }
      })
      await this.sweepIfDue(now)
      return hit
    })
  }

  record(key: string): Promise<Attempt> {
    return this.operate(async () => {
      const now = this.clock()
      const id = Bun.randomUUIDv7()
      await inTransaction(this.sql, async (tx) => {
        await this.takeTurn(tx, key, now)
        await tx`
          INSERT INTO rl_attempts (limiter, subject, id, at_ms, settled)
          VALUES (${this.name}, ${key}, ${id}, ${now}::bigint, 0)`
        // The newest `limit` stay, as in the memory limiter; ties by id, which grows with time in this process.
        await tx`
          DELETE FROM rl_attempts WHERE limiter = ${this.name} AND subject = ${key} AND id IN (
            SELECT id FROM rl_attempts WHERE limiter = ${this.name} AND subject = ${key} AND id <> ${HEAD}
            ORDER BY at_ms DESC, id DESC OFFSET ${this.rule.limit}
          )`
      })
      await this.sweepIfDue(now)
      return { key, at: now, id }
    })
  }

  settle(attempt: Attempt): Promise<void> {
    return this.operate(async () => {
      if (!attempt.id) return
      await this.sql`
        UPDATE rl_attempts SET settled = 1
        WHERE limiter = ${this.name} AND subject = ${attempt.key} AND id = ${attempt.id}`
    })
  }

  forgive(attempt: Attempt): Promise<void> {
    return this.operate(async () => {
      if (!attempt.id) return
      await this
        .sql`DELETE FROM rl_attempts WHERE limiter = ${this.name} AND subject = ${attempt.key} AND id = ${attempt.id}`
    })
  }

  forgetSettled(key: string): Promise<void> {
    return this.operate(async () => {
      await this.sql`
        DELETE FROM rl_attempts
        WHERE limiter = ${this.name} AND subject = ${key} AND id <> ${HEAD} AND settled = 1`
    })
  }

  count(key: string): Promise<number> {
    return this.operate(async () => {
      const now = this.clock()
      const [row] = await this.sql`
        SELECT count(*) AS n FROM rl_attempts
        WHERE limiter = ${this.name} AND subject = ${key} AND id <> ${HEAD} AND at_ms > ${now - this.rule.windowMs}::bigint`
      return Math.min(Number(row?.n ?? 0), this.rule.limit)
    })
  }

  /**
   * Asked on every request with a credential (the brake on guessing, auth/guard.ts): the asks of one turn of the event
   * loop share one statement (reads.ts), however many requests and keys, instead of a round trip each.
   */
  retryAfter(key: string): Promise<number> {
    return this.waits.get(key).then((seconds) => seconds ?? 0)
  }

  /**
   * `retryAfter`'s statements: the seconds to wait of every key asked in one turn, those with none left out. A key
   * holds at most `limit` attempts in the window (`hit` refuses beyond, `record` trims), so the statement reads at
   * most `limit` rows a key without a LIMIT of its own, and its plan does not depend on how many keys are asked:
   * PostgreSQL keeps one generic plan instead of planning every statement again, which cost more than running it.
   */
  private readonly waits = new ReadBatcher((keys: string[]) =>
    this.operate(async () => {
      const now = this.clock()
      const rows = await this.sql`
        SELECT subject, at_ms FROM rl_attempts
        WHERE limiter = ${this.name} AND subject = ANY(${this.sql.array(keys, 'TEXT')}::text[]) AND id <> ${HEAD}
          AND at_ms > ${now - this.rule.windowMs}::bigint`
      const times = new Map<string, number[]>()
      for (const row of rows as { subject: string; at_ms: unknown }[]) {
        const list = times.get(row.subject)
        if (list) list.push(Number(row.at_ms))
        else times.set(row.subject, [Number(row.at_ms)])
      }
      const waits = new Map<string, number>()
      for (const [key, found] of times) {
        const seconds = secondsToWait(
          found.sort((a, b) => b - a),
          this.rule,
          now,
        )
        if (seconds > 0) waits.set(key, seconds)
      }
      return waits
    }),
  )

  /**
   * Deletes at most {@link SWEEP_BATCH} rows of this limiter that left the window: attempts, and the head rows of
   * keys with no attempt for a whole window. Resolves with how many went.
   */
  sweep(): Promise<number> {
    return deleteExpired(this.sql, this.name, this.clock() - this.rule.windowMs)
  }

  /**
   * Upserts the head row of `key`, which holds it locked until `tx` ends (see the class comment), and deletes the
   * key's attempts that left the window.
   */
  private async takeTurn(tx: SQL, key: string, now: number): Promise<void> {
    await tx`
      INSERT INTO rl_attempts (limiter, subject, id, at_ms, settled)
      VALUES (${this.name}, ${key}, ${HEAD}, ${now}::bigint, 1)
      ON CONFLICT (limiter, subject, id) DO UPDATE SET at_ms = GREATEST(rl_attempts.at_ms, excluded.at_ms)`
    await tx`
      DELETE FROM rl_attempts
      WHERE limiter = ${this.name} AND subject = ${key} AND id <> ${HEAD} AND at_ms <= ${now - this.rule.windowMs}::bigint`
  }

  /** The times of the newest `limit` attempts of `key` in the window, newest first. */
  private async times(sql: SQL, key: string, now: number): Promise<number[]> {
    const rows = await sql`
      SELECT at_ms FROM rl_attempts
      WHERE limiter = ${this.name} AND subject = ${key} AND id <> ${HEAD} AND at_ms > ${now - this.rule.windowMs}::bigint
      ORDER BY at_ms DESC LIMIT ${this.rule.limit}`
    return rows.map((row: { at_ms: unknown }) => Number(row.at_ms))
  }

  /** Sweeps when one is due; a failed sweep is only tried again at the next hit (the limits do not depend on it). */
  private async sweepIfDue(now: number): Promise<void> {
    if (now < this.nextSweep) return
    this.nextSweep = now + SWEEP_EVERY_MS
    try {
      if ((await this.sweep()) >= SWEEP_BATCH) this.nextSweep = now
    } catch {
      this.nextSweep = Number.NEGATIVE_INFINITY
    }
  }
}

/**
 * The SQL store's {@link Recents}, in the limiters' table `rl_attempts` under its own name: one row per member
 * (`subject` the owner, `id` the member, `at_ms` its latest add) and per owner a head row (`id = ''`), shared by every
 * replica using the same name. An add takes the owner's turn on its head row as a limiter's hit does (see
 * {@link SqlLimiter}), upserts the member, and deletes the owner's members beyond the newest `perOwner`: adds of one
 * owner take turns, so an owner holds at most `perOwner` members and its head row, whatever the concurrency, and only
 * its own adds delete them. Members that left the window are not known any more (`has` looks at `at_ms`) and are
 * deleted by a bounded sweep, as the limiters' attempts are.
 *
 * @example
 * const known = new SqlRecents(sql, 'known-addresses', { perOwner: 10, windowMs: 30 * 86_400_000 }, Date.now)
 * await known.add('carlos@rock-legends.com', '198.51.100.7')
 */
export class SqlRecents implements Recents {
  /** When (by the clock) the next sweep is due. */
  private nextSweep = Number.NEGATIVE_INFINITY

  /** Recents over the pool `sql` named `name`, keeping members by `rule`, at the times `clock` gives. */
  constructor(
    private readonly sql: SQL,
    private readonly name: string,
    private readonly rule: RecentsRule,
    private readonly clock: () => number,
    private readonly operate: Operate = (operation) => operation(),
  ) {}

  add(owner: string, member: string): Promise<void> {
    return this.operate(async () => {
      if (member === HEAD) return
      const now = this.clock()
      await inTransaction(this.sql, async (tx) => {
        await tx`
          INSERT INTO rl_attempts (limiter, subject, id, at_ms, settled)
          VALUES (${this.name}, ${owner}, ${HEAD}, ${now}::bigint, 1)
          ON CONFLICT (limiter, subject, id) DO UPDATE SET at_ms = GREATEST(rl_attempts.at_ms, excluded.at_ms)`
        await tx`
          INSERT INTO rl_attempts (limiter, subject, id, at_ms, settled)
          VALUES (${this.name}, ${owner}, ${member}, ${now}::bigint, 1)
          ON CONFLICT (limiter, subject, id) DO UPDATE SET at_ms = GREATEST(rl_attempts.at_ms, excluded.at_ms)`
        await tx`
          DELETE FROM rl_attempts WHERE limiter = ${this.name} AND subject = ${owner} AND id IN (
            SELECT id FROM rl_attempts WHERE limiter = ${this.name} AND subject = ${owner} AND id <> ${HEAD}
            ORDER BY at_ms DESC, id DESC OFFSET ${this.rule.perOwner}
          )`
      })
      await this.sweepIfDue(now)
    })
  }

  has(owner: string, member: string): Promise<boolean> {
    return this.operate(async () => {
      if (member === HEAD) return false
      const start = this.clock() - this.rule.windowMs
      const [row] = await this.sql`
        SELECT 1 AS known FROM rl_attempts
        WHERE limiter = ${this.name} AND subject = ${owner} AND id = ${member} AND at_ms > ${start}::bigint`
      return row !== undefined
    })
  }

  /** How many members `owner` has, in the window or not yet deleted (at most `perOwner`). */
  members(owner: string): Promise<number> {
    return this.operate(async () => {
      const [row] = await this.sql`
        SELECT count(*) AS n FROM rl_attempts WHERE limiter = ${this.name} AND subject = ${owner} AND id <> ${HEAD}`
      return Number(row?.n ?? 0)
    })
  }

  /** Deletes at most {@link SWEEP_BATCH} rows that left the window, members and head rows; resolves with how many. */
  sweep(): Promise<number> {
    return deleteExpired(this.sql, this.name, this.clock() - this.rule.windowMs)
  }

  /** Sweeps when one is due, as {@link SqlLimiter} does. */
  private async sweepIfDue(now: number): Promise<void> {
    if (now < this.nextSweep) return
    this.nextSweep = now + SWEEP_EVERY_MS
    try {
      if ((await this.sweep()) >= SWEEP_BATCH) this.nextSweep = now
    } catch {
      this.nextSweep = Number.NEGATIVE_INFINITY
    }
  }
}
