import { describe, expect, test } from 'bun:test'
import { seedStore } from '../../src/seed/seed.ts'
import { openMemoryStore } from '../../src/store/document/memory.ts'
import { ARTISTS_PER_PAGE } from '../../src/web/catalogue-page.ts'
import { testApp } from '../helpers.ts'

const BROWSER = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' }

/** An app over the seeded catalogue (32 artists, 307 albums), called as a browser would. */
async function seededApp() {
  const store = openMemoryStore()
  await seedStore(store, true)
  const app = testApp(store)
  const get = (path: string) => app.call(path, { headers: BROWSER })
  return { ...app, get }
}

/** The text of every element matching a simple `<tag …>text</tag>` pattern, tags inside removed. */
const texts = (page: string, pattern: RegExp) =>
  [...page.matchAll(pattern)].map((match) => (match[1] ?? '').replace(/<[^>]+>/g, '').trim())

const cardNames = (page: string) => texts(page, /<h2><a href="\/artists\/\d+">(.*?)<\/a><\/h2>/g)
const attribute = (page: string, name: string) =>
  [...page.matchAll(new RegExp(`${name}="([^"]*)"`, 'g'))].map((match) => match[1] as string)

describe('the pages are HTML documents that load from this server only', () => {
  test.each(['/', '/?q=garcia', '/?page=3', '/artists/1', '/login', '/signup', '/artists/999', '/artists/abc'])(
    'GET %s',
    async (path) => {
      const { get } = await seededApp()
      const { status, headers, text } = await get(path)
      expect(status).toBe(path.includes('999') || path.includes('abc') ? 404 : 200)
      expect(headers.get('content-type')).toBe('text/html; charset=utf-8')
      const policy = headers.get('content-security-policy') ?? ''
      expect(policy).toContain("default-src 'none'")
      for (const directive of ['script-src', 'style-src', 'img-src', 'connect-src', 'form-action'])
        expect(policy).toMatch(new RegExp(`${directive} 'self'`))
      expect(policy).not.toContain('unsafe-inline')
      expect(policy).not.toMatch(/https?:/)
      expect(headers.get('x-content-type-options')).toBe('nosniff')
      expect(text).toStartWith('<!doctype html>\n<html lang="en">')
      expect(text).toContain('<meta name="viewport" content="width=device-width, initial-scale=1">')
      expect(text).toMatch(/<title>[^<]+ · Rock Legends<\/title>/)
      // The header of every page links to the API's documentation and its OpenAPI document.
      expect(text).toContain('<a href="/docs">API docs</a>')
      expect(text).toContain('<a href="/openapi.json">OpenAPI</a>')
      // Nothing inline: no script or style element with a body, no style attribute, no event handler attribute.
      expect(text).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>|<style|\sstyle=|\son[a-z]+=/i)
      for (const url of [...attribute(text, 'src'), ...attribute(text, 'href'), ...attribute(text, 'action')])
        expect(url.startsWith('/') || url.startsWith('#') || url.startsWith('https://www.rfc-editor.org/')).toBe(true)
    },
  )

  test('each page has its own title', async () => {
    const { get } = await seededApp()
    const title = async (path: string) => /<title>(.*?)<\/title>/.exec((await get(path)).text)?.[1]
    expect(await title('/')).toBe('Legends of Argentine rock · Rock Legends')
    expect(await title('/?page=2')).toBe('Artists, page 2 · Rock Legends')
    expect(await title('/?q=garcia')).toBe('Artists matching “garcia” · Rock Legends')
    expect(await title('/artists/2')).toBe('Charly García · Rock Legends')
    expect(await title('/login')).toBe('Log in · Rock Legends')
    expect(await title('/signup')).toBe('Sign up · Rock Legends')
    expect(await title('/artists/999')).toBe('Not found · Rock Legends')
  })

  test('every link and picture of / and of an artist page answers 200', async () => {
    const { get } = await seededApp()
    const seen = new Set<string>()
    for (const page of ['/', '/artists/1', '/?q=seru']) {
      const { text } = await get(page)
      for (const url of [...attribute(text, 'src'), ...attribute(text, 'href')]) {
        if (!url.startsWith('/') || seen.has(url)) continue
        seen.add(url)
        expect({ url, status: (await get(url.replaceAll('&amp;', '&'))).status }).toEqual({ url, status: 200 })
      }
    }
    expect(seen.size).toBeGreaterThan(40)
  })
})

