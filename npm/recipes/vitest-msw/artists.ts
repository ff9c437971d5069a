/** The component under test: the artists the API at `base` lists, or the problem it answers, shown in `root`. */
export async function showArtists(root: HTMLElement, base: string): Promise<void> {
  const response = await fetch(`${base}/api/v1/artists?limit=100`)
  if (!response.ok) return showProblem(root, response)
  const page: { data: { name: string }[] } = await response.json()
  const list = document.createElement('ul')
  for (const artist of page.data) {
    const item = document.createElement('li')
    item.textContent = artist.name
    list.append(item)
  }
  root.replaceChildren(list)
}

/** One artist by id, or the problem the API answers (a 404 for an unknown id). */
export async function showArtist(root: HTMLElement, base: string, id: number): Promise<void> {
  const response = await fetch(`${base}/api/v1/artists/${id}`)
  if (!response.ok) return showProblem(root, response)
  const heading = document.createElement('h1')
  heading.textContent = (await response.json()).name
  root.replaceChildren(heading)
}

/** An RFC 9457 problem: its `detail` is written for people. */
async function showProblem(root: HTMLElement, response: Response): Promise<void> {
  const alert = document.createElement('p')
  alert.setAttribute('role', 'alert')
  alert.textContent = (await response.json()).detail
  root.replaceChildren(alert)
}
