import type { SQL } from 'bun'
import type { StoreDocument } from '../../model/store-document.ts'
import { dumpHistory } from './history.ts'
import {
  ALBUM_COLUMNS,
  ARTIST_COLUMNS,
  albumOf,
  albumRow,
  artistOf,
  artistRow,
  credentialOf,
  credentialRow,
  userOf,
  userRow,
} from './rows.ts'
import { STRIPES } from './writes.ts'

/** The name of the one reset point every replica shares. */
export const RESET_POINT = 'reset'

/** Rows per INSERT: far below PostgreSQL's 65,535 parameters for the widest table. */
const CHUNK = 1000

/** Inserts `rows` into `table` in a few multi-row statements. */
export async function insertRows(tx: SQL, table: string, rows: readonly Record<string, unknown>[]): Promise<void> {
  for (let at = 0; at < rows.length; at += CHUNK) await tx`INSERT INTO ${tx(table)} ${tx(rows.slice(at, at + CHUNK))}`
}

/** The sequence of each counter of a document (migration 5). */
const SEQUENCES = {
  artists: 'rl_artist_ids',
  albums: 'rl_album_ids',
  users: 'rl_user_ids',
  credentials: 'rl_credential_ids',
} as const

/**
 * Everything stored now, read in `tx`, whose isolation must be at least REPEATABLE READ for one consistent view of
 * the rows. The counters are the last ids the sequences gave: a sequence is not transactional, so one taken by a
 * write still in flight counts too (the next id after a reset is then past it, the same at every reset).
 */
async function dump(tx: SQL): Promise<StoreDocument> {
  const history = await dumpHistory(tx)
  const [last] = await tx.unsafe(
    `SELECT ${Object.entries(SEQUENCES)
      .map(
        ([name, sequence]) =>
          `(SELECT CASE WHEN is_called THEN last_value ELSE last_value - 1 END FROM ${sequence}) AS ${name}`,
      )
      .join(', ')}`,
  )
  return {
    version: 1,
    counters: {
      artists: Number(last?.artists ?? 0),
      albums: Number(last?.albums ?? 0),
      users: Number(last?.users ?? 0),
      credentials: Number(last?.credentials ?? 0),
    },
    artists: (await tx.unsafe(`SELECT ${ARTIST_COLUMNS} FROM rl_artists ORDER BY id`)).map(artistOf),
    albums: (await tx.unsafe(`SELECT ${ALBUM_COLUMNS} FROM rl_albums ORDER BY id`)).map(albumOf),
    users: (await tx`SELECT * FROM rl_users ORDER BY id`).map(userOf),
    credentials: (await tx`SELECT * FROM rl_credentials ORDER BY id`).map(credentialOf),
    // Absent when empty, as a data file leaves it: a store without history dumps as it did before histories.
    ...(history.length > 0 && { history }),
  }
}

/**
 * How a transaction of {@link dumpConsistent} begins (`sql.begin`'s options): in the `BEGIN` itself, since a transaction
 * sets its time limits in its first statement (limits.ts), after which its isolation level can no longer change.
 */
export const REPEATABLE_READ = 'isolation level repeatable read'

/** Everything stored now, in `tx`, a transaction begun {@link REPEATABLE_READ}: one consistent view. */
export async function dumpConsistent(tx: SQL): Promise<StoreDocument> {
  return dump(tx)
}

/**
 * Puts every sequence back to its counter in `counters` (the last id given: its next id is the one after) and commits
 * `tx`, in one message. No sequence is transactional (`setval` is never rolled back), so a client that died between
 * its `setval`s and its `COMMIT` would leave the old rows under the new counters, whose next ids would then be ones
 * the old rows hold. PostgreSQL runs every statement of a message it has received before it reads on, whether or not
 * the client is still there (unless `client_connection_check_interval` is set): the counters and the rows it commits
 * change together, or neither does. `tx` is done after this; the `COMMIT` its `begin` sends later is a no-op.
 */
export async function commitWithCounters(tx: SQL, counters: StoreDocument['counters']): Promise<void> {
  const setvals = Object.entries(SEQUENCES).map(([name, sequence]) => {
    const next = (counters[name as keyof typeof SEQUENCES] ?? 0) + 1
    if (!Number.isSafeInteger(next) || next < 1) throw new Error(`counter ${name} is not a positive integer: ${next}`)
    return `setval('${sequence}', ${next}, false)`
  })
  await tx.unsafe(`SELECT ${setvals.join(', ')}; COMMIT`)
}

/**
 * Replaces every record with `document`'s, in `tx`: the search and order columns and the album counts are computed
 * again, by this build's rules. Its counters go in with the commit: {@link commitWithCounters}.
 */
export async function replaceAll(tx: SQL, document: StoreDocument, emailKey: (email: string) => string) {
  // Every stripe of the artists' tally first, in order: creates of artists in flight on any replica commit before
  // the rows are replaced, and those that come later wait for the reset, then take their ids from the sequence as
  // it puts it back (writes.ts takes them only once it holds a stripe).
  await tx`SELECT stripe FROM rl_tallies WHERE name = 'artists' ORDER BY stripe FOR UPDATE`
  // Children first, for the foreign keys. DELETE rather than TRUNCATE: TRUNCATE is a schema change in CockroachDB.
  // The kept idempotency answers spoke of the catalogue replaced: a retry after a restore (or a reset) runs again.
  for (const table of ['rl_idempotency', 'rl_credentials', 'rl_albums', 'rl_users', 'rl_artists'])
    await tx`DELETE FROM ${tx(table)}`
  const albumCounts = new Map<number, number>()
  for (const album of document.albums) albumCounts.set(album.artistId, (albumCounts.get(album.artistId) ?? 0) + 1)
  await insertRows(
    tx,
    'rl_artists',
    document.artists.map((artist) => artistRow(artist.id, artist, albumCounts.get(artist.id) ?? 0)),
  )
  await insertRows(
    tx,
    'rl_albums',
    document.albums.map((album) => albumRow(album.id, album)),
  )
  await insertRows(
    tx,
    'rl_users',
    document.users.map((user) => userRow(user.id, user, emailKey(user.email))),
  )
  await insertRows(
    tx,
    'rl_credentials',
    document.credentials.map((credential) => credentialRow(credential.id, credential)),
  )
  // The size on stripe 0; every version moves on, never back: a version names one state of the artists, never two.
  const stripes = Array.from({ length: STRIPES }, (_, stripe) => ({ name: 'artists', stripe, count: 0, version: 0 }))
  await tx`INSERT INTO rl_tallies ${tx(stripes)} ON CONFLICT (name, stripe) DO NOTHING`
  await tx`
    UPDATE rl_tallies SET count = CASE WHEN stripe = 0 THEN ${document.artists.length}::bigint ELSE 0 END,
      version = version + 1
    WHERE name = 'artists'`
}
