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

/** How many expired rows one claim deletes at most: a claim stays a few short statements whatever the backlog. */
const PURGE_BATCH = 100

/**
 * The SQL store's {@link IdempotencyKeys}: rows of `rl_idempotency`, shared by every replica. A claim is one
 * `INSERT … ON CONFLICT DO UPDATE … WHERE` on the (scope, key) primary key: of concurrent claims of one key, on any
 * replicas, the first inserts and the others wait for its commit, then find the row taken and update nothing; a row
 * that expired (an old answer, or a claim whose lease ran out: its replica died) is taken over the same way. The
 * bounds are sums checked in that statement: claims of one scope running at the very same moment on several
 * replicas may each pass the last free bytes, so a scope can exceed its bound by as many entries as it had requests
 * racing, never more.
 */
export function sqlIdempotency(sql: () => SQL, operate: Operate): IdempotencyKeys {
  return {
    claim: (request, now, limits) => operate(() => claim(sql(), request, now, limits)),
    complete: (request, claimed, answer, now, limits) =>
      operate(async () => {
        const bytes = entryBytes(request, answer)
        await sql()`
          UPDATE rl_idempotency
          SET claim = NULL, until_ms = ${now + limits.ttlMs}::bigint, bytes = ${bytes}::bigint,
            status = ${answer.status}::int, headers = ${JSON.stringify(answer.headers)}, body = ${answer.body}
          WHERE scope = ${request.scope} AND key = ${request.key} AND claim = ${claimed}`
      }),
    release: (request, claimed) =>
      operate(async () => {
        await sql()`DELETE FROM rl_idempotency WHERE scope = ${request.scope} AND key = ${request.key} AND claim = ${claimed}`
      }),
  }
}

async function claim(sql: SQL, request: KeyedRequest, now: number, limits: IdempotencyLimits): Promise<Claim> {
  const { scope, key, fingerprint } = request
  await sql`
    DELETE FROM rl_idempotency WHERE (scope, key) IN (
      SELECT scope, key FROM rl_idempotency WHERE until_ms <= ${now}::bigint LIMIT ${PURGE_BATCH}
    )`
  const bytes = entryBytes(request)
  const claimed = crypto.randomUUID()
  const [taken] = await sql`
    INSERT INTO rl_idempotency (scope, key, fingerprint, claim, until_ms, bytes)
    SELECT ${scope}, ${key}, ${fingerprint}, ${claimed}, ${now + limits.leaseMs}::bigint, ${bytes}::bigint
    WHERE (SELECT COALESCE(sum(bytes), 0) FROM rl_idempotency WHERE scope = ${scope}) + ${bytes}::bigint <= ${limits.bytesPerScope}::bigint
      AND (SELECT COALESCE(sum(bytes), 0) FROM rl_idempotency) + ${bytes}::bigint <= ${limits.bytesInAll}::bigint
    ON CONFLICT (scope, key) DO UPDATE
    SET fingerprint = EXCLUDED.fingerprint, claim = EXCLUDED.claim, until_ms = EXCLUDED.until_ms,
      bytes = EXCLUDED.bytes, status = NULL, headers = NULL, body = NULL
    WHERE rl_idempotency.until_ms <= ${now}::bigint
    RETURNING claim`
  if (taken) return { kind: 'claimed', claim: claimed }
  const [row] = await sql`
    SELECT fingerprint, claim, until_ms, status, headers, body FROM rl_idempotency
    WHERE scope = ${scope} AND key = ${key} AND until_ms > ${now}::bigint`
  if (row) {
    if (row.fingerprint !== fingerprint) return { kind: 'mismatch' }
    if (row.claim !== null) return { kind: 'in-flight', retryAfter: 1 }
    const answer: KeptAnswer = { status: row.status, headers: JSON.parse(row.headers), body: row.body }
    return { kind: 'replay', answer }
  }
  // Not taken and not there: a bound refused it.
  const [own] = await sql`
    SELECT COALESCE(sum(bytes), 0) AS bytes, min(until_ms) FILTER (WHERE claim IS NULL) AS oldest
    FROM rl_idempotency WHERE scope = ${scope}`
  if (Number(own?.bytes ?? 0) + bytes > limits.bytesPerScope)
    return { kind: 'full', of: 'scope', retryAfter: secondsUntil(Number(own?.oldest ?? now), now) }
  const [all] = await sql`SELECT min(until_ms) AS oldest FROM rl_idempotency WHERE claim IS NULL`
  return { kind: 'full', of: 'all', retryAfter: secondsUntil(Number(all?.oldest ?? now), now) }
}
