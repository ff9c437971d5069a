import type { Catalogue } from '../catalogue/service.ts'
import { FIRST_YEAR } from '../model/album.ts'
import { NotFoundError } from '../model/errors.ts'
import type { Album, Artist } from '../store/store.ts'
import { artistFields } from './artist-fields.ts'
import { NEEDS_SCRIPT, writeSection } from './forms.ts'
import { type Html, html } from './html.ts'
import { notFoundPage, pageResponse } from './layout.ts'
import { PICTURE_SIZE, pictureOf } from './picture.ts'

/** The most albums one request to the catalogue returns; the page asks for as many pages as the artist has. */
const BATCH = 100

/** Every album of an artist, by year (albums without one last), then in the order they were added. */
async function albumsByYear(catalogue: Catalogue, artistId: number): Promise<Album[]> {
  const albums: Album[] = []
  let total = Number.POSITIVE_INFINITY
  while (albums.length < total) {
    const slice = await catalogue.listAlbums(artistId, { limit: BATCH, offset: albums.length })
    total = slice.total
    if (slice.items.length === 0) break
    albums.push(...slice.items)
  }
  const year = (album: Album) => album.year ?? Number.POSITIVE_INFINITY
  return albums.sort((a, b) => year(a) - year(b) || a.id - b.id)
}

function albumItem(album: Album): Html {
  const label = album.year === undefined ? album.name : `${album.name} (${album.year})`
  return html`<li id="album-${album.id}">
<img src="${pictureOf('album', album)}" alt="Cover of ${label}" width="${PICTURE_SIZE}" height="${PICTURE_SIZE}" loading="lazy">
<h3>${album.name}</h3>
<p class="year">${album.year ?? 'Year unknown'}</p>
</li>`
}

/** Paragraphs of a description, split where it leaves a blank line. */
const paragraphs = (text: string) =>
  text
    .split(/\n\s*\n/)
    .filter((paragraph) => paragraph.trim() !== '')
    .map((paragraph) => html`<p>${paragraph.trim()}</p>`)

function artistView(artist: Artist, albums: Album[]): Html {
  return html`<p class="back"><a href="/">← All artists</a></p>
<article class="artist">
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
${albums.length > 0 ? html`<ol class="albums">${albums.map(albumItem)}</ol>` : html`<p class="note">No albums yet.</p>`}
</section>`
}

/** The artist id in a page path: a positive integer the catalogue can hold; anything else names no artist. */
function artistIdOf(text: string): number | undefined {
  const id = /^[1-9][0-9]{0,15}$/.test(text) ? Number(text) : Number.NaN
  return Number.isSafeInteger(id) ? id : undefined
}

/**
 * `/artists/{id}`: one artist with their description, picture and albums by year, and for a signed-in user the forms
 * to add an album and to edit the artist. An unknown or malformed id is a 404 page.
 */
export async function artistPage(
  catalogue: Catalogue,
  idText: string,
  here: string,
  latestYear: number,
): Promise<Response> {
  const id = artistIdOf(idText)
  if (id === undefined) return notFoundPage(here, `There is no artist with the id “${idText}”.`)
  let artist: Artist
  let albums: Album[]
  try {
    artist = await catalogue.getArtist(id)
    albums = await albumsByYear(catalogue, id)
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
    fields: artistFields(artist),
  },
  here,
  'edit this artist',
)}`
  return pageResponse({ title: artist.name, main, here })
}
