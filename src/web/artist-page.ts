import type { Catalogue } from '../catalogue/service.ts'
import { type Album, type AlbumKind, FIRST_YEAR, kindOf } from '../model/album.ts'
import type { Artist } from '../model/artist.ts'
import { NotFoundError } from '../model/errors.ts'
import { artistTag } from '../store/entity-tag.ts'
import { artistFormFields } from './artist-form-fields.ts'
import { NEEDS_SCRIPT, writeSection } from './forms.ts'
import { type Html, html } from './html.ts'
import { LIVE_NEWS, notFoundPage, pageResponse } from './layout.ts'
import { PICTURE_SIZE, pictureOf } from './picture.ts'
import { pageNumber } from './query.ts'

/**
 * Albums on one page of `/artists/{id}`, by year: a long discography is shown a page at a time (`?page=2`), so the
 * work and size of a page are bounded whatever an artist holds.
 */
export const ALBUMS_PER_PAGE = 100

/** The page of an artist's albums asked for, and the albums on it (by year, those without one last). */
interface AlbumPage {
  page: number
  albums: readonly Album[]
  total: number
}

/** Page `page` of the artist's albums, by year (albums without one last), then in the order they were added. */
async function albumsByYear(catalogue: Catalogue, artistId: number, page: number): Promise<AlbumPage> {
  const { items, total } = await catalogue.listAlbums(
    artistId,
    { limit: ALBUMS_PER_PAGE, offset: (page - 1) * ALBUMS_PER_PAGE },
    { sort: 'year' },
  )
  return { page, albums: items, total }
}

/** The URL of a page of the artist's albums, at their heading; the first page is the plain artist URL. */
const albumPageUrl = (artistId: number, page: number) =>
  `/artists/${artistId}${page > 1 ? `?page=${page}` : ''}#albums-title`

/** Links to the previous and next pages of albums, as the catalogue's pager has them; nothing for one page. */
function albumPager(artistId: number, { page, total }: AlbumPage): Html {
  const pages = Math.max(1, Math.ceil(total / ALBUMS_PER_PAGE))
  if (pages === 1 && page === 1) return html``
  const link = (to: number, rel: string, label: string) =>
    html`<a rel="${rel}" href="${albumPageUrl(artistId, to)}">${label}</a>`
  return html`<nav class="pager" aria-label="Pages of albums">
${page > 1 ? link(Math.min(page - 1, pages), 'prev', '← Previous albums') : html`<span></span>`}
<span>Page ${page} of ${pages}</span>
${page < pages ? link(page + 1, 'next', 'Next albums →') : html`<span></span>`}
</nav>`
}

/** The albums of one page: the list, how many there are in all when they take more than one page, and the pager. */
function albumList(artistId: number, shown: AlbumPage): Html {
  const { page, albums, total } = shown
  if (total === 0) return html`<p class="note">No albums yet.</p>`
  if (albums.length === 0)
    return html`<p class="note">There is no page ${page} of albums. <a href="${albumPageUrl(artistId, 1)}">Go to the first page</a></p>
${albumPager(artistId, shown)}`
  const first = (page - 1) * ALBUMS_PER_PAGE + 1
  const summary =
    albums.length < total
      ? html`<p class="summary">${total} albums; showing ${first}–${first + albums.length - 1}.</p>`
      : ''
  return html`${summary}
<ol class="albums"${first > 1 ? html` start="${first}"` : ''}>${albums.map(albumItem)}</ol>
${albumPager(artistId, shown)}`
}

/** How a page names each kind of release but the studio album, which goes without saying. */
const KIND_LABELS: Record<Exclude<AlbumKind, 'studio'>, string> = {
  live: 'live album',
  ep: 'EP',
  compilation: 'compilation',
  soundtrack: 'soundtrack',
  're-recordings': 're-recordings',
}

function albumItem(album: Album): Html {
  const label = album.year === undefined ? album.name : `${album.name} (${album.year})`
  const kind = kindOf(album)
  return html`<li id="album-${album.id}">
<img src="${pictureOf('album', album)}" alt="Cover of ${label}" width="${PICTURE_SIZE}" height="${PICTURE_SIZE}" loading="lazy">
<h3>${album.name}</h3>
<p class="year">${album.year ?? 'Year unknown'}${kind === 'studio' ? '' : html` · <span class="kind">${KIND_LABELS[kind]}</span>`}</p>
</li>`
}

