import type { Catalogue } from '../catalogue/service.ts'
import type { Artist } from '../model/artist.ts'
import { ARTIST_SORTS, type ArtistSort, MAX_SEARCH_LENGTH } from '../model/search.ts'
import { artistFormFields } from './artist-form-fields.ts'
import { NEEDS_SCRIPT, writeSection } from './forms.ts'
import { type Html, html } from './html.ts'
import { LIVE_NEWS, pageResponse } from './layout.ts'
import { PICTURE_SIZE, pictureOf } from './picture.ts'
import { pageNumber, queryText } from './query.ts'

/** Artists on one page of `/`: a grid of four rows of three on a wide screen. */
export const ARTISTS_PER_PAGE = 12
const SORT_LABELS: Record<ArtistSort, string> = {
  id: 'Catalogue order',
  '-id': 'Newest first',
  name: 'Name, A–Z',
  '-name': 'Name, Z–A',
}

/** What `/` was asked for: a search, an order and a page number. */
interface Listing {
  q: string
  sort: ArtistSort
  page: number
}

/** The URL of `/` for a listing; defaults are left out, so the first page of everything is plain `/`. */
function listingUrl({ q, sort, page }: Listing): string {
  const query = new URLSearchParams()
  if (q) query.set('q', q)
  if (sort !== 'id') query.set('sort', sort)
  if (page > 1) query.set('page', String(page))
  const text = query.toString()
  return text ? `/?${text}` : '/'
}

function card(artist: Artist): Html {
  return html`<li class="card">
<img src="${pictureOf('artist', artist)}" alt="Picture of ${artist.name}" width="${PICTURE_SIZE}" height="${PICTURE_SIZE}" loading="lazy">
<h2><a href="/artists/${artist.id}">${artist.name}</a></h2>
${artist.band ? html`<p class="band">${artist.band}</p>` : ''}
</li>`
}

function searchForm({ q, sort }: Listing): Html {
  return html`<form class="search" role="search" method="get" action="/">
<div class="field">
<label for="q">Find an artist or a band</label>
<input type="search" id="q" name="q" value="${q}" maxlength="${MAX_SEARCH_LENGTH}" autocomplete="off">
</div>
<div class="field">
<label for="sort">Order</label>
<select id="sort" name="sort">${ARTIST_SORTS.map((option) => html`<option value="${option}"${option === sort ? html` selected` : ''}>${SORT_LABELS[option]}</option>`)}</select>
</div>
<button type="submit">Search</button>
</form>`
}

function summary(listing: Listing, total: number, shown: number): Html {
  const { q, page } = listing
  const first = (page - 1) * ARTISTS_PER_PAGE + 1
  const range = shown > 0 && shown < total ? html`; showing ${first}–${first + shown - 1}` : ''
  const count = `${total} ${total === 1 ? 'artist' : 'artists'}`
  if (!q) return html`<p class="summary">${count}${range}.</p>`
  if (total === 0)
    return html`<p class="summary">No artist or band matches “${q}”. <a href="/">Show all artists</a></p>`
  return html`<p class="summary">${count} ${total === 1 ? 'matches' : 'match'} “${q}”${range}. <a href="/">Show all artists</a></p>`
}

function pager(listing: Listing, total: number): Html {
  const pages = Math.max(1, Math.ceil(total / ARTISTS_PER_PAGE))
  if (pages === 1 && listing.page === 1) return html``
  const { page } = listing
  const link = (to: number, rel: string, label: string) =>
    html`<a rel="${rel}" href="${listingUrl({ ...listing, page: to })}">${label}</a>`
  return html`<nav class="pager" aria-label="Pages">
${page > 1 ? link(Math.min(page - 1, pages), 'prev', '← Previous page') : html`<span></span>`}
<span>Page ${page} of ${pages}</span>
${page < pages ? link(page + 1, 'next', 'Next page →') : html`<span></span>`}
</nav>`
}

/**
 * The search a visitor typed, as the page uses it: trimmed, at most {@link MAX_SEARCH_LENGTH} characters, and without what
 * the API refuses in `q` (U+0000, and an unpaired surrogate, which a cut through an emoji would otherwise leave), so
 * that both stores find the same artists.
 */
const searchText = (typed: string) => typed.trim().replaceAll('\u0000', '').slice(0, MAX_SEARCH_LENGTH).toWellFormed()

/**
 * `/`: the catalogue, a page of artists at a time, searched by name or band and ordered as asked, through the same
 * catalogue service the API uses (in-process, no HTTP round trip). Works without the script; signed-in users also
 * get the form to add an artist.
 */
export async function cataloguePage(
  catalogue: Catalogue,
  query: Record<string, unknown>,
  here: string,
): Promise<Response> {
  const sortText = queryText(query.sort)
  const listing: Listing = {
    q: searchText(queryText(query.q) ?? ''),
    sort: ARTIST_SORTS.find((option) => option === sortText) ?? 'id',
    page: pageNumber(query.page),
  }
  const page = { limit: ARTISTS_PER_PAGE, offset: (listing.page - 1) * ARTISTS_PER_PAGE }
  const { items, total } = await catalogue.listArtists(page, { q: listing.q, sort: listing.sort })
  const outOfRange =
    items.length === 0 && total > 0
      ? html`<p class="note">There is no page ${listing.page}. <a href="${listingUrl({ ...listing, page: 1 })}">Go to the first page</a></p>`
      : ''
  const main = html`<h1>Legends of Argentine rock</h1>
${searchForm(listing)}
${LIVE_NEWS}
<div data-live="listing">
${summary(listing, total, items.length)}
${outOfRange}
${items.length > 0 ? html`<ul class="cards">${items.map(card)}</ul>` : ''}
${pager(listing, total)}
</div>
${NEEDS_SCRIPT}
${writeSection(
  'Add an artist',
  {
    id: 'add-artist',
    api: 'POST /api/v1/artists',
    after: 'artist',
    signedIn: true,
    submit: 'Add the artist',
    fields: artistFormFields(),
  },
  here,
  'add an artist',
)}`
  const title = listing.q
    ? `Artists matching “${listing.q}”`
    : listing.page > 1
      ? `Artists, page ${listing.page}`
      : 'Legends of Argentine rock'
  return pageResponse({ title, main, here })
}
