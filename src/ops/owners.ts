import { resolve } from 'node:path'
import { RefusedError } from './refused-error.ts'
import { storeName } from './report.ts'

/**
 * Refuses the data file `file` while a running server owns it (the kernel says whether one holds its lock), naming
 * its pid and, once it recorded one in the lock, its address; `what` says why and what to do.
 */
export async function refuseOwnedFile(file: string, what: string): Promise<void> {
  const { lockOwner } = await import('../store/json-file/lock.ts')
  const owner = lockOwner(resolve(file))
  if (!owner) return
  const who =
    owner.running && owner.pid !== undefined
      ? `the server with pid ${owner.pid}${owner.url ? ` at ${owner.url}` : ''}`
      : 'another process'
  throw new RefusedError(`${file} is in use by ${who}: ${what}`)
}

/**
 * How long a database's other sessions are given to end before a command refuses it: those of a server stopped (or a
 * command that ended) just before stay listed until their backends notice, a few milliseconds on a quiet machine,
 * longer on a busy one.
 */
export const SESSIONS_SETTLE_MS = 1000

/**
 * Refuses the database at `url` while other sessions are connected to it (the replicas serving it, or anyone else),
 * once they have had {@link SESSIONS_SETTLE_MS} to end, naming the first few by pid and client address; `what` says
 * why and what to do.
 */
export async function refuseConnectedDatabase(url: string, what: string): Promise<void> {
  const { otherSessions } = await import('./database.ts')
  const sessions = await otherSessions(url, SESSIONS_SETTLE_MS)
  if (sessions.length === 0) return
  throw new RefusedError(
    `${await storeName(url)} is in use by ${sessions.length} other connection${sessions.length === 1 ? '' : 's'} (${sessions
      .slice(0, 5)
      .map((s) => `pid ${s.pid} from ${s.client}${s.application ? ` (${s.application})` : ''} since ${s.since}`)
      .join('; ')}): ${what}`,
  )
}
