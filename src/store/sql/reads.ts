import type { SQL } from 'bun'
import type { Album } from '../../model/album.ts'
import type { Artist } from '../../model/artist.ts'
import type { Credential } from '../../model/credential.ts'
import type { User } from '../../model/user.ts'
import { ALBUM_COLUMNS, ARTIST_COLUMNS, albumOf, artistOf, credentialOf, userOf } from './rows.ts'

/** How many keys one statement asks for at most. */
const MAX_KEYS = 1000

interface Waiting<T> {
  resolve: (value: T | undefined) => void
  reject: (error: unknown) => void
}

/**
 * Reads by key that arrive in the same turn of the event loop go to the database together: one statement and one
 * round trip for all of them, instead of one each. Under load a replica receives many requests per turn, and a
 * statement's fixed costs (the protocol messages, a pooled connection, a wake-up on each side) are most of what a
 * read by primary key costs. A read joins only a statement not yet sent, so it never sees the database as it was
 * before the read arrived.
 *
 * @example
 * const artists = new ReadBatcher((ids) => fetchArtists(sql, ids))
 * const [a, b] = await Promise.all([artists.get(1), artists.get(2)]) // one SELECT … WHERE id = ANY(…)
 */
export class ReadBatcher<K, T> {
  private pending = new Map<K, Waiting<T>[]>()
  private scheduled = false

  /** `fetch` reads the records of the keys it is given, each under its key; a key without one is left out. */
  constructor(private readonly fetch: (keys: K[]) => Promise<Map<K, T>>) {}

  /** The record of `key`, read with the others asked for in this turn; `undefined` when there is none. */
  get(key: K): Promise<T | undefined> {
    const { promise, resolve, reject } = Promise.withResolvers<T | undefined>()
    const waiting = this.pending.get(key)
    if (waiting) waiting.push({ resolve, reject })
    else this.pending.set(key, [{ resolve, reject }])
    if (!this.scheduled) {
      this.scheduled = true
      // After the event loop's I/O phase: every request read from the sockets in this turn has asked by then.
      setImmediate(() => this.send())
    }
    return promise
  }

  private send(): void {
    this.scheduled = false
    const batch = this.pending
    this.pending = new Map()
    const keys = [...batch.keys()]
    for (let start = 0; start < keys.length; start += MAX_KEYS) {
      const part = keys.slice(start, start + MAX_KEYS)
      this.fetch(part).then(
        (found) => {
          for (const key of part) for (const waiting of batch.get(key) ?? []) waiting.resolve(found.get(key))
        },
        (error: unknown) => {
          for (const key of part) for (const waiting of batch.get(key) ?? []) waiting.reject(error)
        },
      )
    }
  }
}

/**
 * The rows of `table` whose id is one of `ids`, read as `columns` and made records by `of`, by id. `table` and
 * `columns` are this module's constants, never a client's text.
 */
async function byId<T extends { id: number }>(
  sql: SQL,
  table: string,
  columns: string,
  ids: number[],
  of: (row: Record<string, unknown>) => T,
): Promise<Map<number, T>> {
  const rows = await sql.unsafe(`SELECT ${columns} FROM ${table} WHERE id = ANY($1::bigint[])`, [
    sql.array(ids, 'INT8'),
  ])
  const found = new Map<number, T>()
  for (const row of rows) {
    const record = of(row)
    found.set(record.id, record)
  }
  return found
}

/** The artists with `ids`, by id. */
export const fetchArtists = (sql: SQL, ids: number[]): Promise<Map<number, Artist>> =>
  byId(sql, 'rl_artists', ARTIST_COLUMNS, ids, artistOf)

/** The albums with `ids`, by id. */
export const fetchAlbums = (sql: SQL, ids: number[]): Promise<Map<number, Album>> =>
  byId(sql, 'rl_albums', ALBUM_COLUMNS, ids, albumOf)

/** The users with `ids`, by id. */
export const fetchUsers = (sql: SQL, ids: number[]): Promise<Map<number, User>> =>
  byId(sql, 'rl_users', '*', ids, userOf)

/** The versions of the tallies `names` (the sum of their stripes' versions, migration 5), as text, by name. */
export async function fetchVersions(sql: SQL, names: string[]): Promise<Map<string, string>> {
  const rows = await sql`
    SELECT name, sum(version) AS version FROM rl_tallies WHERE name = ANY(${sql.array(names, 'TEXT')}::text[])
    GROUP BY name`
  return new Map(rows.map((row: { name: string; version: unknown }) => [row.name, String(row.version)]))
}

/** The credentials whose secrets hash to `hashes`, by hash. */
export async function fetchCredentials(sql: SQL, hashes: string[]): Promise<Map<string, Credential>> {
  const rows = await sql`SELECT * FROM rl_credentials WHERE hash = ANY(${sql.array(hashes, 'TEXT')}::text[])`
  return new Map(rows.map((row: Record<string, unknown>) => [row.hash as string, credentialOf(row)]))
}