describe('GET /: the catalogue', () => {
  test('lists the first page of artists in catalogue order, with covers, names and bands', async () => {
    const { get } = await seededApp()
    const { text } = await get('/')
    const names = cardNames(text)
    expect(names).toHaveLength(ARTISTS_PER_PAGE)
    expect(names.slice(0, 2)).toEqual(['Luis Alberto Spinetta', 'Charly García'])
    expect(text).toContain(
      '<img src="/covers/artists/2.svg" alt="Picture of Charly García" width="600" height="600" loading="lazy">',
    )
    expect(text).toContain('<p class="band">Serú Girán</p>')
    expect(text).toContain('32 artists; showing 1–12.')
  })

  test('pages forward and back with real links, to the last page', async () => {
    const { get } = await seededApp()
    const first = (await get('/')).text
    expect(first).toContain('<a rel="next" href="/?page=2">Next page →</a>')
    expect(first).not.toContain('rel="prev"')
    const second = (await get('/?page=2')).text
    expect(second).toContain('<a rel="prev" href="/">← Previous page</a>')
    expect(second).toContain('<a rel="next" href="/?page=3">Next page →</a>')
    expect(second).toContain('<span>Page 2 of 3</span>')
    const last = (await get('/?page=3')).text
    expect(cardNames(last)).toHaveLength(32 - 2 * ARTISTS_PER_PAGE)
    expect(last).not.toContain('rel="next"')
    const all = [...cardNames(first), ...cardNames(second), ...cardNames(last)]
    expect(new Set(all).size).toBe(32)
  })

  test.each(['0', '-1', 'abc', '1.5', ''])('a page number that is not one (%p) shows the first page', async (page) => {
    const { get } = await seededApp()
    const { status, text } = await get(`/?page=${page}`)
    expect(status).toBe(200)
    expect(cardNames(text)[0]).toBe('Luis Alberto Spinetta')
  })

  test('a page past the last says so and links to the first', async () => {
    const { get } = await seededApp()
    const { status, text } = await get('/?page=9')
    expect(status).toBe(200)
    expect(cardNames(text)).toEqual([])
    expect(text).toContain('There is no page 9. <a href="/">Go to the first page</a>')
  })

  test.each([
    ['garcia', ['Charly García']],
    ['GARCÍA', ['Charly García']],
    ['  garcía ', ['Charly García']],
    ['seru', ['Charly García']],
    ['paez', ['Fito Páez']],
    ['redonditos', ['Indio Solari']],
  ])('searches names and bands ignoring case and accents: %p', async (q, expected) => {
    const { get } = await seededApp()
    const { text } = await get(`/?q=${encodeURIComponent(q)}`)
    expect(cardNames(text)).toEqual(expected)
    expect(text).toContain(`value="${q.trim()}"`)
    expect(text).toContain('<a href="/">Show all artists</a>')
  })

  test('a search without a match says so', async () => {
    const { get } = await seededApp()
    const { status, text } = await get('/?q=zzz')
    expect(status).toBe(200)
    expect(cardNames(text)).toEqual([])
    expect(text).toContain('No artist or band matches “zzz”.')
  })

  test('orders by name either way, and pages keep the search and the order', async () => {
    const { get } = await seededApp()
    const byName = cardNames((await get('/?sort=name')).text)
    expect(byName[0]).toBe('Andrés Calamaro')
    const descending = (await get('/?sort=-name')).text
    expect(cardNames(descending)[0]).toBe('Willy Quiroga')
    expect(descending).toContain('<option value="-name" selected>')
    expect(descending).toContain('href="/?sort=-name&amp;page=2"')
    const searched = (await get('/?q=a&sort=name')).text
    expect(searched).toContain('href="/?q=a&amp;sort=name&amp;page=2"')
    expect((await get('/?sort=nonsense')).status).toBe(200)
  })

  test('a search is cut at 200 characters without splitting a character, and holds no text a store refuses', async () => {
    const { get } = await seededApp()
    // 199 letters and an emoji (two UTF-16 units): cutting at 200 units would leave half of it, a lone surrogate.
    const long = `${'a'.repeat(199)}🎸`
    for (const q of [encodeURIComponent(long), 'Spin%00etta', 'Spinetta%ED%A0%80']) {
      const { status, text } = await get(`/?q=${q}`)
      expect(status).toBe(200)
      const shown = /<input type="search" id="q" name="q" value="([^"]*)"/.exec(text)?.[1] ?? ''
      expect(shown.isWellFormed()).toBe(true)
      expect(shown).not.toContain('\u0000')
    }
    expect(cardNames((await get('/?q=Spin%00etta')).text)).toEqual(['Luis Alberto Spinetta'])
  })

  test('escapes whatever a record or a search holds', async () => {
    const store = openMemoryStore()
    const evil = '<script>alert("x")</script> & <img src=x onerror=alert(1)>'
    await store.load([{ name: evil, band: `"quoted" 'band'`, description: evil, image: null, albums: [] }])
    const { call } = testApp(store)
    for (const path of ['/', '/artists/1', `/?q=${encodeURIComponent('<b>"hi"</b>')}`]) {
      const { text } = await call(path, { headers: BROWSER })
      expect(text).not.toContain('<script>alert')
      expect(text).not.toContain('<img src=x')
      expect(text).not.toContain('<b>"hi"')
    }
    const { text } = await call('/artists/1', { headers: BROWSER })
    expect(text).toContain(
      '<h1>&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &lt;img src=x onerror=alert(1)&gt;</h1>',
    )
    expect(text).toContain('value="&quot;quoted&quot; &#39;band&#39;"')
  })

  test('shows the add-artist form to signed-in users only, sent to the API by the script', async () => {
    const { get } = await seededApp()
    const { text } = await get('/')
    expect(text).toContain(
      '<form class="api-form" id="add-artist" data-api="POST /api/v1/artists" data-after="artist" data-signed-in novalidate hidden>',
    )
    expect(text).toContain('<p class="note" data-signed-out><a href="/login?next=%2F">Log in</a>')
    for (const field of ['name', 'band', 'description', 'image'])
      expect(text).toContain(`<p class="field-error" id="add-artist-${field}-error" data-error-for="${field}"></p>`)
  })
})

