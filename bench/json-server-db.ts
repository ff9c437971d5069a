/** The collections of json-server's `db.json`, as json-server v1 serves them (ids are strings). */
interface JsonServerDb {
  artists: Record<string, unknown>[]
  albums: Record<string, unknown>[]
}

interface Page {
  data: Record<string, unknown>[]
  meta: { next: string | null }
}

async function getPage(url: string): Promise<Page> {
  const response = await fetch(url)
  if (response.status !== 200) throw new Error(`GET ${url} answered ${response.status}: ${await response.text()}`)
  return (await response.json()) as Page
}

/** Every item of a paged rock-legends list, following `meta.next` from `path`. */
async function allPages(base: string, path: string): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = []
  for (let next: string | null = path; next; ) {
    const page = await getPage(`${base}${next}`)
    items.push(...page.data)
    next = page.meta.next
  }
  return items
}

const withStringIds = (item: Record<string, unknown>) => ({
  ...item,
  id: String(item.id),
  ...('artistId' in item && { artistId: String(item.artistId) }),
})

/**
 * Writes to `file` a json-server `db.json` holding exactly the artists and albums that the rock-legends at `base`
 * serves (same fields and values; ids as strings, which json-server v1 requires), read through its API.
 */
export async function writeJsonServerDb(base: string, file: string): Promise<void> {
  const artists = await allPages(base, '/api/v1/artists?limit=100&offset=0')
  const albums: Record<string, unknown>[] = []
  // A few artists at a time: quick, without flooding the server.
  const BATCH = 16
  for (let i = 0; i < artists.length; i += BATCH) {
    const batch = artists.slice(i, i + BATCH)
    const lists = await Promise.all(
      batch.map((artist) => allPages(base, `/api/v1/artists/${artist.id}/albums?limit=100&offset=0`)),
    )
    albums.push(...lists.flat())
  }
  const db: JsonServerDb = { artists: artists.map(withStringIds), albums: albums.map(withStringIds) }
  await Bun.write(file, JSON.stringify(db, null, 2))
}

/** How many artists a json-server at `base` holds. */
export async function jsonServerArtistCount(base: string): Promise<number> {
  const response = await fetch(`${base}/artists?_page=1&_per_page=1`)
  const page = (await response.json()) as { items?: unknown }
  if (typeof page.items !== 'number') throw new Error(`cannot read json-server's artist count: ${JSON.stringify(page)}`)
  return page.items
}
