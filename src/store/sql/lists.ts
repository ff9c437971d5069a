import type { SQL } from 'bun'
import type { Album } from '../../model/album.ts'
import type { Artist } from '../../model/artist.ts'
import type { AlbumQuery, AlbumSort, ArtistSort, ListQuery } from '../../model/search.ts'
import type { Page, Slice } from '../store.ts'
import { albumNeedle, albumOf, artistNeedle, artistOf } from './rows.ts'

// Orders as the document store's lists have them (artist-lists.ts, album-lists.ts): ties by id; `-name` is the name
// order reversed, ties included; an album without a year comes last in both directions. Constants only: these are
// the only text put into a query unescaped.
const ARTIST_ORDERS: Record<ArtistSort, string> = {
  id: 'id',
  '-id': 'id DESC',
  name: 'name_key, id',
  '-name': 'name_key DESC, id DESC',
}
const ALBUM_ORDERS: Record<AlbumSort, string> = {
  id: 'id',
  '-id': 'id DESC',
  year: '(year IS NULL), year, id',
  '-year': '(year IS NULL), year DESC, id',
  name: 'name_key, id',
  '-name': 'name_key DESC, id DESC',
}

/**
 * A page of the artists matching `query.q` (by folded name or band) in `query.sort` order, and their total: the
 * artists' tally (the sum of its stripes' counts, migration 5) without a search, the count of the matches with one;
 * and the version of the artists it was read at (the sum of the stripes' versions, see page-cache.ts; undefined
 * without a tally). One statement, one round trip, one snapshot: the sums are exact.
 */
export async function listArtists(
  sql: SQL,
  page: Page,
  query: ListQuery<ArtistSort>,
): Promise<{ slice: Slice<Artist>; version: string | undefined }> {
  const needle = artistNeedle(query.q)
  const order = sql.unsafe(ARTIST_ORDERS[query.sort ?? 'id'] ?? ARTIST_ORDERS.id)
  const rows =
    needle === ''
      ? await sql`
        SELECT t.total, t.version, a.id, a.name, a.description, a.image, a.band
        FROM (
          SELECT sum(count) AS total, sum(version) AS version FROM rl_tallies WHERE name = 'artists'
        ) AS t LEFT JOIN LATERAL (
          SELECT id, name, description, image, band FROM rl_artists
          ORDER BY ${order} LIMIT ${page.limit} OFFSET ${page.offset}
        ) AS a ON true`
      : await sql`
        SELECT t.total, v.version, a.id, a.name, a.description, a.image, a.band
        FROM (
          SELECT count(*) AS total FROM rl_artists
          WHERE strpos(folded_name, ${needle}) > 0 OR strpos(folded_band, ${needle}) > 0
        ) AS t, (SELECT sum(version) AS version FROM rl_tallies WHERE name = 'artists') AS v LEFT JOIN LATERAL (
          SELECT id, name, description, image, band FROM rl_artists
          WHERE strpos(folded_name, ${needle}) > 0 OR strpos(folded_band, ${needle}) > 0
          ORDER BY ${order} LIMIT ${page.limit} OFFSET ${page.offset}
        ) AS a ON true`
  return {
    slice: {
      items: rows.filter((row: { id: unknown }) => row.id !== null).map(artistOf),
      total: Number(rows[0]?.total ?? 0),
    },
    version: rows[0]?.version == null ? undefined : String(rows[0].version),
  }
}

/**
 * A page of an artist's albums matching `query` (by name, in a range of years, of a kind), and their total (the artist's
 * `album_count`, or the count of the matches); `undefined` for an unknown artist. An album without a year is outside
 * every range (`NULL` compares to nothing).
 */
export async function listAlbums(
  sql: SQL,
  artistId: number,
  page: Page,
  query: AlbumQuery,
): Promise<Slice<Album> | undefined> {
  const needle = albumNeedle(query.q)
  const order = sql.unsafe(ALBUM_ORDERS[query.sort ?? 'id'] ?? ALBUM_ORDERS.id)
  const from = query.yearFrom ?? null
  const to = query.yearTo ?? null
  const kind = query.kind ?? null
  const rows =
    needle === '' && from === null && to === null && kind === null
      ? await sql`
        SELECT ar.album_count AS total, al.id, al.artist_id, al.name, al.year, al.image, al.kind
        FROM rl_artists AS ar LEFT JOIN LATERAL (
          SELECT id, artist_id, name, year, image, kind FROM rl_albums WHERE artist_id = ar.id
          ORDER BY ${order} LIMIT ${page.limit} OFFSET ${page.offset}
        ) AS al ON true
        WHERE ar.id = ${artistId}`
      : await sql`
        SELECT
          (SELECT count(*) FROM rl_albums WHERE artist_id = ar.id AND strpos(folded_name, ${needle}) > 0
            AND (${from}::int IS NULL OR year >= ${from}::int) AND (${to}::int IS NULL OR year <= ${to}::int)
            AND (${kind}::text IS NULL OR kind = ${kind}::text)
          ) AS total,
          al.id, al.artist_id, al.name, al.year, al.image, al.kind
        FROM rl_artists AS ar LEFT JOIN LATERAL (
          SELECT id, artist_id, name, year, image, kind FROM rl_albums
          WHERE artist_id = ar.id AND strpos(folded_name, ${needle}) > 0
            AND (${from}::int IS NULL OR year >= ${from}::int) AND (${to}::int IS NULL OR year <= ${to}::int)
            AND (${kind}::text IS NULL OR kind = ${kind}::text)
          ORDER BY ${order} LIMIT ${page.limit} OFFSET ${page.offset}
        ) AS al ON true
        WHERE ar.id = ${artistId}`
  if (rows.length === 0) return undefined
  return {
    items: rows.filter((row: { id: unknown }) => row.id !== null).map(albumOf),
    total: Number(rows[0]?.total ?? 0),
  }
}
