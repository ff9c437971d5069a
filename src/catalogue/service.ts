import { type Caller, callerName } from '../auth/guard.ts'
import type { Album } from '../model/album.ts'
import { type AlbumInput, type AlbumPatch, albumFields, patchedAlbum } from '../model/album.ts'
import type { Artist } from '../model/artist.ts'
import { type ArtistInput, type ArtistPatch, artistFields, patchedArtist } from '../model/artist.ts'
import {
  ChangedSinceReadError,
  ConflictError,
  InvalidFieldError,
  NotFoundError,
  TooManyAttemptsError,
} from '../model/errors.ts'
import type { ArtistChange } from '../model/history.ts'
import type { QuotaReport } from '../model/quota.ts'
import type { AlbumQuery, ArtistSort, ListQuery } from '../model/search.ts'
import { albumTag, artistTag, holds, type Precondition, recordTag, StaleVersionError } from '../store/entity-tag.ts'
import type { KeepAnswer } from '../store/idempotency.ts'
import { AlbumLimitError, type Limiter, type Page, type RateLimit, type Slice, type Store } from '../store/store.ts'
import { withCommas } from '../text/numbers.ts'

/** How many records one account may add to the catalogue; an operator's service key is not counted. */
export interface CatalogueLimits {
  /** Artists created per account (all its tokens and personal keys together). */
  artistsPerAccount: RateLimit
  /** Albums added per account, to any artists. */
  albumsPerAccount: RateLimit
}

const HOUR = 60 * 60_000

/**
 * The limits the server runs with: generous enough for a test suite that writes for every test with one account,
 * yet a bound on how fast one account can grow the data (each artist also holds at most `MAX_ALBUMS_PER_ARTIST`
 * albums, whoever adds them).
 */
export const CATALOGUE_LIMITS: CatalogueLimits = {
  artistsPerAccount: { limit: 1000, windowMs: HOUR },
  albumsPerAccount: { limit: 1000, windowMs: HOUR },
}

/** What a create may carry beside its fields. */
export interface CreateOptions<R> {
  /** `If-Match`/`If-None-Match` of the request, checked in the write (an album's, against its artist). */
  condition?: Precondition
  /** The answer of the request's `Idempotency-Key`, kept by the store in the same write as the record. */
  keep?: KeepAnswer<R>
  /** Told what remains of the account's quota once this create is counted (the `RateLimit` headers). */
  report?: QuotaReport
}

/** What the catalogue is built with. */
export interface CatalogueOptions {
  /** The clock of the rate windows. */
  now?: () => Date
  limits?: CatalogueLimits
}

/** The rate limit of one kind of creation, as `rule` allows it and a refusal says it. */
interface Quota {
  limiter: Limiter
  rule: RateLimit
  what: string
  /** The limiter's name, which the `RateLimit` headers name the policy by. */
  name: string
}

// Ids past 2^53 are valid int64 but lose digits as numbers: name them only when exact.
const which = (kind: string, id: number) => (Number.isSafeInteger(id) ? `${kind} ${id}` : `${kind} with that id`)

const unknownArtist = (id: number) => new NotFoundError(`There is no ${which('artist', id)}.`)

const unknownAlbum = (artistId: number, albumId: number) =>
  new NotFoundError(`There is no ${which('album', albumId)} of ${which('artist', artistId)}.`)

/** Refuses an `id` in a body that is neither absent (or null) nor the id of the record in the path. */
function sameId(bodyId: number | null | undefined, pathId: number, what: 'artist' | 'album'): void {
  if (bodyId !== undefined && bodyId !== null && bodyId !== pathId)
    throw new InvalidFieldError('/id', `must be absent or equal to the ${what} id in the path (${pathId})`)
}

/** How many times a patch is applied again to a record that another write changed between its read and its write. */
const PATCH_ATTEMPTS = 5

/**
 * A merge patch of a record: read it (`read` refuses an unknown one), check `condition` against it, and write the
 * record the patch makes of it only while it is still the version read (`write`, given its tag, checks that in the
 * store's step). A write that lands in between is not overwritten: the patch is applied again to what it wrote, up to
 * {@link PATCH_ATTEMPTS} times, then refused as a conflict.
 */
