import pkg from '../../package.json' with { type: 'json' }
import type { Store } from '../store/store.ts'
import { contentChecksumSoon, encodeBackup, type StoreKind } from './backup-format.ts'

/**
 * A backup of `store` as it is now, taken while the server goes on serving: its snapshot (a moment: new lists of the
 * same records for the document store, one REPEATABLE READ transaction over SQL), then its checksum and its text a
 * thousand records at a time, other requests running in between. Everything acknowledged before the call is in it.
 */
export async function onlineBackup(
  store: Store,
  kind: StoreKind,
): Promise<{ takenAt: string; pieces: Generator<string> }> {
  const content = await store.snapshot()
  const takenAt = new Date().toISOString()
  const checksum = await contentChecksumSoon(content)
  return { takenAt, pieces: encodeBackup({ takenAt, store: kind, build: pkg.version, checksum }, content) }
}
