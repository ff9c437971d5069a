/**
 * The artist page's edit form and conditional requests, in headless Chromium against the executable: two people edit
 * the same artist in two pages; the second to save sees, beside the form, that the artist changed, with what it holds
 * now, and chooses to save over it or to take it. The form sends the tag the page was built from in `If-Match`; with
 * JavaScript off the page shows the artist, and no form.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { accessibilityProblems } from '../support/axe.ts'
import { type RunningBinary, startBinary } from '../support/binary.ts'
import {
  BROWSER_TEST_TIMEOUT,
  chromiumMissing,
  launchChromium,
  listOutside,
  requireChromium,
  visible,
} from '../support/chromium.ts'

const KEY = 'conflict-test-service-key'
const TIMEOUT = BROWSER_TEST_TIMEOUT
const ARTIST = 2

const missing = chromiumMissing('the browser tests of the edit conflict')
const inCi = process.env.CI === 'true'

let server: RunningBinary
let browser: Browser
/** The `If-Match` of every PUT the pages sent, in order. */
const conditions: (string | undefined)[] = []
/** Every request for something beyond this machine: none can leave (CHROMIUM_ARGS), and none is made. */
const outside: string[] = []

/** Signs up a user through the API and logs them in: the session the pages keep in sessionStorage. */
async function sessionOf(name: string) {
  const email = `${name.toLowerCase()}@rock-legends.com`
  const json = { 'content-type': 'application/json' }
  const password = 'i-love-rock'
  await fetch(`${server.url}/api/v1/user/signup`, {
    method: 'POST',
    headers: json,
    body: JSON.stringify({ name, email, password }),
  })
  const login = (await (
    await fetch(`${server.url}/api/v1/user/login`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ email, password }),
    })
  ).json()) as { token: string; expires_at: string }
  return { token: login.token, expiresAt: login.expires_at, name }
}

/** A browser context signed in as `name` (or signed out), nothing leaving the machine, PUTs' conditions recorded. */
async function newContext(name?: string, options: Parameters<Browser['newContext']>[0] = {}): Promise<BrowserContext> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, ...options })
  listOutside(context, outside)
  context.on('request', (request) => {
    if (request.method() === 'PUT') conditions.push(request.headers()['if-match'])
  })
  if (name) {
    const session = await sessionOf(name)
    await context.addInitScript((text: string) => {
      ;(globalThis as unknown as { sessionStorage: Storage }).sessionStorage.setItem('rock-legends.session', text)
    }, JSON.stringify(session))
  }
  return context
}

const apiArtist = async () => {
  const response = await fetch(`${server.url}/api/v1/artists/${ARTIST}`)
  return { etag: response.headers.get('etag') ?? undefined, artist: (await response.json()) as Record<string, string> }
}

const focusedClass = (page: Page) =>
  page.evaluate(
    () =>
      (globalThis as unknown as { document: { activeElement: { className: string } } }).document.activeElement
        .className,
  )

describe.skipIf(missing && !inCi)('editing an artist someone else changed meanwhile, in two pages', () => {
  beforeAll(async () => {
    if (missing) return
    server = await startBinary(['--port', '0', '--data', ':memory:', '--seed', '--api-key', KEY, '--log', 'off'])
    browser = await launchChromium()
  }, TIMEOUT)

  afterAll(async () => {
    await browser?.close()
    await server?.stop()
  })

  test(
    'the second save shows what the artist holds now beside the form; it can save over it, or take it',
    async () => {
      requireChromium()
      const [first, second] = await Promise.all([newContext('Ana'), newContext('Beto')])
      const [ana, beto] = await Promise.all([first.newPage(), second.newPage()])
      const opened = await apiArtist()
      await Promise.all([ana.goto(`${server.url}/artists/${ARTIST}`), beto.goto(`${server.url}/artists/${ARTIST}`)])
      const anaForm = ana.locator('#edit-artist')
      const betoForm = beto.locator('#edit-artist')
      await Promise.all([visible(anaForm), visible(betoForm)])
      // The page carries the version it was built from.
      expect(await anaForm.getAttribute('data-if-match')).toBe(opened.etag as string)

      // Ana saves first: her save names the version she opened, and goes through.
      await anaForm.getByLabel('Band').fill('Banda de Ana')
      await anaForm.getByRole('button', { name: 'Save the artist' }).click()
      await visible(ana.getByText('Band: Banda de Ana'))
      expect(conditions).toEqual([opened.etag])

      // Beto, on the page he opened before, saves over it: refused, and shown beside his form, his text kept.
      await betoForm.getByLabel('Band').fill('Banda de Beto')
      await betoForm.getByRole('button', { name: 'Save the artist' }).click()
      const conflict = beto.locator('[data-conflict]')
      await visible(conflict.getByText('Someone else changed this artist since you opened this page.'))
      expect(conditions).toEqual([opened.etag, opened.etag])
      expect(await conflict.getAttribute('role')).toBe('alert')
      expect(await focusedClass(beto)).toBe('conflict')
      await visible(conflict.locator('dd', { hasText: 'Banda de Ana' }).getByText('Yours: Banda de Beto'))
      expect(await betoForm.getByLabel('Band').inputValue()).toBe('Banda de Beto')
      expect((await apiArtist()).artist.band).toBe('Banda de Ana')
      expect(await accessibilityProblems(beto)).toEqual([])

      // He keeps his: saved over the version he was just shown.
      const shown = await apiArtist()
      await conflict.getByRole('button', { name: 'Save mine over theirs' }).click()
      await visible(beto.getByText('Band: Banda de Beto'))
      expect(conditions.at(-1)).toBe(shown.etag)
      expect((await apiArtist()).artist.band).toBe('Banda de Beto')

      // Ana, still on her page, edits again: now she meets Beto's change, and takes it.
      await anaForm.getByLabel('Description').fill('Escrito por Ana')
      await anaForm.getByRole('button', { name: 'Save the artist' }).click()
      const hers = ana.locator('[data-conflict]')
      await visible(hers.locator('dd', { hasText: 'Banda de Beto' }))
      await hers.getByRole('button', { name: 'Use their version' }).click()
      await ana.waitForURL(`**/artists/${ARTIST}#edit-artist-title`)
      await visible(ana.getByText('Band: Banda de Beto'))
      expect(await ana.locator('#edit-artist').getByLabel('Band').inputValue()).toBe('Banda de Beto')
      expect(await ana.locator('[data-conflict]').count()).toBe(0)
      const now = await apiArtist()
      expect(now.artist.description).not.toBe('Escrito por Ana')
      expect(await ana.locator('#edit-artist').getAttribute('data-if-match')).toBe(now.etag as string)
      expect(outside).toEqual([])
      await Promise.all([first.close(), second.close()])
    },
    TIMEOUT,
  )

  test(
    'with JavaScript off the page shows the artist and, instead of a form, how to get one',
    async () => {
      requireChromium()
      const context = await newContext(undefined, { javaScriptEnabled: false })
      const page = await context.newPage()
      await page.goto(`${server.url}/artists/${ARTIST}`)
      await visible(page.getByRole('heading', { level: 1 }))
      expect(await page.locator('#edit-artist').isVisible()).toBe(false)
      // Instead of a form that could not be sent, a visitor reads how to get one.
      await visible(page.getByText('to edit this artist'))
      expect(await page.content()).toContain('<noscript>')
      expect(outside).toEqual([])
      await context.close()
    },
    TIMEOUT,
  )
})
