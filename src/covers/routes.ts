import { Elysia, t } from 'elysia'
import { quickHash } from '#runtime'
import type { Catalogue } from '../catalogue/service.ts'
import { noneMatchHits, refuseUnmatched } from '../http/conditional.ts'
import { sizedResponse } from '../http/sized-response.ts'
import { NotFoundError } from '../model/errors.ts'
import { albumCover, artistCover } from './cover.ts'

// Covers are drawn from the record as it is now, and a record can be replaced at any time: browsers may reuse a
// picture for a minute, then revalidate it cheaply with the ETag.
const CACHE_CONTROL = 'public, max-age=60'
// An SVG opened on its own is a document; nothing in a cover needs scripts, styles from elsewhere or any fetch.
const CSP = "default-src 'none'"

/** The id in a cover's file name (`12.svg`), or `undefined` when the name is not one this server hands out. */
export function coverId(file: string): number | undefined {
  const match = /^([1-9][0-9]{0,15})\.svg$/.exec(file)
  const id = match ? Number(match[1]) : Number.NaN
  return Number.isSafeInteger(id) ? id : undefined
}

const etagOf = (svg: string) => `"${quickHash(svg)}"`

/** The SVG response, or 304 when the client already holds this exact picture, or 412 when `If-Match` names another. */
export function svgResponse(svg: string, request: Request): Response {
  const etag = etagOf(svg)
  refuseUnmatched(request, etag)
  const headers = { etag, 'cache-control': CACHE_CONTROL }
  if (noneMatchHits(request.headers.get('if-none-match'), etag)) return new Response(null, { status: 304, headers })
  return sizedResponse(svg, {
    headers: {
      ...headers,
      'content-type': 'image/svg+xml; charset=utf-8',
      'content-security-policy': CSP,
      'x-content-type-options': 'nosniff',
    },
  })
}

const FileParams = t.Object({ file: t.String() })

/**
 * Generated pictures for artists and albums, so a seeded catalogue shows images offline. Each is drawn from the
 * current record; hidden from the OpenAPI document because clients follow an `image` URL rather than call these.
 */
export const coverRoutes = (catalogue: Pick<Catalogue, 'findArtist' | 'findAlbum'>) =>
  new Elysia({ prefix: '/covers' })
    .get(
      '/artists/:file',
      async ({ params: { file }, request }) => {
        const id = coverId(file)
        const artist = id === undefined ? undefined : await catalogue.findArtist(id)
        if (!artist) throw new NotFoundError(`There is no artist picture ${file}: no artist has that id.`)
        return svgResponse(artistCover(artist), request)
      },
      { params: FileParams, detail: { hide: true } },
    )
    .get(
      '/albums/:file',
      async ({ params: { file }, request }) => {
        const id = coverId(file)
        const found = id === undefined ? undefined : await catalogue.findAlbum(id)
        if (!found) throw new NotFoundError(`There is no album cover ${file}: no album has that id.`)
        const { album, artist } = found
        const svg = albumCover({ title: album.name, artist: artist.name, year: album.year })
        return svgResponse(svg, request)
      },
      { params: FileParams, detail: { hide: true } },
    )
