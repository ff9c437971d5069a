/**
 * An answer kept for an `Idempotency-Key` (src/http/idempotency.ts), as a data file and its journal hold it beside the
 * records. A backup, a copy and a fixture's state never carry them (`snapshot()` leaves them out).
 */
import { type Static, Type } from '@sinclair/typebox'

/** The answer kept for a key: enough to send it again byte for byte. */
export const KeptAnswer = Type.Object({
  status: Type.Integer({ minimum: 100, maximum: 599 }),
  /** The headers that matter for a replay (`content-type`, `location`, `etag`), by lower-case name. */
  headers: Type.Record(Type.String(), Type.String()),
  body: Type.String(),
})

/** An answer as kept. */
export type KeptAnswer = Static<typeof KeptAnswer>

/** One answered key. Claims in flight are never written: a restart forgets them, as it ends their requests. */
export const KeptEntry = Type.Object({
  scope: Type.String(),
  key: Type.String(),
  fingerprint: Type.String(),
  /** When it stops being replayed, in ms since the epoch. */
  expiresAt: Type.Integer(),
  answer: KeptAnswer,
})

/** An answered key, as kept. */
export type KeptEntry = Static<typeof KeptEntry>
