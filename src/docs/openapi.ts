import { Elysia, type InternalRoute, t } from 'elysia'
import { NotFoundError } from '../model/errors.ts'
import { docsAssets, docsPage } from './scalar.ts'

const hidden = { detail: { hide: true } }

/**
 * The API's documentation: the OpenAPI 3.1 document at `/openapi.json`, and interactive documentation at `/docs`
 * whose assets are embedded in the executable, so nothing is fetched from elsewhere. `routes` lists every route of
 * the app; the document is built from them on its first request, once, and served as built from then on.
 *
 * @example
 * app.use(docsRoutes(() => app.routes))
 */
export function docsRoutes(routes: () => readonly InternalRoute[]) {
  let document: string | undefined
  return new Elysia({ name: 'docs' })
    .get(
      '/openapi.json',
      async () => {
        // The generator is loaded with the first request for the document, not at start-up (bench/startup.ts).
        document ??= JSON.stringify((await import('./document.ts')).buildDocument(routes))
        return new Response(document, { headers: { 'content-type': 'application/json; charset=utf-8' } })
      },
      hidden,
    )
    .get('/docs', docsPage, hidden)
    .get(
      '/docs/assets/:file',
      ({ params: { file } }) => {
        const asset = docsAssets.get(file)
        if (!asset) throw new NotFoundError(`There is no documentation asset ${file}.`)
        return asset()
      },
      { params: t.Object({ file: t.String() }), ...hidden },
    )
}