async function patchRecord<T extends Artist | Album>(
  read: () => Promise<T>,
  tagOf: (record: T) => string,
  write: (current: T, tag: string) => Promise<T | undefined>,
  condition: Precondition | undefined,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const current = await read()
    const tag = tagOf(current)
    if (!holds(condition, tag)) throw conditionFailed(current, condition)
    try {
      const written = await write(current, tag)
      if (written) return written
      // Gone between the read and the write (a removed album): the next read refuses it.
    } catch (error) {
      if (!(error instanceof StaleVersionError)) throw error
    }
    if (attempt >= PATCH_ATTEMPTS)
      throw new ConflictError(
        `${which('artistId' in current ? 'Album' : 'Artist', current.id)} changed ${PATCH_ATTEMPTS} times while the patch was being applied, and nothing was changed. Send it again.`,
      )
  }
}

/**
 * The catalogue's rules over a store. It speaks in records and domain refusals ({@link NotFoundError} for an unknown
 * artist or album, {@link InvalidFieldError} for a body that contradicts its path); the routes turn neither into HTTP.
 */
export class Catalogue {
  private readonly artistQuota: Quota
  private readonly albumQuota: Quota

  /** A catalogue over `store`, with {@link CATALOGUE_LIMITS} unless `options` say otherwise. */
  constructor(
    private readonly store: Store,
    { now = () => new Date(), limits = CATALOGUE_LIMITS }: CatalogueOptions = {},
  ) {
    const clock = () => now().getTime()
    // The names are stable: over SQL they key the counts that every replica shares.
    this.artistQuota = {
      limiter: store.limiter('artists-per-account', limits.artistsPerAccount, clock),
      rule: limits.artistsPerAccount,
      what: 'artists',
      name: 'artists-per-account',
    }
    this.albumQuota = {
      limiter: store.limiter('albums-per-account', limits.albumsPerAccount, clock),
      rule: limits.albumsPerAccount,
      what: 'albums',
      name: 'albums-per-account',
    }
  }

  /** One page of the artists matching `query.q` by name or band, in `query.sort` order (id by default). */
  listArtists(page: Page, query: ListQuery<ArtistSort> = {}): Promise<Slice<Artist>> {
    return this.store.artists.list(page, query)
  }

  /** The artist with `id`. */
  getArtist(id: number): Promise<Artist> {
    // A `then`, not an async function: the busiest route pays for one promise less.
    return this.store.artists.get(id).then((artist) => {
      if (!artist) throw unknownArtist(id)
      return artist
    })
  }

  /**
   * Adds an artist for `caller`; the id is assigned here, whatever the client sent. A user's account is refused
   * with {@link TooManyAttemptsError} past its rate of new artists. See {@link CreateOptions} for the rest: an artist's condition is the
   * collection's, which the route checks (src/catalogue/artists.ts).
   */
  createArtist(
    input: ArtistInput,
    caller: Caller,
    { keep, report }: Omit<CreateOptions<Artist>, 'condition'> = {},
  ): Promise<Artist> {
    return withinQuota(
      this.artistQuota,
      caller,
      () => this.store.artists.insert(artistFields(input), callerName(caller), keep),
      report,
    )
  }

  /**
   * Replaces every field of artist `id`: fields left out become unset. An `id` in the body must be absent or equal
   * to `id`. No upsert: an unknown artist is not found. With `condition` (`If-Match`, `If-None-Match`), only while it
   * holds for the artist as stored: otherwise {@link ChangedSinceReadError}, and nothing changes.
   */
  async replaceArtist(id: number, input: ArtistInput, caller: Caller, condition?: Precondition): Promise<Artist> {
    sameId(input.id, id, 'artist')
    let artist: Artist | undefined
    try {
      artist = await this.store.artists.replace({ id, ...artistFields(input) }, condition, callerName(caller))
    } catch (error) {
      if (error instanceof StaleVersionError) throw conditionFailed(error.current, condition)
      throw error
    }
    if (!artist) throw unknownArtist(id)
    return artist
  }