/** Paragraphs of a description, split where it leaves a blank line. */
const paragraphs = (text: string) =>
  text
    .split(/\n\s*\n/)
    .filter((paragraph) => paragraph.trim() !== '')
    .map((paragraph) => html`<p>${paragraph.trim()}</p>`)

function artistView(artist: Artist, albums: AlbumPage): Html {
  return html`<p class="back"><a href="/">← All artists</a></p>
${LIVE_NEWS}
<article class="artist" data-live="artist" data-live-artist="${artist.id}">
<img class="portrait" src="${pictureOf('artist', artist)}" alt="Picture of ${artist.name}" width="${PICTURE_SIZE}" height="${PICTURE_SIZE}">
<div class="about">
<h1>${artist.name}</h1>
${artist.band ? html`<p class="band">Band: <strong>${artist.band}</strong></p>` : ''}
${artist.description ? paragraphs(artist.description) : html`<p class="note">No description yet.</p>`}
<p class="json">As JSON: <a href="/api/v1/artists/${artist.id}">/api/v1/artists/${artist.id}</a></p>
</div>
</article>
<section aria-labelledby="albums-title">
<h2 id="albums-title">Albums</h2>
<div data-live="albums">
${albumList(artist.id, albums)}
</div>
</section>`
}

/** The artist id in a page path: a positive integer the catalogue can hold; anything else names no artist. */
function artistIdOf(text: string): number | undefined {
  const id = /^[1-9][0-9]{0,15}$/.test(text) ? Number(text) : Number.NaN
  return Number.isSafeInteger(id) ? id : undefined
}

/**
 * `/artists/{id}`: one artist with their description, picture and albums by year, {@link ALBUMS_PER_PAGE} at a time
 * (`?page=`), and for a signed-in user the forms to add an album and to edit the artist. An unknown or malformed id
 * is a 404 page.
 */
export async function artistPage(
  catalogue: Catalogue,
  idText: string,
  query: Record<string, unknown>,
  here: string,
  latestYear: number,
): Promise<Response> {
  const id = artistIdOf(idText)
  if (id === undefined) return notFoundPage(here, `There is no artist with the id “${idText}”.`)
  let artist: Artist
  let albums: AlbumPage
  try {
    artist = await catalogue.getArtist(id)
    albums = await albumsByYear(catalogue, id, pageNumber(query.page))
  } catch (error) {
    if (error instanceof NotFoundError) return notFoundPage(here, error.message)
    throw error
  }
  const main = html`${artistView(artist, albums)}
${NEEDS_SCRIPT}
${writeSection(
  'Add an album',
  {
    id: 'add-album',
    api: `POST /api/v1/artists/${artist.id}/albums`,
    after: 'reload',
    anchor: 'album',
    signedIn: true,
    submit: 'Add the album',
    fields: [
      { name: 'name', label: 'Title', required: true, autocomplete: 'off' },
      { name: 'year', label: 'Year', type: 'year', hint: `The year of first release, ${FIRST_YEAR}–${latestYear}.` },
      {
        name: 'image',
        label: 'Cover',
        type: 'url',
        hint: 'An http(s) URL or a path on this server. These pages show only pictures from this server, and the generated cover otherwise.',
      },
    ],
  },
  here,
  `add an album of ${artist.name}`,
)}
${writeSection(
  'Edit this artist',
  {
    id: 'edit-artist',
    api: `PUT /api/v1/artists/${artist.id}`,
    after: 'reload',
    signedIn: true,
    submit: 'Save the artist',
    fields: artistFormFields(artist),
    // The version this page shows: a save is refused if someone changed the artist since (pages.js shows both).
    ifMatch: artistTag(artist),
  },
  here,
  'edit this artist',
)}`
  const title = albums.page > 1 ? `${artist.name}, albums page ${albums.page}` : artist.name
  return pageResponse({ title, main, here })
}