describe('GET /artists/{id}', () => {
  test('shows the artist and every album by year, with covers and a link back', async () => {
    const { get } = await seededApp()
    const { text } = await get('/artists/1')
    expect(text).toContain('<h1>Luis Alberto Spinetta</h1>')
    expect(text).toContain('<p class="band">Band: <strong>Spinetta Jade</strong></p>')
    expect(text).toContain('was an Argentine singer, guitarist and songwriter')
    expect(text).toContain('<p class="back"><a href="/">← All artists</a></p>')
    expect(text).toContain('alt="Picture of Luis Alberto Spinetta"')
    const years = texts(text, /<p class="year">(\d+).*?<\/p>/g).map(Number)
    expect(years.length).toBeGreaterThan(10)
    expect(years).toEqual([...years].sort((a, b) => a - b))
    expect(text).toMatch(/<img src="\/covers\/albums\/\d+\.svg" alt="Cover of Artaud \(1973\)"/)
  })

  test('says the kind of every album but a studio album beside its year', async () => {
    const { get } = await seededApp()
    const { text } = await get('/artists/2')
    expect(text).toContain(
      '<h3>Adiós Sui Generis</h3>\n<p class="year">1975 · <span class="kind">live album</span></p>',
    )
    expect(text).toContain('<h3>Pubis angelical</h3>\n<p class="year">1982 · <span class="kind">soundtrack</span></p>')
    expect(text).toContain('<h3>Clics modernos</h3>\n<p class="year">1983</p>')
  })

  test('lists albums without a year last, 100 to a page', async () => {
    const store = openMemoryStore()
    const albums = [
      { name: 'No year', image: null },
      ...Array.from({ length: 130 }, (_, i) => ({ name: `Album ${i}`, year: 2000 - (i % 50), image: null })),
    ]
    await store.load([{ name: 'Prolific', image: null, albums }])
    const { call } = testApp(store)
    const first = (await call('/artists/1', { headers: BROWSER })).text
    const second = (await call('/artists/1?page=2', { headers: BROWSER })).text
    const years = [first, second].flatMap((text) => texts(text, /<p class="year">(.*?)<\/p>/g))
    expect(years).toHaveLength(131)
    expect(years.at(-1)).toBe('Year unknown')
    expect(years[0]).toBe('1951')
    expect(first).toContain('<a rel="next" href="/artists/1?page=2#albums-title">')
    expect(second).toContain('<a rel="prev" href="/artists/1#albums-title">')
  })

  test('shows a picture from this server, and the generated cover for one from elsewhere', async () => {
    const store = openMemoryStore()
    await store.load([
      { name: 'Local', image: '/covers/artists/2.svg', albums: [{ name: 'Far', image: 'https://example.com/a.jpg' }] },
      { name: 'Remote', image: 'https://example.com/b.jpg', albums: [] },
      { name: 'Sneaky', image: '/\\example.com/c.jpg', albums: [] },
    ])
    const { call } = testApp(store)
    const local = (await call('/artists/1', { headers: BROWSER })).text
    expect(local).toContain('class="portrait" src="/covers/artists/2.svg"')
    expect(local).toContain('src="/covers/albums/1.svg" alt="Cover of Far"')
    expect((await call('/artists/2', { headers: BROWSER })).text).toContain('src="/covers/artists/2.svg"')
    expect((await call('/artists/3', { headers: BROWSER })).text).toContain('src="/covers/artists/3.svg"')
  })

  test('offers forms to add an album and to edit the artist, filled in with what it holds', async () => {
    const { get } = await seededApp()
    const { text } = await get('/artists/2')
    expect(text).toContain('data-api="POST /api/v1/artists/2/albums" data-after="reload" data-anchor="album"')
    expect(text).toContain('data-api="PUT /api/v1/artists/2"')
    expect(text).toContain('id="edit-artist-name" name="name"')
    expect(text).toMatch(/id="edit-artist-name"[^>]*value="Charly García"/)
    expect(text).toMatch(/id="edit-artist-image"[^>]*value="\/covers\/artists\/2.svg"/)
    expect(text).toMatch(/id="add-album-year"[^>]*inputmode="numeric" data-type="integer"/)
  })

  test.each([
    ['999', 'There is no artist 999.'],
    ['0', 'There is no artist with the id “0”.'],
    ['abc', 'There is no artist with the id “abc”.'],
    ['99999999999999999999', 'There is no artist with the id “99999999999999999999”.'],
  ])('/artists/%s is a 404 page for a person', async (id, detail) => {
    const { get } = await seededApp()
    const { status, headers, text } = await get(`/artists/${id}`)
    expect(status).toBe(404)
    expect(headers.get('content-type')).toBe('text/html; charset=utf-8')
    expect(text).toContain(`<p>${detail}</p>`)
    expect(text).toContain('<a href="/">Browse all artists</a>')
  })
})