  /**
   * Changes the fields of artist `id` that `patch` names (a JSON merge patch, RFC 7396: null removes a field). The
   * patch applies to the artist as read, and is written only while it is still that version; `condition` is checked
   * against it too. See {@link patchRecord}.
   */
  patchArtist(id: number, patch: ArtistPatch, caller: Caller, condition?: Precondition): Promise<Artist> {
    sameId(patch.id, id, 'artist')
    return patchRecord(
      () => this.getArtist(id),
      artistTag,
      (current, tag) =>
        this.store.artists.replace({ id, ...patchedArtist(current, patch) }, { ifMatch: [tag] }, callerName(caller)),
      condition,
    )
  }

  /**
   * A page of the changes of artist `id` and of its albums, newest first (the last `HISTORY_PER_ARTIST` of them:
   * src/model/history.ts).
   */
  async artistHistory(id: number, page: Page): Promise<Slice<ArtistChange>> {
    const slice = await this.store.artists.history(id, page)
    if (!slice) throw unknownArtist(id)
    return slice
  }

  /**
   * One page of the albums of artist `artistId` matching `query.q` by name and in its range of years, in
   * `query.sort` order (id by default).
   */
  async listAlbums(artistId: number, page: Page, query: AlbumQuery = {}): Promise<Slice<Album>> {
    const slice = await this.store.albums.listByArtist(artistId, page, query)
    if (!slice) throw unknownArtist(artistId)
    return slice
  }

  /** Album `albumId` of artist `artistId`. */
  async getAlbum(artistId: number, albumId: number): Promise<Album> {
    const album = await this.store.albums.get(albumId)
    if (album?.artistId !== artistId) throw unknownAlbum(artistId, albumId)
    return album
  }

  /**
   * Replaces every field of album `albumId` of artist `artistId`: fields left out become unset. An `id` in the body
   * must be absent or equal to `albumId`. With `condition`, only while it holds for the album as stored.
   */
  async replaceAlbum(
    artistId: number,
    albumId: number,
    input: AlbumInput,
    caller: Caller,
    condition?: Precondition,
  ): Promise<Album> {
    sameId(input.id, albumId, 'album')
    let album: Album | undefined
    try {
      album = await this.store.albums.replace(
        { id: albumId, artistId, ...albumFields(input) },
        condition,
        callerName(caller),
      )
    } catch (error) {
      if (error instanceof StaleVersionError) throw conditionFailed(error.current, condition)
      throw error
    }
    if (!album) throw unknownAlbum(artistId, albumId)
    return album
  }

  /** Changes the fields of an album that `patch` names, as {@link patchArtist} does for an artist. */
  patchAlbum(
    artistId: number,
    albumId: number,
    patch: AlbumPatch,
    caller: Caller,
    condition?: Precondition,
  ): Promise<Album> {
    sameId(patch.id, albumId, 'album')
    return patchRecord(
      () => this.getAlbum(artistId, albumId),
      albumTag,
      (current, tag) =>
        this.store.albums.replace(
          { id: albumId, artistId, ...patchedAlbum(current, patch) },
          { ifMatch: [tag] },
          callerName(caller),
        ),
      condition,
    )
  }

  /**
   * Removes album `albumId` of artist `artistId`, with `condition` as for a replacement. The artist may take an album
   * again in its place (`MAX_ALBUMS_PER_ARTIST` counts what it holds); the account that added it gets nothing back
   * (its quota counts additions, not what it holds).
   */
  async deleteAlbum(artistId: number, albumId: number, caller: Caller, condition?: Precondition): Promise<Album> {
    let album: Album | undefined
    try {
      album = await this.store.albums.remove(artistId, albumId, condition, callerName(caller))
    } catch (error) {
      if (error instanceof StaleVersionError) throw conditionFailed(error.current, condition)
      throw error
    }
    if (!album) throw unknownAlbum(artistId, albumId)
    return album
  }

  /** The artist with `id`, or `undefined` when there is none: for a caller that says "not found" in its own words. */
  findArtist(id: number): Promise<Artist | undefined> {
    return this.store.artists.get(id)
  }

  /** Album `id`, whichever artist's it is, with that artist; `undefined` when there is none. */
  async findAlbum(id: number): Promise<{ album: Album; artist: Artist } | undefined> {
    const album = await this.store.albums.get(id)
    const artist = album && (await this.store.artists.get(album.artistId))
    return album && artist ? { album, artist } : undefined
  }

