/**
 * Pages that update live (src/web/live.js), in headless Chromium against the executable: what one tab adds appears in
 * the others without a reload and is announced in their status line; each tab keeps one event stream; a page without
 * JavaScript works the same, only not live.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { type RunningBinary, startBinary } from '../support/binary.ts'
import {
  BROWSER_TEST_TIMEOUT,
  chromiumMissing,
  launchChromium,
  listOutside,
  requireChromium,
  visible,
} from '../support/chromium.ts'

const TIMEOUT = BROWSER_TEST_TIMEOUT
const missing = chromiumMissing('the browser tests of live pages')
const inCi = process.env.CI === 'true'

let server: RunningBinary
let browser: Browser
/** Every request for something beyond this machine: none can leave (CHROMIUM_ARGS), and none is made. */
const outside: string[] = []

/** Event streams each page of a context opened, by page; every request off the machine fails, and is listed. */
async function newContext(
  streams: Map<Page, number>,
  options: Parameters<Browser['newContext']>[0] = {},
): Promise<BrowserContext> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, ...options })
  listOutside(context, outside)
  context.on('request', (request) => {
    const page = request.frame().page()
    if (new URL(request.url()).pathname === '/api/v1/events') streams.set(page, (streams.get(page) ?? 0) + 1)
  })
  return context
}

/** Marks the page's window: the mark is gone if the page is ever loaded again. */
const mark = (page: Page) => page.evaluate(() => Object.assign(globalThis, { notReloaded: true }))
const stillMarked = (page: Page) =>
  page.evaluate(() => (globalThis as unknown as { notReloaded?: boolean }).notReloaded === true)

/** Waits until the page's event stream is open (its first bytes have come), so that no change is missed. */
const streamOpen = (page: Page) =>
  page.waitForResponse((response) => new URL(response.url()).pathname === '/api/v1/events', { timeout: 10_000 })

/** Signs up in `page` and comes back to `path` signed in. */
async function signUp(page: Page, name: string, email: string, path: string) {
  await page.goto(`${server.url}/signup?next=${encodeURIComponent(path)}`)
  await page.getByLabel('Name').fill(name)
  await page.getByLabel('Email').fill(email)
  await page.getByLabel('Password').fill('i-love-rock')
  await page.getByRole('button', { name: 'Sign up' }).click()
  await page.waitForURL(`**${path}`)
  await visible(page.getByText(`Signed in as ${name}`))
}