describe('/login and /signup', () => {
  test.each([
    ['/login', '/'],
    ['/login?next=%2Fartists%2F2', '/artists/2'],
    ['/signup?next=%2F%3Fq%3Dgarcia', '/?q=garcia'],
    ['/login?next=https://example.com/', '/'],
    ['/login?next=//example.com/', '/'],
    ['/login?next=/%5Cexample.com/', '/'],
    ['/login?next=/%09/example.com/', '/'],
  ])('%s comes back to %s, never to another site', async (path, next) => {
    const { get } = await seededApp()
    const { text } = await get(path)
    expect(text).toContain(`data-next="${next.replaceAll('&', '&amp;')}"`)
  })

  test('the forms are those of the API, and explain that they need JavaScript', async () => {
    const { get } = await seededApp()
    const login = (await get('/login')).text
    expect(login).toContain('data-api="POST /api/v1/user/login" data-after="next"')
    expect(login).toContain('autocomplete="current-password"')
    expect(login).toContain('<noscript>')
    const signup = (await get('/signup')).text
    expect(signup).toContain('data-api="POST /api/v1/user/signup" data-after="login"')
    expect(signup).toContain('autocomplete="new-password"')
  })
})

describe('assets', () => {
  test('the stylesheet and the scripts are served from the executable under names that change with them', async () => {
    const { get } = await seededApp()
    const { text } = await get('/')
    const [css] = attribute(text, 'href').filter((url) => url.endsWith('.css'))
    const [js, live] = attribute(text, 'src').filter((url) => url.endsWith('.js'))
    expect(css).toMatch(/^\/assets\/pages-[0-9a-z]+\.css$/)
    expect(js).toMatch(/^\/assets\/pages-[0-9a-z]+\.js$/)
    expect(live).toMatch(/^\/assets\/live-[0-9a-z]+\.js$/)
    for (const [url, type] of [
      [css, 'text/css; charset=utf-8'],
      [js, 'text/javascript; charset=utf-8'],
      [live, 'text/javascript; charset=utf-8'],
    ] as const) {
      const answer = await get(url as string)
      expect(answer.status).toBe(200)
      expect(answer.headers.get('content-type')).toBe(type)
      expect(answer.headers.get('cache-control')).toBe('public, max-age=31536000, immutable')
    }
    const missing = await get('/assets/pages-0.css')
    expect(missing.status).toBe(404)
    expect(missing.headers.get('content-type')).toBe('application/problem+json')
  })

  test.each(['/favicon.svg', '/favicon.ico'])('%s is the site icon', async (path) => {
    const { get } = await seededApp()
    const { status, headers, text } = await get(path)
    expect(status).toBe(200)
    expect(headers.get('content-type')).toBe('image/svg+xml; charset=utf-8')
    expect(text).toStartWith('<svg')
  })

  test('the weight of / (HTML, CSS and script) stays under 100 KB before compression', async () => {
    const { get } = await seededApp()
    for (const path of ['/', '/?page=3', '/artists/1']) {
      const page = (await get(path)).text
      const assets = await Promise.all(
        [...attribute(page, 'href'), ...attribute(page, 'src')]
          .filter((url) => url.startsWith('/assets/'))
          .map(async (url) => (await get(url)).text),
      )
      const bytes = [page, ...assets].reduce((sum, text) => sum + Buffer.byteLength(text), 0)
      expect(assets).toHaveLength(3)
      expect(bytes).toBeLessThan(100_000)
      if (path === '/') console.log(`page weight of /: ${bytes} bytes (HTML ${Buffer.byteLength(page)})`)
    }
  })
})
