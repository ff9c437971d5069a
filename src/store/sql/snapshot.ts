import type { SQL } from 'bun'
import type { Album } from '../../model/album.ts'
import type { Artist } from '../../model/artist.ts'
import type { Credential, User } from '../store.ts'
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

/** Everything the store holds, in the shape of the JSON store's document (so a reset point reads the same). */
export interface SnapshotDocument {
  version: 1
  counters: { artists: number; albums: number; users: number; credentials: number }
  artists: Artist[]
  albums: Album[]
  users: User[]
  credentials: Credential[]
}

/** The name of the one reset point every replica shares. */
export const RESET_POINT = 'reset'

/** Rows per INSERT: far below PostgreSQL's 65,535 parameters for the widest table. */
const CHUNK = 1000

/** Inserts `rows` into `table` in a few multi-row statements. */
export async function insertRows(tx: SQL, table: string, rows: readonly Record<string, unknown>[]): Promise<void> {
  for (let at = 0; at < rows.length; at += CHUNK) await tx`INSERT INTO ${tx(table)} ${tx(rows.slice(at, at + CHUNK))}`
}

/** Everything stored now, read in `tx`, whose isolation must be at least REPEATABLE READ for one consistent view. */
export async function dump(tx: SQL): Promise<SnapshotDocument> {
  const counters = Object.fromEntries(
    (await tx`SELECT name, value FROM rl_counters`).map((row: { name: string; value: string }) => [
      row.name,
      Number(row.value),
    ]),
  )
  return {
    version: 1,
    counters: {
      artists: counters.artists ?? 0,
      albums: counters.albums ?? 0,
      users: counters.users ?? 0,
      credentials: counters.credentials ?? 0,
    },
    artists: (await tx.unsafe(`SELECT ${ARTIST_COLUMNS} FROM rl_artists ORDER BY id`)).map(artistOf),
    albums: (await tx.unsafe(`SELECT ${ALBUM_COLUMNS} FROM rl_albums ORDER BY id`)).map(albumOf),
    users: (await tx`SELECT * FROM rl_users ORDER BY id`).map(userOf),
    credentials: (await tx`SELECT * FROM rl_credentials ORDER BY id`).map(credentialOf),
  }
}

/** Puts the counters to `values`, creating missing rows. */
export async function setCounters(tx: SQL, values: Record<string, number>): Promise<void> {
  const rows = Object.entries(values).map(([name, value]) => ({ name, value }))
  await tx`INSERT INTO rl_counters ${tx(rows)} ON CONFLICT (name) DO UPDATE SET value = excluded.value`
}

/**
 * Replaces every record and counter with `document`'s, in `tx`: the search and order columns and the album counts
 * are computed again, by this build's rules.
 */
export async function replaceAll(tx: SQL, document: SnapshotDocument, emailKey: (email: string) => string) {
  // Children first, for the foreign keys. DELETE rather than TRUNCATE: TRUNCATE is a schema change in CockroachDB.
  for (const table of ['rl_credentials', 'rl_albums', 'rl_users', 'rl_artists']) await tx`DELETE FROM ${tx(table)}`
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
  await setCounters(tx, { ...document.counters, 'artists.count': document.artists.length })
  // Moves on, never back to the reset point's: a version names one state of the artists, never two.
  await tx`UPDATE rl_counters SET value = value + 1 WHERE name = 'artists.version'`
}
