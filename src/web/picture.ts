import { type CoverKind, coverPath } from '../covers/cover-path.ts'

const ORIGIN = 'http://this.server'

/**
 * The picture a page shows for an artist or album: its `image` when that is a path on this server, else its
 * generated cover. An `image` elsewhere is not shown: the pages load nothing from other machines (offline demos,
 * and a policy that allows this server only).
 */
export function pictureOf(kind: CoverKind, record: { id: number; image?: string }): string {
  const { image } = record
  // Parsed, not matched: `//host/x` and `/\host/x` are other machines to a browser.
  if (image?.startsWith('/') && URL.canParse(image, ORIGIN) && new URL(image, ORIGIN).origin === ORIGIN) return image
  return coverPath(kind, record.id)
}

/** The size the covers are drawn at; the pages scale them, and knowing it keeps the layout from jumping. */
export const PICTURE_SIZE = 600
