/**
 * The artists' histories over SQL (`rl_history`, migration 10): written in the transaction of each change of the
 * catalogue, pruned by it to the artist's newest {@link HISTORY_PER_ARTIST}, read a page at a time through the index
 * on (artist_id, id). Every replica writes and reads the one table: a history holds every replica's changes.
 */
import type { SQL } from 'bun'
import type { Album } from '../../model/album.ts'
import type { Artist } from '../../model/artist.ts'
import { type ArtistChange, type ChangeKind, HISTORY_PER_ARTIST, keptHistory } from '../../model/history.ts'
import type { Page, Slice } from '../store.ts'
import { albumOf, artistOf } from './rows.ts'

/** A change to add to a history: its kind, who made it, and the record as it became (or was, when removed). */
export type HistoryRow =
  | { kind: 'artist-created' | 'artist-updated'; by: string; artist: Artist }
  | { kind: 'album-created' | 'album-updated' | 'album-deleted'; by: string; album: Album }

/** The record's JSON without its id (an album's artist as `artist_id`), as rl_events keeps it too. */
export function recordFields(row: HistoryRow): { artistId: number; recordId: number; fields: string } {
  if ('artist' in row) {
    const { id, ...fields } = row.artist
    return { artistId: id, recordId: id, fields: JSON.stringify(fields) }
  }
  const { id, artistId, ...fields } = row.album
  return { artistId, recordId: id, fields: JSON.stringify({ artist_id: artistId, ...fields }) }
}

/**
 * Adds `rows` to their artists' histories in `tx`, then prunes each artist they add to beyond its newest
 * {@link HISTORY_PER_ARTIST} (a created artist has one change: nothing to prune). Two statements, whatever the number.
 */
export async function recordHistory(tx: SQL, rows: readonly HistoryRow[]): Promise<void> {
  if (rows.length === 0) return
  const records = rows.map(recordFields)
  await tx`
    INSERT INTO rl_history (id, artist_id, at_ms, author, kind, record_id, fields)
    SELECT nextval('rl_history_ids'), d.artist_id, (extract(epoch FROM now()) * 1000)::bigint, d.author, d.kind,
      d.record_id, d.fields
    FROM unnest(
      ${tx.array(
        records.map((record) => record.artistId),
        'INT8',
      )}::bigint[],
      ${tx.array(
        rows.map((row) => row.by),
        'TEXT',
      )}::text[],
      ${tx.array(
        rows.map((row) => row.kind),
        'TEXT',
      )}::text[],
      ${tx.array(
        records.map((record) => record.recordId),
        'INT8',
      )}::bigint[],
      ${tx.array(
        records.map((record) => record.fields),
        'TEXT',
      )}::text[]
    ) WITH ORDINALITY AS d (artist_id, author, kind, record_id, fields, n)
    ORDER BY d.n`
  const grown = [
    ...new Set(rows.flatMap((row, i) => (row.kind === 'artist-created' ? [] : [records[i]?.artistId as number]))),
  ]
  if (grown.length > 0) await pruneHistory(tx, grown)
}

/** Deletes the changes of `artistIds` older than each one's newest {@link HISTORY_PER_ARTIST}, through the index. */
async function pruneHistory(tx: SQL, artistIds: readonly number[]): Promise<void> {
  await tx`
    DELETE FROM rl_history AS h
    USING (
      SELECT a.id AS artist_id, (
        SELECT k.id FROM rl_history AS k WHERE k.artist_id = a.id ORDER BY k.id DESC
        OFFSET ${HISTORY_PER_ARTIST - 1} LIMIT 1
      ) AS oldest
      FROM unnest(${tx.array([...artistIds], 'INT8')}::bigint[]) AS a (id)
    ) AS kept
    WHERE h.artist_id = kept.artist_id AND h.id < kept.oldest`
}

/** A change from its row. */
export function changeOf(row: Record<string, unknown>): ArtistChange {
  const kind = row.kind as ChangeKind
  const record = { id: row.record_id, ...(JSON.parse(String(row.fields)) as Record<string, unknown>) }
  const change = {
    id: Number(row.id),
    at: new Date(Number(row.at_ms)).toISOString(),
    by: String(row.author),
    kind,
    ...(kind.startsWith('album-') ? { album: albumOf(record) } : { artist: artistOf(record) }),
  }
  return Object.freeze(change) as ArtistChange
}

/**
 * A page of the history of artist `artistId`, newest first; `undefined` when there is no such artist. One statement:
 * the artist, the count and the page, each through an index.
 */
export async function listHistory(sql: SQL, artistId: number, page: Page): Promise<Slice<ArtistChange> | undefined> {
  const rows = await sql`
    SELECT t.total, h.id, h.at_ms, h.author, h.kind, h.record_id, h.fields
    FROM (
      SELECT (SELECT count(*) FROM rl_history WHERE artist_id = ${artistId}) AS total
      FROM rl_artists WHERE id = ${artistId}
    ) AS t
    LEFT JOIN LATERAL (
      SELECT * FROM rl_history WHERE artist_id = ${artistId} ORDER BY id DESC LIMIT ${page.limit} OFFSET ${page.offset}
    ) AS h ON true`
  if (rows.length === 0) return undefined
  const items = rows.filter((row: { id: unknown }) => row.id !== null).map(changeOf)
  return { items, total: Number(rows[0].total) }
}

/** Every history row, in id order: what a snapshot (a backup, a copy, the reset point) carries. */
export async function dumpHistory(tx: SQL): Promise<ArtistChange[]> {
  return (await tx`SELECT * FROM rl_history ORDER BY id`).map(changeOf)
}

/**
 * Replaces every history row with `history`'s, each artist's newest {@link HISTORY_PER_ARTIST} (a backup of a data file
 * read offline may hold more), in `tx`, and moves the ids' sequence past them.
 */
export async function replaceHistory(tx: SQL, written: readonly ArtistChange[]): Promise<void> {
  const history = keptHistory(written)
  await tx`DELETE FROM rl_history`
  const CHUNK = 1000
  for (let at = 0; at < history.length; at += CHUNK) {
    const chunk = history.slice(at, at + CHUNK)
    const rows = chunk.map((change) => {
      const { artistId, recordId, fields } = recordFields(
        change.album
          ? { kind: change.kind as 'album-created', by: change.by, album: change.album }
          : { kind: change.kind as 'artist-created', by: change.by, artist: change.artist as Artist },
      )
      return {
        id: change.id,
        artist_id: artistId,
        at_ms: Date.parse(change.at),
        author: change.by,
        kind: change.kind,
        record_id: recordId,
        fields,
      }
    })
    await tx`INSERT INTO rl_history ${tx(rows)}`
  }
  const last = written.reduce((max, change) => Math.max(max, change.id), 0)
  // Never back: ids of changes are not reused, even after a restore of an older backup.
  if (last > 0)
    await tx`SELECT setval('rl_history_ids', GREATEST(${last}::bigint, (SELECT last_value FROM rl_history_ids)))`
}
