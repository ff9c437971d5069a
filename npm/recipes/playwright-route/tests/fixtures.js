import { test as base } from '@playwright/test'
import { createService } from 'rock-legends'

export { expect } from '@playwright/test'

/** The app's origin, which no DNS resolves: its page and its API are both answered here, in the test process. */
export const BASE = 'https://legends.example.test'

/** The app under test: the artists, or one of them (`?artist=ID`), or the problem the API answered instead. */
const APP = `<!doctype html>
<title>Legends</title>
<main>Loading…</main>
<script type="module">
  const main = document.querySelector('main')
  const element = (tag, text) => Object.assign(document.createElement(tag), { textContent: text })
  const id = new URLSearchParams(location.search).get('artist')
  const response = await fetch(id ? '/api/v1/artists/' + id : '/api/v1/artists?limit=100')
  const body = await response.json()
  if (!response.ok) {
    main.replaceChildren(element('p', body.detail))
    main.firstChild.setAttribute('role', 'alert')
  } else if (id) main.replaceChildren(element('h1', body.name))
  else main.replaceChildren(element('ul', ''))
  for (const artist of response.ok && !id ? body.data : []) main.firstChild.append(element('li', artist.name))
</script>`

/**
 * Routes the page's requests for {@link BASE}: the app's page is {@link APP}, and every other request is answered
 * by `service` in this process, as the real API would answer it (with `headers` added, such as a namespace's).
 */
export async function routeApp(page, service, headers = {}) {
  await page.route(`${BASE}/**`, (route) => answer(route, service, headers))
  // Registered last, so tried first: the app's own page.
  await page.route(`${BASE}/app*`, (route) => route.fulfill({ contentType: 'text/html', body: APP }))
}

async function answer(route, service, headers) {
  const request = route.request()
  const response = await service.fetch(
    new Request(request.url(), {
      method: request.method(),
      headers: { ...(await request.allHeaders()), ...headers },
      body: request.postDataBuffer() ?? undefined,
    }),
  )
  // route.fulfill's `response` takes a Playwright APIResponse, not a Web Response: its parts instead.
  await route.fulfill({
    status: response.status,
    headers: Object.fromEntries(response.headers),
    body: Buffer.from(await response.arrayBuffer()),
  })
}

export const test = base.extend({
  // One service per worker, in the worker's own process: no server, no port.
  service: [
    async ({}, use) => {
      const service = await createService({ seed: true, passwords: 'fast-for-tests' })
      await use(service)
      await service.close()
    },
    { scope: 'worker' },
  ],
  // Every test starts from the seeded catalogue; the API is the service, the page is tests/app.html.
  page: async ({ page, service }, use) => {
    await service.reset()
    await routeApp(page, service)
    await use(page)
  },
})