describe.skipIf(missing && !inCi)('live pages, in headless Chromium against the executable', () => {
  beforeAll(async () => {
    if (missing) return
    server = await startBinary(['--port', '0', '--data', ':memory:', '--seed', '--log', 'off'])
    browser = await launchChromium()
  }, TIMEOUT)

  afterAll(async () => {
    await browser?.close()
    await server?.stop()
  })

  test(
    'an album added in one tab appears in another without a reload, announced politely, on one stream',
    async () => {
      requireChromium()
      const streams = new Map<Page, number>()
      const context = await newContext(streams)
      const writer = await context.newPage()
      await signUp(writer, 'Nora', 'nora@rock-legends.com', '/artists/2')

      const viewer = await context.newPage()
      const opened = streamOpen(viewer)
      await viewer.goto(`${server.url}/artists/2`)
      await opened
      await mark(viewer)
      const albumsBefore = await viewer.locator('.albums li').count()

      const addAlbum = writer.locator('#add-album')
      await addAlbum.getByLabel('Title').fill('Grabado en el aire')
      await addAlbum.getByLabel('Year').fill('1999')
      await addAlbum.getByRole('button', { name: 'Add the album' }).click()
      await writer.waitForURL(/#album-\d+$/)

      // In the other tab: the album in the list, marked as new, and said in the status line; no reload.
      const added = viewer.locator('.albums li.is-new')
      await visible(added.getByRole('heading', { name: 'Grabado en el aire' }))
      expect(await viewer.locator('.albums li').count()).toBe(albumsBefore + 1)
      const status = viewer.getByRole('status')
      await visible(status.getByText('New album: Grabado en el aire (1999)'))
      expect(await status.getAttribute('aria-live')).toBeNull() // role=status is polite by itself
      expect(await stillMarked(viewer)).toBe(true)

      // An album of another artist changes nothing here.
      const other = await context.newPage()
      await signUp(other, 'Otro', 'otro@rock-legends.com', '/artists/3')
      await other.locator('#add-album').getByLabel('Title').fill('Not on this page')
      await other.locator('#add-album').getByRole('button', { name: 'Add the album' }).click()
      await other.waitForURL(/#album-\d+$/)
      // The next change that concerns the page arrives after the other one: by then the other was ignored.
      await addAlbum.getByLabel('Title').fill('Second')
      await addAlbum.getByLabel('Year').fill('')
      await addAlbum.getByRole('button', { name: 'Add the album' }).click()
      await visible(status.getByText('New album: Second'))
      expect(await status.textContent()).not.toContain('Not on this page')
      expect(await stillMarked(viewer)).toBe(true)

      // One stream for the tab, however many changes came.
      expect(streams.get(viewer)).toBe(1)
      expect(outside).toEqual([])
      await context.close()
    },
    TIMEOUT,
  )

  test(
    'the catalogue announces a new artist with a link to it, and an edit shows on the artist page',
    async () => {
      requireChromium()
      const streams = new Map<Page, number>()
      const context = await newContext(streams)
      const writer = await context.newPage()
      await signUp(writer, 'Lia', 'lia@rock-legends.com', '/')

      const catalogue = await context.newPage()
      let opened = streamOpen(catalogue)
      await catalogue.goto(`${server.url}/`)
      await opened
      await mark(catalogue)
      const summary = catalogue.locator('.summary')
      const before = await summary.textContent()

      const addArtist = writer.locator('#add-artist')
      await addArtist.getByLabel('Name').fill('Celeste Carballo')
      await addArtist.getByRole('button', { name: 'Add the artist' }).click()
      await writer.waitForURL(/\/artists\/\d+$/)
      const id = new URL(writer.url()).pathname.split('/').at(-1)

      const announced = catalogue.getByRole('status').getByRole('link', { name: 'New artist: Celeste Carballo' })
      await visible(announced)
      expect(await announced.getAttribute('href')).toBe(`/artists/${id}`)
      // The count of the listing moved on, from the server's own rendering.
      await catalogue.waitForFunction(
        (old) =>
          (
            globalThis as unknown as {
              document: { querySelector(selector: string): { textContent: string | null } | null }
            }
          ).document.querySelector('.summary')?.textContent !== old,
        before,
      )
      expect(await stillMarked(catalogue)).toBe(true)

      // The artist's page shows an edit made elsewhere, and leaves its own forms alone.
      const artistPage = await context.newPage()
      opened = streamOpen(artistPage)
      await artistPage.goto(`${server.url}/artists/${id}`)
      await opened
      await mark(artistPage)
      const edit = writer.locator('#edit-artist')
      await edit.getByLabel('Band').fill('Celeste y los Ruidos')
      await edit.getByRole('button', { name: 'Save the artist' }).click()
      await visible(artistPage.locator('article.artist').getByText('Celeste y los Ruidos'))
      await visible(artistPage.getByRole('status').getByText('Celeste Carballo was just changed'))
      expect(await stillMarked(artistPage)).toBe(true)
      expect(streams.get(catalogue)).toBe(1)
      expect(streams.get(artistPage)).toBe(1)
      expect(outside).toEqual([])
      await context.close()
    },
    TIMEOUT,
  )

  test(
    'without JavaScript a page opens no stream and shows every album, with an empty status line',
    async () => {
      requireChromium()
      const streams = new Map<Page, number>()
      const context = await newContext(streams, { javaScriptEnabled: false })
      const page = await context.newPage()
      await page.goto(`${server.url}/artists/1`)
      await visible(page.getByRole('heading', { name: 'Luis Alberto Spinetta', level: 1 }))
      expect(await page.locator('.albums li').count()).toBeGreaterThan(0)
      expect(await page.locator('[data-live-news] li').count()).toBe(0)
      expect(await page.locator('.live-news').isVisible()).toBe(false)
      expect(streams.size).toBe(0)
      expect(outside).toEqual([])
      await context.close()
    },
    TIMEOUT,
  )
})
