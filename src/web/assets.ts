import favicon from './favicon.svg' with { type: 'text' }
import live from './live.js' with { type: 'text' }
import css from './pages.css' with { type: 'text' }
import script from './pages.js' with { type: 'text' }

/** A file the pages use, served from the executable itself. */
interface Asset {
  /** Where the pages link to it: the name carries a hash of the content, so it may be cached for good. */
  path: string
  body: string
  type: string
}

const IMMUTABLE = 'public, max-age=31536000, immutable'

function asset(name: string, extension: string, body: string, type: string): Asset {
  return { path: `/assets/${name}-${Bun.hash(body).toString(36)}.${extension}`, body, type }
}

let assets: { css: Asset; script: Asset; live: Asset } | undefined

/** The stylesheet and the scripts of the pages, named after their content (hashed on first use). */
export function pageAssets(): { css: Asset; script: Asset; live: Asset } {
  assets ??= {
    css: asset('pages', 'css', css, 'text/css; charset=utf-8'),
    script: asset('pages', 'js', script, 'text/javascript; charset=utf-8'),
    live: asset('live', 'js', live, 'text/javascript; charset=utf-8'),
  }
  return assets
}

/** The answer for an asset's file name (`pages-1x2y3z.css`), or `undefined` when no asset has that name. */
export function assetResponse(file: string): Response | undefined {
  const found = Object.values(pageAssets()).find(({ path }) => path === `/assets/${file}`)
  if (!found) return undefined
  return new Response(found.body, { headers: { 'content-type': found.type, 'cache-control': IMMUTABLE } })
}

/** The site's icon, an SVG; browsers ask for it at `/favicon.ico` unless a page says otherwise. */
export const faviconResponse = () =>
  new Response(favicon, {
    headers: {
      'content-type': 'image/svg+xml; charset=utf-8',
      'cache-control': 'public, max-age=86400',
      'content-security-policy': "default-src 'none'",
    },
  })

/** The path of the site's icon. */
export const FAVICON = '/favicon.svg'
