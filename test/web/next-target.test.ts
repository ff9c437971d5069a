import { describe, expect, test } from 'bun:test'
import { openMemoryStore } from '../../src/store/document/memory.ts'
import { testApp } from '../helpers.ts'

// Where `/login` and `/signup` send the browser afterwards (`?next=`) is a path on this server, whatever was asked.
// `/.//evil.com` is a path by the letter, but normalised it is `//evil.com`, which a browser takes for another machine:
// the server must never write it into a page, not even for its script to re-check.

const BROWSER = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' }
const ORIGIN = 'http://localhost'

const OFF_SITE = [
  '/.//evil.com',
  '/.//evil.com/path?x=1',
  '/./\\evil.com',
  '/a/..//evil.com',
  '/..//evil.com',
  '/%2e//evil.com',
  '/%2e%2e//evil.com',
  '/\\evil.com',
  '/\\\\evil.com',
  '//evil.com',
  '///evil.com',
  '/\t/evil.com',
  '\\\\evil.com',
  'https://evil.com',
  'HTTPS://evil.com',
  'javascript:alert(1)',
  ' //evil.com',
]

/** Every place in `page` that says where to go next: each `data-next`, and the `next` of each link. */
function targets(page: string): string[] {
  const found = [...page.matchAll(/data-next="([^"]*)"/g)].map((match) => match[1] as string)
  for (const [, href] of page.matchAll(/href="([^"]*)"/g)) {
    const url = new URL((href as string).replaceAll('&amp;', '&'), ORIGIN)
    const next = url.searchParams.get('next')
    if (next !== null) found.push(next)
  }
  return found.map((target) => target.replaceAll('&amp;', '&'))
}

/** Whether `target`, as a browser on this server would follow it, stays on this server. */
const staysHere = (target: string) =>
  target.startsWith('/') && !/^[/\\]{2}/.test(target) && new URL(target, ORIGIN).origin === ORIGIN

describe('?next= never leads off this server', () => {
  const { call } = testApp(openMemoryStore())
  for (const page of ['/login', '/signup'])
    test.each(OFF_SITE)(`${page}?next=%s is sent to the home page`, async (next) => {
      const { status, text } = await call(`${page}?next=${encodeURIComponent(next)}`, { headers: BROWSER })
      expect(status).toBe(200)
      expect([...text.matchAll(/data-next="([^"]*)"/g)].map((match) => match[1])).toEqual(['/'])
      for (const target of targets(text)) expect(staysHere(target)).toBe(true)
    })

  test.each([
    ['/artists/2', '/artists/2'],
    ['/?q=garcia&page=2', '/?q=garcia&page=2'],
    ['/./artists/./2', '/artists/2'],
    ['/%2F%2Fevil.com', '/%2F%2Fevil.com'],
  ])('a path on this server, %s, is kept (normalised: %s)', async (next, expected) => {
    const { text } = await call(`/login?next=${encodeURIComponent(next)}`, { headers: BROWSER })
    const found = targets(text)
    expect(found).toContain(expected)
    for (const target of found) expect(staysHere(target)).toBe(true)
  })
})
