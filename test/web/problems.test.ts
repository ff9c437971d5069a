import { describe, expect, test } from 'bun:test'
import { createApp } from '../../src/app.ts'
import { problemTypes } from '../../src/http/problem-types.ts'
import { openMemoryStore } from '../../src/store/document/memory.ts'
import { prefersHtml } from '../../src/web/problem-routes.ts'

const CHROMIUM_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8'

const get = (path: string, headers: Record<string, string> = {}, ui = true) =>
  createApp({ store: openMemoryStore(), ui }).handle(new Request(`http://localhost${path}`, { headers }))

describe('GET /problems/{type}', () => {
  test.each(Object.keys(problemTypes))('%s is plain text for curl, without markdown', async (kind) => {
    const type = problemTypes[kind as keyof typeof problemTypes]
    const response = await get(`/problems/${kind}`, { accept: '*/*' })
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toBe('text/plain; charset=utf-8')
    expect(response.headers.get('vary')).toBe('Accept')
    const text = await response.text()
    expect(text).toStartWith(`${type.title} (${type.status})\n\n`)
    expect(text).not.toContain('`')
  })

  test.each(Object.keys(problemTypes))('%s is an HTML page for a browser', async (kind) => {
    const type = problemTypes[kind as keyof typeof problemTypes]
    const response = await get(`/problems/${kind}`, { accept: CHROMIUM_ACCEPT })
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8')
    expect(response.headers.get('vary')).toBe('Accept')
    expect(response.headers.get('content-security-policy')).toContain("default-src 'none'")
    const page = await response.text()
    expect(page).toContain(`<title>${type.title} · Rock Legends</title>`)
    expect(page).toContain(`<h1>${type.title}</h1>`)
    expect(page).toContain(`HTTP status ${type.status}`)
    expect(page).toContain('<a href="/docs">← API documentation</a>')
    expect(page.replace(/<code>[^<]*<\/code>/g, '')).not.toContain('`')
  })

  test('names and headers in an explanation are set as code', async () => {
    const page = await (await get('/problems/unauthorized', { accept: CHROMIUM_ACCEPT })).text()
    expect(page).toContain('<code>Authorization: Bearer &lt;token&gt;</code>')
  })

  test('no Accept header is plain text', async () => {
    const response = await get('/problems/not-found')
    expect(response.headers.get('content-type')).toBe('text/plain; charset=utf-8')
  })

  test.each(['constructor', '__proto__', 'nope'])('%s stays a 404 problem, for a browser too', async (kind) => {
    const response = await get(`/problems/${kind}`, { accept: CHROMIUM_ACCEPT })
    expect(response.status).toBe(404)
    expect(response.headers.get('content-type')).toBe('application/problem+json')
  })

  test('with the pages off, the page links to the documentation only, and has no script', async () => {
    const page = await (await get('/problems/conflict', { accept: CHROMIUM_ACCEPT }, false)).text()
    expect(page).toContain('<h1>Conflict</h1>')
    expect(page).not.toContain('<script')
    expect(page).not.toContain('href="/"')
    expect(page).not.toContain('/login')
  })
})

describe('prefersHtml', () => {
  test.each([
    [CHROMIUM_ACCEPT, true],
    ['text/html', true],
    ['application/xhtml+xml', true],
    ['*/*', false],
    ['', false],
    [null, false],
    ['text/plain', false],
    ['text/plain, text/html;q=0.5', false],
    ['text/html;q=0, */*', false],
    ['application/json', false],
    ['text/html;q=0.9, text/plain;q=0.9', true],
  ])('%p → %p', (accept, expected) => {
    expect(prefersHtml(accept)).toBe(expected)
  })
})
