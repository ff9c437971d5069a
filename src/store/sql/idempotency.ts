import type { SQL } from 'bun'
import type { KeptAnswer } from '../../model/kept-answer.ts'
import {
  type Claim,
  entryBytes,
  type IdempotencyKeys,
  type IdempotencyLimits,
  type KeyedRequest,
  secondsUntil,
} from '../idempotency.ts'
import type { Operate } from './limiter.ts'
import { keepAnswers } from './writes.ts'

/** How many expired rows one claim deletes at most: a claim stays a few short statements whatever the backlog. */
const PURGE_BATCH = 100

/** How long a replica trusts the table's total it last read, adding its own claims to it (ms). */
export const TOTAL_READ_EVERY_MS = 1000

/**
 * The SQL store's {@link IdempotencyKeys}: rows of `rl_idempotency`, shared by every replica. An answer is written into
 * its key's row by the transaction of the insert it answers (writes.ts, `keepAnswers`). A claim is one
 * `INSERT … ON CONFLICT DO UPDATE … WHERE` on the (scope, key) primary key: of concurrent claims of one key, on any
 * replicas, the first inserts and the others wait for its commit, then find the row taken and update nothing; a row
 * that expired (an old answer, or a claim whose lease ran out: its replica died) is taken over the same way.
 *
 * The bounds: a scope's bytes are summed in that statement (its rows, by the primary key). Claims of one scope at the
 * very same moment on several replicas may each pass its last free bytes, so a scope can exceed its bound by as many
 * entries as it had requests racing. The bytes of all scopes would cost a scan of the whole table per claim (25 ms
 * with 100,000 rows), so a replica reads that sum at most every {@link TOTAL_READ_EVERY_MS} and adds what it has
 * claimed and kept since; it reads it again before it refuses. The bound in all can thus be exceeded by what the other
 * replicas claimed within that second.
 */
export function sqlIdempotency(sql: () => SQL, operate: Operate): IdempotencyKeys & { kept(bytes: number): void } {
  const total = new TotalEstimate(async () => {
    const [row] = await sql()`SELECT COALESCE(sum(bytes), 0) AS bytes FROM rl_idempotency`
    return Number(row?.bytes ?? 0)
  })
  return {
    claim: (request, now, limits) => operate(() => claim(sql(), total, request, now, limits)),
    release: (request, claimed) =>
      operate(async () => {
        await sql()`DELETE FROM rl_idempotency WHERE scope = ${request.scope} AND key = ${request.key} AND claim = ${claimed}`
      }),
    keep: (request, claimed, answer, expiresAt) =>
      operate(async () => {
        total.added(await keepAnswers(sql(), [{ keep: { request, claim: claimed, expiresAt }, answer }]))
      }),
    // The catalogue's creates keep their answers in their own transactions (writes.ts), and report the bytes here.
    kept: (bytes) => total.added(bytes),
  }
}

/**
 * The bytes of the whole table as this replica last read them, plus what it added since (never less: what it freed
 * is left in, so the estimate errs towards reading again). Read anew once stale, and whenever it says "full".
 */
class TotalEstimate {
  private bytes = 0
  private readAt = Number.NEGATIVE_INFINITY

  constructor(private readonly read: () => Promise<number>) {}

  /** Whether `more` bytes would take the table past `bound`: by the estimate, read again when stale or when it says so. */
  async exceeds(more: number, bound: number): Promise<boolean> {
    const fresh = performance.now() - this.readAt < TOTAL_READ_EVERY_MS
    if (fresh && this.bytes + more <= bound) return false
    this.readAt = performance.now()
    this.bytes = await this.read()
    return this.bytes + more > bound
  }

  added(bytes: number): void {
    this.bytes += bytes
  }
}

async function claim(
  sql: SQL,
  total: TotalEstimate,
  request: KeyedRequest,
  now: number,
  limits: IdempotencyLimits,
): Promise<Claim> {
  const { scope, key, fingerprint } = request
  await sql`
    DELETE FROM rl_idempotency WHERE (scope, key) IN (
      SELECT scope, key FROM rl_idempotency WHERE until_ms <= ${now}::bigint LIMIT ${PURGE_BATCH}
    )`
  const bytes = entryBytes(request)
  // Full everywhere: no new key, but a key already used still answers as it would.
  if (await total.exceeds(bytes, limits.bytesInAll)) return (await known(sql, request, now)) ?? fullInAll(sql, now)
  const claimed = crypto.randomUUID()
  const [taken] = await sql`
    INSERT INTO rl_idempotency (scope, key, fingerprint, claim, until_ms, bytes)
    SELECT ${scope}, ${key}, ${fingerprint}, ${claimed}, ${now + limits.leaseMs}::bigint, ${bytes}::bigint
    WHERE (SELECT COALESCE(sum(bytes), 0) FROM rl_idempotency WHERE scope = ${scope}) + ${bytes}::bigint <= ${limits.bytesPerScope}::bigint
    ON CONFLICT (scope, key) DO UPDATE
    SET fingerprint = EXCLUDED.fingerprint, claim = EXCLUDED.claim, until_ms = EXCLUDED.until_ms,
      bytes = EXCLUDED.bytes, status = NULL, headers = NULL, body = NULL
    WHERE rl_idempotency.until_ms <= ${now}::bigint
    RETURNING claim`
  if (taken) {
    total.added(bytes)
    return { kind: 'claimed', claim: claimed }
  }
  const found = await known(sql, request, now)
  if (found) return found
  // Not taken and not there: the scope's bound refused it.
  const [own] = await sql`
    SELECT min(until_ms) FILTER (WHERE claim IS NULL) AS oldest FROM rl_idempotency WHERE scope = ${scope}`
  return { kind: 'full', of: 'scope', retryAfter: secondsUntil(Number(own?.oldest ?? now), now) }
}

/** What a live row of the key says to `request`, or `undefined` when there is none. */
async function known(sql: SQL, { scope, key, fingerprint }: KeyedRequest, now: number): Promise<Claim | undefined> {
  const [row] = await sql`
    SELECT fingerprint, claim, status, headers, body FROM rl_idempotency
    WHERE scope = ${scope} AND key = ${key} AND until_ms > ${now}::bigint`
  if (!row) return undefined
  if (row.fingerprint !== fingerprint) return { kind: 'mismatch' }
  if (row.claim !== null) return { kind: 'in-flight', retryAfter: 1 }
  const answer: KeptAnswer = { status: row.status, headers: JSON.parse(row.headers), body: row.body }
  return { kind: 'replay', answer }
}

/** The refusal of a new key when all scopes hold their bound: retry once the oldest answer expires. */
async function fullInAll(sql: SQL, now: number): Promise<Claim> {
  const [all] = await sql`SELECT min(until_ms) AS oldest FROM rl_idempotency WHERE claim IS NULL`
  return { kind: 'full', of: 'all', retryAfter: secondsUntil(Number(all?.oldest ?? now), now) }
}
