import { quickHash } from '#runtime'
import type { EmbeddedAsset } from '../http/embedded-assets.ts'
import { sizedResponse } from '../http/sized-response.ts'
import favicon from './favicon.svg' with { type: 'text' }
import live from './live.js' with { type: 'text' }
import css from './pages.css' with { type: 'text' }
import script from './pages.js' with { type: 'text' }

/** A file the pages use, served from the executable itself. */
interface PageAsset extends EmbeddedAsset {
  /** Where the pages link to it: the name carries a hash of the content, so it may be cached for good. */
  path: string
}

const IMMUTABLE = 'public, max-age=31536000, immutable'

function asset(name: string, extension: string, text: string, type: string): PageAsset {
  const file = `${name}-${quickHash(text)}.${extension}`
  return {
    path: `/assets/${file}`,
    name: file,
    source: { text },
    headers: { 'content-type': type, 'cache-control': IMMUTABLE },
  }
}

let assets: { css: PageAsset; script: PageAsset; live: PageAsset } | undefined

/** The stylesheet and the scripts of the pages, named after their content (hashed on first use). */
export function pageAssets(): { css: PageAsset; script: PageAsset; live: PageAsset } {
  assets ??= {
    css: asset('pages', 'css', css, 'text/css; charset=utf-8'),
    script: asset('pages', 'js', script, 'text/javascript; charset=utf-8'),
    live: asset('live', 'js', live, 'text/javascript; charset=utf-8'),
  }
  return assets
}

/** The asset of a file name (`pages-1x2y3z.css`), or `undefined` when no asset has that name. */
export const pageAsset = (file: string): EmbeddedAsset | undefined =>
  Object.values(pageAssets()).find(({ name }) => name === file)

/** The site's icon, an SVG; browsers ask for it at `/favicon.ico` unless a page says otherwise. */
export const faviconResponse = () =>
  sizedResponse(favicon, {
    headers: {
      'content-type': 'image/svg+xml; charset=utf-8',
      'cache-control': 'public, max-age=86400',
      'content-security-policy': "default-src 'none'",
    },
  })

/** The path of the site's icon. */
export const FAVICON = '/favicon.svg'
