import { SECURITY_HEADERS } from '../http/security-headers.ts'
import { sizedResponse } from '../http/sized-response.ts'
import { FAVICON, pageAssets } from './assets.ts'
import { type Html, html } from './html.ts'

// Everything comes from this server: the stylesheet, the script, the covers, the API the forms call. No inline
// script or style anywhere, so neither needs an exception; the covers are SVG files of this server.
const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ')

/** What a page is made of. */
export interface PageParts {
  /** The page's own title; the site's name is added after it. */
  title: string
  /** The content of `<main>`. */
  main: Html
  /** The path and query of this page, where logging in comes back to. */
  here: string
  status?: number
  /**
   * False when the pages are off (`--no-ui`) and this is one of the pages that stay (a problem type's): no link to
   * the catalogue, no account, no script.
   */
  ui?: boolean
}

const NAV = [
  { href: '/', label: 'Artists' },
  { href: '/docs', label: 'API docs' },
  { href: '/openapi.json', label: 'OpenAPI' },
]

function header(here: string, ui: boolean): Html {
  const path = here.split('?', 1)[0]
  const next = encodeURIComponent(here)
  const links = ui ? NAV : NAV.slice(1)
  // The account links work without the script (their pages explain that writing needs it); the script swaps them
  // for the signed-in user's name and a log-out button.
  const account = html`<div class="account">
<p data-signed-out><a href="/login?next=${next}">Log in</a> <a href="/signup?next=${next}">Sign up</a></p>
<p data-signed-in hidden><span>Signed in as <strong data-user-name></strong></span> <button type="button" data-log-out>Log out</button></p>
</div>`
  return html`<header class="site">
<a class="brand" href="${ui ? '/' : '/docs'}"><img src="${FAVICON}" alt="" width="32" height="32"> Rock Legends</a>
<nav aria-label="Site">
<ul>${links.map(({ href, label }) => html`<li><a href="${href}"${path === href ? html` aria-current="page"` : ''}>${label}</a></li>`)}</ul>
</nav>
${ui && account}
</header>`
}

/**
 * The status line of a page that updates live (live.js): what just changed is said there, politely, to screen
 * readers as to everyone else. It is on the page from the start, empty, as live regions must be to be heard.
 */
export const LIVE_NEWS = html`<div role="status"><ul class="live-news" data-live-news></ul></div>`

/** The whole HTML document of a page. */
export function renderPage({ title, main, here, ui = true }: PageParts): string {
  const { css, script, live } = pageAssets()
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · Rock Legends</title>
<link rel="icon" href="${FAVICON}" type="image/svg+xml">
<link rel="stylesheet" href="${css.path}">
${
  ui &&
  html`<script src="${script.path}" defer></script>
<script src="${live.path}" defer></script>
`
}</head>
<body>
<a class="skip" href="#main">Skip to content</a>
${header(here, ui)}
<main id="main">
${main}
</main>
<footer class="site">
<p>A catalogue of legendary Argentine rock artists, served by one executable. The same data as JSON: <a href="/api/v1/artists">/api/v1/artists</a>; every operation: <a href="/docs">the API documentation</a>.</p>
</footer>
</body>
</html>
`.text
}

/** The response for a page, under a policy that lets the browser load from and talk to this server only. */
export function pageResponse(parts: PageParts): Response {
  return sizedResponse(renderPage(parts), {
    status: parts.status ?? 200,
    headers: {
      'content-type': 'text/html; charset=utf-8',
      'content-security-policy': CSP,
      // Pages show the catalogue as it is now: a browser asks again rather than show a stale list.
      'cache-control': 'no-cache',
      ...SECURITY_HEADERS,
    },
  })
}

/** A 404 page for a person: what is missing and where to go instead. */
export function notFoundPage(here: string, detail: string): Response {
  const main = html`<h1>Not found</h1>
<p>${detail}</p>
<p><a href="/">Browse all artists</a></p>`
  return pageResponse({ title: 'Not found', main, here, status: 404 })
}