  /**
   * Adds an album to artist `artistId` for `caller`. Refused with {@link ConflictError} when the artist already has
   * the most albums an artist may have (whoever asks), and with {@link TooManyAttemptsError} past a user's rate. With
   * `condition`, only while it holds for the artist as stored (the album list is part of it): otherwise
   * {@link ChangedSinceReadError}. See {@link CreateOptions} for the rest.
   */
  createAlbum(
    artistId: number,
    input: AlbumInput,
    caller: Caller,
    { condition, keep, report }: CreateOptions<Album> = {},
  ): Promise<Album> {
    return withinQuota(
      this.albumQuota,
      caller,
      async () => {
        try {
          const album = await this.store.albums.insert(
            { artistId, ...albumFields(input) },
            condition,
            callerName(caller),
            keep,
          )
          if (!album) throw unknownArtist(artistId)
          return album
        } catch (error) {
          if (error instanceof AlbumLimitError) throw tooManyAlbums(artistId, error.max)
          if (error instanceof StaleVersionError) throw conditionFailed(error.current, condition)
          throw error
        }
      },
      report,
    )
  }
}

/** Where `record` is read. */
const pathOf = (record: Artist | Album) =>
  'artistId' in record ? `/api/v1/artists/${record.artistId}/albums/${record.id}` : `/api/v1/artists/${record.id}`

/**
 * The refusal of a write whose `condition` does not hold for `current` (the record as stored now): which header
 * failed, and the current tag, which the problem's `ETag` carries too.
 */
function conditionFailed(current: Artist | Album, condition: Precondition | undefined): ChangedSinceReadError {
  const tag = recordTag(current)
  const what = which('artistId' in current ? 'Album' : 'Artist', current.id)
  const detail = !holds({ ifMatch: condition?.ifMatch }, tag)
    ? `${what} changed since you read it: its version is now ${tag}, not one in If-Match, and nothing was changed. Read it again (GET ${pathOf(current)}) and send your change with its new ETag.`
    : `${what} exists, and its version ${tag} is one If-None-Match excludes (\`*\` excludes any): nothing was changed.`
  return new ChangedSinceReadError(detail, tag)
}

const tooManyAlbums = (artistId: number, max: number) =>
  new ConflictError(
    `${which('Artist', artistId)} already has ${max} albums, the most an artist may have: no album can be added to it.`,
  )

/**
 * Runs `create` for `caller` within `quota`: a user's account is counted (checked and counted in one step, before
 * the write, so parallel requests on any replica cannot pass it together) and refused past it; a write that fails
 * is taken back, so only records created count. An operator's service key belongs to no account and is not counted.
 */
async function withinQuota<T>(
  { limiter, rule, what, name }: Quota,
  caller: Caller,
  create: () => Promise<T>,
  report?: QuotaReport,
): Promise<T> {
  if (caller.kind !== 'user') return create()
  const hit = await limiter.hit(String(caller.userId))
  const { attempt, retryAfter } = hit
  if (!attempt)
    throw new TooManyAttemptsError(
      `Your account has added ${rule.limit} ${what} in the last ${spanOf(rule.windowMs)}, the most it may add in that time. Try again in ${retryAfter} second${retryAfter === 1 ? '' : 's'}.`,
      retryAfter,
      { name, ...rule },
    )
  try {
    const created = await create()
    // What remains comes with the hit itself: telling the client costs no second round-trip to the store. Told only
    // once the create is made: a refused one is taken back below, and counts nothing.
    report?.({ policy: name, ...rule, remaining: hit.remaining })
    // Only marks it finished (it keeps counting), so the answer does not wait for it.
    limiter.settle(attempt).catch(() => {})
    return created
  } catch (error) {
    // The write's own failure is the answer, even when the limiter cannot take the attempt back.
    await limiter.forgive(attempt).catch(() => {})
    throw error
  }
}

/** A rate of `what` as the documentation says it: `1,000 albums an hour`. */
export const rate = ({ limit, windowMs }: RateLimit, what: string) =>
  `${withCommas(limit)} ${what} ${windowMs === HOUR ? 'an hour' : `in ${spanOf(windowMs)}`}`

/** A window as a refusal says it: `hour`, `10 minutes`, `90 seconds`. */
const spanOf = (ms: number) =>
  ms === HOUR ? 'hour' : ms % 60_000 === 0 ? `${ms / 60_000} minutes` : `${Math.ceil(ms / 1000)} seconds`
