import type { SQL } from 'bun'
import type { CatalogueEntry } from '../../model/catalogue.ts'
import { imageOf } from '../rules.ts'
import type { LoadOptions } from '../store.ts'
import { albumRow, artistRow } from './rows.ts'
import { insertRows } from './snapshot.ts'
import { takeIds, tallyArtists } from './writes.ts'

/**
 * Whether the store holds no artist, album or user, as `sql` sees it: the one definition of "empty" over SQL, for
 * `isEmpty` and for a load `ifNeverWritten` (the document store's are `Records.isEmpty` and `neverWritten`).
 */
export async function isEmpty(tx: SQL): Promise<boolean> {
  const [row] = await tx`
    SELECT EXISTS (SELECT 1 FROM rl_artists) OR EXISTS (SELECT 1 FROM rl_albums) OR EXISTS (SELECT 1 FROM rl_users)
      AS filled`
  return !row?.filled
}

/**
 * Adds a catalogue in `tx`, with ids from the sequences and the images `options.cover` makes from them. With
 * `ifNeverWritten`, every stripe of the artists' tally is locked first (in order), so that of many replicas seeding
 * one new database at once, one loads and the others, once it committed, find it written; creates of artists wait
 * meanwhile.
 */
export async function loadCatalogue(
  tx: SQL,
  catalogue: readonly CatalogueEntry[],
  { cover, ifNeverWritten = false }: LoadOptions,
): Promise<{ artists: number; albums: number } | undefined> {
  if (ifNeverWritten) {
    await tx`SELECT stripe FROM rl_tallies WHERE name = 'artists' ORDER BY stripe FOR UPDATE`
    // A statement after the lock: under READ COMMITTED, it sees what a seeder before us committed. No write removes
    // a row of a database (an artist's delete deletes nothing), so one that holds none was never written; its
    // sequences say nothing, since a seed whose transaction failed has drawn from them all the same.
    if (!(await isEmpty(tx))) return undefined
  }
  const albumTotal = catalogue.reduce((sum, entry) => sum + entry.albums.length, 0)
  if (catalogue.length === 0) return { artists: 0, albums: 0 }
  // The list's size, and its version (page-cache.ts): cached pages of the list are stale from now on.
  await tallyArtists(tx, catalogue.length)
  const artistIds = await takeIds(tx, 'rl_artist_ids', catalogue.length)
  const albumIds = await takeIds(tx, 'rl_album_ids', albumTotal)
  let artistAt = 0
  let albumAt = 0
  const artists = []
  const albums = []
  for (const { albums: entries, ...entry } of catalogue) {
    const id = artistIds[artistAt++] as number
    artists.push(artistRow(id, { ...entry, image: imageOf(entry.image, cover, 'artist', id) }, entries.length))
    for (const fields of entries) {
      const album = albumIds[albumAt++] as number
      albums.push(albumRow(album, { ...fields, artistId: id, image: imageOf(fields.image, cover, 'album', album) }))
    }
  }
  await insertRows(tx, 'rl_artists', artists)
  await insertRows(tx, 'rl_albums', albums)
  return { artists: catalogue.length, albums: albumTotal }
}
