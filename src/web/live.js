// Keeps the pages up to date while they are open: one event stream per tab (GET /api/v1/events), and on a change that
// concerns what the page shows, the page's live parts are fetched again from the server and swapped in, so that the
// server renders every part of a page in one place, with or without this script. Without the script, or without
// EventSource, the pages are the same, only not live: nothing here is needed to read or write.
//
// A page marks its live parts with `data-live` (the catalogue's listing; an artist's details; their albums) and says
// which changes concern it with `data-live-artist` (the artist of an artist's page). What is new is announced in the
// page's status line (`[data-live-news]`, inside a polite live region), so that screen readers say it without moving focus.

const parts = document.querySelectorAll('[data-live]')
const news = document.querySelector('[data-live-news]')
const artistId = document.querySelector('[data-live-artist]')?.dataset.liveArtist

/** Refreshes are gathered: many changes in a moment make one fetch, at a random moment of a short spread. */
const GATHER_MS = 250
const SPREAD_MS = 750
/** At most this many lines of news are kept on the page. */
const NEWS_LINES = 5

let source
let refreshing
let again = false

/** Says `text` in the status line, with a link to `href` when given; the oldest lines go past NEWS_LINES. */
function announce(text, href) {
  if (!news) return
  const line = document.createElement('li')
  if (href) {
    const link = document.createElement('a')
    link.href = href
    link.textContent = text
    line.append(link)
  } else line.textContent = text
  news.append(line)
  while (news.children.length > NEWS_LINES) news.firstElementChild.remove()
}

/** A key for each item of a live part (a card's link, an album's id), to mark the items a refresh brought. */
const itemKeys = (part) =>
  new Set([...part.querySelectorAll('li')].map((item) => item.id || item.querySelector('a')?.getAttribute('href')))

/**
 * The page again from the server, its live parts swapped for the new ones. A focused link inside a part is focused
 * again after the swap (by its address), so that a keyboard user does not lose their place.
 */
async function refresh() {
  const response = await fetch(location.href, { headers: { accept: 'text/html' }, cache: 'no-store' })
  if (!response.ok) return
  const fresh = new DOMParser().parseFromString(await response.text(), 'text/html')
  const focused = document.activeElement?.closest('[data-live]') ? document.activeElement.getAttribute('href') : null
  for (const part of document.querySelectorAll('[data-live]')) {
    const replacement = fresh.querySelector(`[data-live="${part.dataset.live}"]`)
    if (!replacement) continue
    const before = itemKeys(part)
    for (const item of replacement.querySelectorAll('li')) {
      const key = item.id || item.querySelector('a')?.getAttribute('href')
      if (before.size > 0 && !before.has(key)) item.classList.add('is-new')
    }
    part.replaceWith(document.adoptNode(replacement))
  }
  if (focused) document.querySelector(`[data-live] a[href="${CSS.escape(focused)}"]`)?.focus()
}

/** Asks for a refresh soon; changes that arrive meanwhile join it, and one during a refresh makes another after it. */
function refreshSoon() {
  if (refreshing) {
    again = true
    return
  }
  refreshing = new Promise((resolve) => setTimeout(resolve, GATHER_MS + Math.random() * SPREAD_MS))
    .then(refresh)
    .catch(() => {})
    .finally(() => {
      refreshing = undefined
      if (again) {
        again = false
        refreshSoon()
      }
    })
}

const data = (event) => {
  try {
    return JSON.parse(event.data)
  } catch {
    return {}
  }
}

const pageOfArtist = (id) => `/artists/${id}`

/** What each kind of change does to this page. */
const handlers = {
  'artist-created'(event) {
    if (artistId !== undefined) return
    const { artist } = data(event)
    if (!artist) return
    announce(`New artist: ${artist.name}`, pageOfArtist(artist.id))
    refreshSoon()
  },
  'artist-updated'(event) {
    const { artist } = data(event)
    if (!artist) return
    if (artistId === undefined) {
      // The catalogue shows it only when it is on this page.
      if (document.querySelector(`[data-live] a[href="${pageOfArtist(artist.id)}"]`)) refreshSoon()
      return
    }
    if (String(artist.id) !== artistId) return
    announce(`${artist.name} was just changed`)
    refreshSoon()
  },
  'album-created'(event) {
    const { album } = data(event)
    if (!album || String(album.artistId) !== artistId) return
    announce(`New album: ${album.name}${album.year ? ` (${album.year})` : ''}`)
    refreshSoon()
  },
  'album-updated'(event) {
    const { album } = data(event)
    if (!album || String(album.artistId) !== artistId) return
    announce(`${album.name} was just changed`)
    refreshSoon()
  },
  'album-deleted'(event) {
    const { album } = data(event)
    if (!album || String(album.artistId) !== artistId) return
    announce(`${album.name} was just removed`)
    refreshSoon()
  },
  reload() {
    refreshSoon()
  },
}

function open() {
  if (source) return
  source = new EventSource('/api/v1/events')
  for (const [kind, handle] of Object.entries(handlers)) source.addEventListener(kind, handle)
}

function close() {
  source?.close()
  source = undefined
}

if (parts.length > 0 && 'EventSource' in window) {
  open()
  // A page left for another is closed with its stream; one kept by the browser to come back to (the back button)
  // opens a new stream when shown again, and refreshes once for what it missed meanwhile.
  addEventListener('pagehide', close)
  addEventListener('pageshow', (event) => {
    if (!event.persisted) return
    open()
    refreshSoon()
  })
}
