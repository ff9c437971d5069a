/**
 * Records to rows and back. The columns a search and an order need (folded names, name keys) are computed here, by
 * the same functions the document store uses (src/model/search.ts), so both stores find and order alike.
 */
import { type Album, type AlbumKind, DEFAULT_KIND } from '../../model/album.ts'
import type { Artist } from '../../model/artist.ts'
import type { Credential, NewCredential } from '../../model/credential.ts'
import type { New } from '../../model/form.ts'
import { nameKey, searchable } from '../../model/search.ts'
import type { NewUser, User } from '../../model/user.ts'

/** What an artist search looks for (`searchable`, as in the document store); empty finds everything. */
export const artistNeedle = (q: string | undefined) => searchable(q ?? '')

/** What an album search looks for (`searchable`, as in the document store); empty finds everything. */
export const albumNeedle = (q: string | undefined) => searchable(q ?? '')

/**
 * A name's order key (`nameKey`) as BYTEA in UTF-16 big-endian. JavaScript compares strings by UTF-16 code unit, and
 * PostgreSQL and CockroachDB compare BYTEA byte by byte, shorter first on a common prefix: big-endian code units
 * compare exactly as the units do. UTF-8 (or TEXT with COLLATE "C") would not: it orders code points, so a character
 * outside the BMP (an emoji, stored as surrogates below U+E000 in JavaScript) would sort after U+FFFF, the unit
 * `nameKey` puts after every letter for ñ. And BYTEA keeps a lone surrogate, which UTF-8 cannot.
 */
export function keyBytes(name: string): Buffer {
  return Buffer.from(nameKey(name), 'utf16le').swap16()
}

/** The columns of an artist row, search and order columns included. */
export function artistRow(id: number, { name, description, image, band }: New<Artist>, albumCount = 0) {
  return {
    id,
    name,
    description: description ?? null,
    image: image ?? null,
    band: band ?? null,
    name_key: keyBytes(name),
    folded_name: searchable(name),
    folded_band: searchable(band ?? ''),
    album_count: albumCount,
  }
}

/** The columns of an album row. */
export function albumRow(id: number, { artistId, name, year, image, kind }: New<Album>) {
  return {
    id,
    artist_id: artistId,
    name,
    year: year ?? null,
    image: image ?? null,
    kind: kind ?? DEFAULT_KIND,
    name_key: keyBytes(name),
    folded_name: searchable(name),
  }
}

/** The columns an artist is read from. */
export const ARTIST_COLUMNS = 'id, name, description, image, band'
/** The columns an album is read from. */
export const ALBUM_COLUMNS = 'id, artist_id, name, year, image, kind'

// Records are handed out frozen, as the document store's are: nothing may edit one in place (a page cache holds them).
// BIGINT arrives as a string (Bun.SQL's default, which keeps ids beyond 2^53 intact in transit); ids fit a number.
const int = (value: unknown) => Number(value)
const optional = <T>(value: T | null): T | undefined => value ?? undefined

/** An artist from its row; unset fields are undefined, as the document store holds them (JSON leaves them out). */
export const artistOf = (row: Record<string, unknown>): Artist =>
  Object.freeze({
    id: int(row.id),
    name: row.name as string,
    description: optional(row.description as string | null),
    image: optional(row.image as string | null),
    band: optional(row.band as string | null),
  })

/** An album from its row. */
export const albumOf = (row: Record<string, unknown>): Album =>
  Object.freeze({
    id: int(row.id),
    artistId: int(row.artist_id),
    name: row.name as string,
    year: optional(row.year as number | null),
    image: optional(row.image as string | null),
    // A change recorded before kinds were kept holds none: its album was a studio album.
    kind: (row.kind as AlbumKind | null | undefined) ?? DEFAULT_KIND,
  })

/** The columns of a user row; `email_key` is `emailKey(email)`, unique. */
export const userRow = (id: number, user: NewUser & { credentialsEpoch?: number }, emailKey: string) => ({
  id,
  name: user.name,
  email: user.email,
  email_key: emailKey,
  password_hash: user.passwordHash,
  created_at: user.createdAt,
  // A reset point saved before accounts could be disabled has users without the field.
  disabled_at: user.disabledAt ?? null,
  // A new account, and one of a reset point saved before credentials epochs, starts at 0.
  credentials_epoch: user.credentialsEpoch ?? 0,
})

/** A user from its row. */
export const userOf = (row: Record<string, unknown>): User =>
  Object.freeze({
    id: int(row.id),
    name: row.name as string,
    email: row.email as string,
    passwordHash: row.password_hash as string,
    createdAt: row.created_at as string,
    disabledAt: (row.disabled_at as string | null | undefined) ?? null,
    credentialsEpoch: int(row.credentials_epoch ?? 0),
  })

/**
 * When an ISO timestamp falls, in ms since the epoch, for comparisons in SQL: the text itself does not compare
 * (`+275760-09-13T…` is later than `2025-…`). Null when there is none, or it is not a date (never expires then, as
 * `isDead` reads it).
 */
export function msOf(timestamp: string | null): number | null {
  if (timestamp === null) return null
  const ms = Date.parse(timestamp)
  return Number.isNaN(ms) ? null : ms
}

/** The columns of a credential row. */
export const credentialRow = (id: number, credential: NewCredential) => ({
  id,
  user_id: credential.userId,
  kind: credential.kind,
  name: credential.name,
  hash: credential.hash,
  prefix: credential.prefix,
  created_at: credential.createdAt,
  expires_at: credential.expiresAt,
  expires_ms: msOf(credential.expiresAt),
  last_used_at: credential.lastUsedAt,
  revoked_at: credential.revokedAt,
  // As `NewCredential` says, and for a reset point saved before credentials epochs: 0 when left out.
  epoch: credential.epoch ?? 0,
})

/** A credential from its row. */
export const credentialOf = (row: Record<string, unknown>): Credential =>
  Object.freeze({
    id: int(row.id),
    userId: int(row.user_id),
    kind: row.kind as Credential['kind'],
    name: row.name as string | null,
    hash: row.hash as string,
    prefix: row.prefix as string,
    createdAt: row.created_at as string,
    expiresAt: row.expires_at as string | null,
    lastUsedAt: row.last_used_at as string | null,
    revokedAt: row.revoked_at as string | null,
    epoch: int(row.epoch ?? 0),
  })
