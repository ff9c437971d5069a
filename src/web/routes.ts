import { Elysia, t } from 'elysia'
import type { Catalogue } from '../catalogue/service.ts'
import { compressAnswer } from '../http/compression.ts'
import { conditionsWithoutTags } from '../http/conditional.ts'
import { assetResponse } from '../http/embedded-assets.ts'
import { SECURITY_HEADERS } from '../http/security-headers.ts'
import { sizedResponse } from '../http/sized-response.ts'
import { NotFoundError } from '../model/errors.ts'
import { loginPage, signupPage } from './account-pages.ts'
import { artistPage } from './artist-page.ts'
import { FAVICON, faviconResponse, pageAsset } from './assets.ts'
import { cataloguePage } from './catalogue-page.ts'
import { API_INDEX } from './entry-points.ts'
import { problemRoutes } from './problem-routes.ts'

const hidden = { detail: { hide: true } }

/** The path and query of a request, where a page's log-in link comes back to. */
const hereOf = (request: Request) => {
  const url = request.url
  return url.slice(url.indexOf('/', url.indexOf('//') + 2))
}

/** What the web routes are built from. */
export interface WebOptions {
  catalogue: Catalogue
  /** False for `--no-ui`: `/` answers the API's entry points as JSON, and the pages are not served. */
  ui: boolean
  /** False for `--no-signup`: `/signup` says that sign-up is closed instead of offering the form. */
  signup: boolean
  /** The latest album year the API accepts, for the album form's hint. */
  latestYear: number
}

const indexJson = JSON.stringify(API_INDEX)

/**
 * The web pages: `/` (the catalogue, searchable), `/artists/{id}`, `/login` and `/signup`, their stylesheet and
 * script, the favicon, and the `/problems/{type}` explanations. Rendered on the server from the catalogue service;
 * the pages' script only enhances them, sending writes to the API with the user's bearer token. With `ui` off, `/`
 * is a JSON index of the API instead, and only the favicon, assets and problem explanations remain.
 */
export function webRoutes({ catalogue, ui, signup, latestYear }: WebOptions) {
  const group = new Elysia()
  const common = group
    .onBeforeHandle(conditionsWithoutTags(() => group.routes))
    .use(problemRoutes(ui))
    .get(FAVICON, faviconResponse, hidden)
    .get('/favicon.ico', faviconResponse, hidden)
    .get(
      '/assets/:file',
      ({ params: { file }, request }) => {
        const asset = pageAsset(file)
        if (!asset) throw new NotFoundError(`There is no asset ${file}.`)
        return assetResponse(request, asset)
      },
      { params: t.Object({ file: t.String() }), ...hidden },
    )
  if (!ui)
    return common.get(
      '/',
      () => sizedResponse(indexJson, { headers: { 'content-type': 'application/json', ...SECURITY_HEADERS } }),
      hidden,
    )
  // The pages are made without the request's headers, so each is compressed once made (src/http/compression.ts).
  return common
    .get(
      '/',
      async ({ query, request }) => compressAnswer(request, await cataloguePage(catalogue, query, hereOf(request))),
      hidden,
    )
    .get(
      '/artists/:artistId',
      async ({ params: { artistId }, query, request }) =>
        compressAnswer(request, await artistPage(catalogue, artistId, query, hereOf(request), latestYear)),
      { params: t.Object({ artistId: t.String() }), ...hidden },
    )
    .get('/login', ({ query, request }) => compressAnswer(request, loginPage(query, hereOf(request))), hidden)
    .get('/signup', ({ query, request }) => compressAnswer(request, signupPage(query, hereOf(request), signup)), hidden)
}
