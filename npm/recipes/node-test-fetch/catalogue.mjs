/** The Node code under test: it calls the catalogue's API at `base` with the global fetch. */

/** The names of the artists, all pages of them. */
export async function artistNames(base) {
  const names = []
  for (let next = '/api/v1/artists?limit=100'; next; ) {
    const page = await json(await fetch(base + next))
    names.push(...page.data.map((artist) => artist.name))
    next = page.meta.next
  }
  return names
}

/** One artist; an error answer is thrown with the problem's `detail`. */
export async function artist(base, id) {
  return json(await fetch(`${base}/api/v1/artists/${id}`))
}

/** Adds an artist with a service key. */
export async function addArtist(base, apiKey, artist) {
  const headers = { 'Content-Type': 'application/json', 'X-API-Key': apiKey }
  return json(await fetch(`${base}/api/v1/artists`, { method: 'POST', headers, body: JSON.stringify(artist) }))
}

async function json(response) {
  const body = await response.json()
  if (!response.ok) throw Object.assign(new Error(body.detail), { status: response.status })
  return body
}
