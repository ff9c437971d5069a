import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { accessibilityProblems, axeOnEveryPage } from '../support/axe.ts'
import { type RunningBinary, startBinary } from '../support/binary.ts'
import {
  BROWSER_TEST_TIMEOUT,
  chromiumMissing,
  launchChromium,
  leavesMachine,
  listOutside,
  requireChromium,
  visible,
} from '../support/chromium.ts'

// Written on every run, and shown in the README.
const SCREENSHOTS = join(import.meta.dir, 'screenshots')
// A service key exists on this server, so that the test can tell that no page ever sends it.
const KEY = 'web-test-service-key'
const TIMEOUT = BROWSER_TEST_TIMEOUT

const missing = chromiumMissing('the browser tests of the pages')
const inCi = process.env.CI === 'true'

let server: RunningBinary
let browser: Browser

/** Every request for something beyond this machine, from any page or worker of any context: failed, and listed. */
const outside: string[] = []
/** Every request a page sent to the API, as `METHOD path credential`, to check what the pages send. */
const apiCalls: string[] = []

/** A fresh browser context (its own sessionStorage), with every request off the machine failed and listed. */
async function newContext(options: Parameters<Browser['newContext']>[0] = {}): Promise<BrowserContext> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, ...options })
  listOutside(context, outside)
  context.on('request', (request) => {
    const url = new URL(request.url())
    if (leavesMachine(url) || !url.pathname.startsWith('/api/')) return
    const headers = request.headers()
    const credential = headers['x-api-key'] ? 'api-key' : (headers.authorization?.split(' ')[0] ?? 'none')
    apiCalls.push(`${request.method()} ${url.pathname} ${credential}`)
  })
  // The requests the Content-Security-Policy refused stop in the page, before any request is made: listed here.
  await context.addInitScript(() => {
    type Violation = { blockedURI: string; violatedDirective: string }
    const win = globalThis as unknown as {
      refused: string[]
      document: { addEventListener(type: string, listener: (event: Violation) => void): void }
    }
    win.refused = []
    win.document.addEventListener('securitypolicyviolation', (event) =>
      win.refused.push(`${event.violatedDirective} ${event.blockedURI}`),
    )
  })
  return context
}

/** Nothing left the machine or tried to, and the page broke no rule of its policy. */
async function expectNoLeaks(page: Page) {
  expect(outside).toEqual([])
  expect(await page.evaluate(() => (globalThis as unknown as { refused: string[] }).refused)).toEqual([])
}

type Picture = { complete: boolean; naturalWidth: number; getBoundingClientRect(): { top: number } }

/** Waits until every picture within the screen's height is loaded (the others load lazily, as they near it). */
const picturesDrawn = (page: Page) =>
  page.waitForFunction(() => {
    const { document, innerHeight } = globalThis as unknown as { document: { images: Picture[] }; innerHeight: number }
    return [...document.images]
      .filter((image) => image.getBoundingClientRect().top < innerHeight)
      .every((image) => image.complete && image.naturalWidth > 0)
  })

const screenshot = (page: Page, name: string, options: Parameters<Page['screenshot']>[0] = {}) =>
  page.screenshot({ path: join(SCREENSHOTS, name), ...options })

describe.skipIf(missing && !inCi)('the web pages, in headless Chromium against the executable', () => {
  beforeAll(async () => {
    if (missing) return
    mkdirSync(SCREENSHOTS, { recursive: true })
    server = await startBinary(['--port', '0', '--data', ':memory:', '--seed', '--api-key', KEY, '--log', 'off'])
    browser = await launchChromium()
  }, TIMEOUT)

  afterAll(async () => {
    await browser?.close()
    await server?.stop()
  })

  test(
    'browse, page, search with accents and open an artist, by links and the keyboard',
    async () => {
      requireChromium()
      const context = await newContext()
      const page = await context.newPage()
      await page.goto(`${server.url}/`)
      expect(await page.title()).toBe('Legends of Argentine rock · Rock Legends')
      await visible(page.getByRole('heading', { name: 'Charly García' }))
      expect(await page.locator('.cards li').count()).toBe(12)
      // Every cover on the screen is drawn: loaded from this server, with its size known.
      await picturesDrawn(page)
      await screenshot(page, 'catalogue.png')
      await page.getByRole('link', { name: 'Next page →' }).click()
      await page.waitForURL('**/?page=2')
      await visible(page.getByText('Page 2 of 3'))
      // The skip link is the first stop of the keyboard, and leads to the content.
      await page.keyboard.press('Tab')
      expect(
        await page.evaluate(
          () =>
            (globalThis as unknown as { document: { activeElement: { textContent: string } } }).document.activeElement
              .textContent,
        ),
      ).toBe('Skip to content')
      // Search by typing and pressing Enter: no accent, capitals, and it still finds "García".
      await page.getByLabel('Find an artist or a band').fill('GARCIA')
      await page.getByLabel('Find an artist or a band').press('Enter')
      await page.waitForURL('**/?q=GARCIA&sort=id')
      expect(await page.locator('.cards h2').allTextContents()).toEqual(['Charly García'])
      await page.getByRole('link', { name: 'Charly García' }).click()
      await page.waitForURL('**/artists/2')
      await visible(page.getByRole('heading', { name: 'Charly García', level: 1 }))
      await visible(page.getByRole('heading', { name: 'Clics modernos' }))
      expect(await page.title()).toBe('Charly García · Rock Legends')
      await picturesDrawn(page)
      await screenshot(page, 'artist.png')
      await page.getByRole('link', { name: '← All artists' }).click()
      await page.waitForURL(`${server.url}/`)
      await expectNoLeaks(page)
      await context.close()
    },
    TIMEOUT,
  )

  test(
    'browsing and search work with JavaScript off',
    async () => {
      requireChromium()
      const context = await newContext({ javaScriptEnabled: false })
      const page = await context.newPage()
      await page.goto(`${server.url}/`)
      await page.getByLabel('Find an artist or a band').fill('pedro aznar')
      await page.getByRole('button', { name: 'Search' }).click()
      await page.waitForURL('**/?q=pedro+aznar&sort=id')
      expect(await page.locator('.cards h2').allTextContents()).toEqual(['Pedro Aznar'])
      await page.getByRole('link', { name: 'Pedro Aznar' }).click()
      await visible(page.getByRole('heading', { name: 'Pedro Aznar', level: 1 }))
      // The forms need the script: instead of a form that could not be sent, a visitor reads how to get one.
      await visible(page.getByText('to add an album of Pedro Aznar'))
      expect(await page.content()).toContain('<noscript>')
      expect(await page.locator('form.api-form').first().isVisible()).toBe(false)
      await expectNoLeaks(page)
      await context.close()
    },
    TIMEOUT,
  )

  test(
    'sign up, add an artist and an album, see a validation error beside its field, edit, log out',
    async () => {
      requireChromium()
      const context = await newContext()
      const page = await context.newPage()
      await page.goto(`${server.url}/artists/1`)
      await visible(page.getByText('to add an album of Luis Alberto Spinetta'))
      await page.getByRole('banner').getByRole('link', { name: 'Sign up' }).click()
      await page.waitForURL('**/signup?next=%2Fartists%2F1')
      await page.getByLabel('Name').fill('Carla')
      await page.getByLabel('Email').fill('carla@rock-legends.com')
      await page.getByLabel('Password').fill('short')
      await page.getByRole('button', { name: 'Sign up' }).click()
      // The API's rule, shown beside the field it names.
      await visible(page.locator('#signup-password-error').getByText('Must be a string of 8–1024 characters'))
      await page.getByLabel('Password').fill('i-love-rock')
      await page.getByRole('button', { name: 'Sign up' }).click()
      // Signed up, logged in, and back where they started.
      await page.waitForURL('**/artists/1')
      await visible(page.getByText('Signed in as Carla'))

      await page.goto(`${server.url}/`)
      const addArtist = page.locator('#add-artist')
      await visible(addArtist)
      await addArtist.getByLabel('Name').fill('Claudia Puyó')
      await addArtist.getByLabel('Band').fill('Polifemo')
      await addArtist.getByLabel('Description').fill('Singer and guitarist.')
      await addArtist.getByRole('button', { name: 'Add the artist' }).click()
      await page.waitForURL(/\/artists\/33$/)
      await visible(page.getByRole('heading', { name: 'Claudia Puyó', level: 1 }))
      await visible(page.getByText('No albums yet.'))

      const addAlbum = page.locator('#add-album')
      await addAlbum.getByLabel('Title').fill('Claudia Puyó')
      await addAlbum.getByLabel('Year').fill('1800')
      await addAlbum.getByRole('button', { name: 'Add the album' }).click()
      const yearError = page.locator('#add-album-year-error')
      await visible(yearError.getByText('Must be an integer from 1900 to'))
      const year = addAlbum.getByLabel('Year')
      expect(await year.getAttribute('aria-invalid')).toBe('true')
      expect(await year.getAttribute('aria-describedby')).toContain('add-album-year-error')
      expect(
        await page.evaluate(
          () => (globalThis as unknown as { document: { activeElement: { id: string } } }).document.activeElement.id,
        ),
      ).toBe('add-album-year')
      expect(await page.locator('#add-album-name-error').textContent()).toBe('')
      await visible(addAlbum.getByRole('alert').getByText('The request is not valid: see the field marked below.'))
      await page.locator('#add-album').scrollIntoViewIfNeeded()
      await screenshot(page, 'add-album-error.png', {
        clip: (await page.locator('section:has(#add-album)').boundingBox()) ?? undefined,
      })
      expect(await accessibilityProblems(page)).toEqual([])

      await year.fill('1987')
      await addAlbum.getByRole('button', { name: 'Add the album' }).click()
      await page.waitForURL(/\/artists\/33#album-\d+$/)
      const album = page.locator('.albums li')
      await visible(album.getByRole('heading', { name: 'Claudia Puyó' }))
      await visible(album.getByText('1987'))

      const edit = page.locator('#edit-artist')
      expect(await edit.getByLabel('Name').inputValue()).toBe('Claudia Puyó')
      await edit.getByLabel('Band').fill('Sacramento')
      await edit.getByRole('button', { name: 'Save the artist' }).click()
      await visible(page.getByText('Band: Sacramento'))
      // Through the API, and only with the user's own bearer token.
      const response = await fetch(`${server.url}/api/v1/artists/33/albums`)
      expect(((await response.json()) as { data: unknown[] }).data).toEqual([
        { id: expect.any(Number), artistId: 33, name: 'Claudia Puyó', year: 1987, kind: 'studio' },
      ])

      await page.getByRole('button', { name: 'Log out' }).click()
      await visible(page.getByRole('banner').getByRole('link', { name: 'Log in' }))
      expect(await edit.isVisible()).toBe(false)
      const writes = apiCalls.filter((call) => !call.startsWith('GET'))
      expect(writes).toEqual([
        'POST /api/v1/user/signup none',
        'POST /api/v1/user/signup none',
        'POST /api/v1/user/login none',
        'POST /api/v1/artists Bearer',
        'POST /api/v1/artists/33/albums Bearer',
        'POST /api/v1/artists/33/albums Bearer',
        'PUT /api/v1/artists/33 Bearer',
        'POST /api/v1/user/logout Bearer',
      ])
      expect(apiCalls.some((call) => call.endsWith('api-key'))).toBe(false)
      await expectNoLeaks(page)
      await context.close()
    },
    TIMEOUT,
  )

  test(
    'a session that ended elsewhere asks to log in again, keeping what was typed',
    async () => {
      requireChromium()
      const user = { name: 'Tomás', email: 'tomas@rock-legends.com', password: 'i-love-rock' }
      const context = await newContext()
      const page = await context.newPage()
      await page.goto(`${server.url}/signup?next=%2Fartists%2F3`)
      await page.getByLabel('Name').fill(user.name)
      await page.getByLabel('Email').fill(user.email)
      await page.getByLabel('Password').fill(user.password)
      await page.getByRole('button', { name: 'Sign up' }).click()
      await page.waitForURL('**/artists/3')
      const token = await page.evaluate(
        () =>
          JSON.parse(
            (globalThis as unknown as { sessionStorage: Storage }).sessionStorage.getItem('rock-legends.session') ??
              '{}',
          ).token as string,
      )
      expect(token).toStartWith('rl_tok_')
      await fetch(`${server.url}/api/v1/user/logout`, { method: 'POST', headers: { authorization: `Bearer ${token}` } })
      const addAlbum = page.locator('#add-album')
      await addAlbum.getByLabel('Title').fill('Bocanada')
      await addAlbum.getByRole('button', { name: 'Add the album' }).click()
      await visible(addAlbum.getByRole('link', { name: 'Log in again' }))
      expect(await addAlbum.getByLabel('Title').inputValue()).toBe('Bocanada')
      await visible(page.getByRole('banner').getByRole('link', { name: 'Log in' }))
      await expectNoLeaks(page)
      await context.close()
    },
    TIMEOUT,
  )

  test(
    'readable on a phone: nothing wider than the screen',
    async () => {
      requireChromium()
      const context = await newContext({ viewport: { width: 360, height: 740 }, isMobile: true, hasTouch: true })
      const page = await context.newPage()
      for (const path of ['/', '/artists/6', '/signup', '/problems/validation-error']) {
        await page.goto(`${server.url}${path}`)
        const widths = await page.evaluate(() => {
          const root = (
            globalThis as unknown as { document: { documentElement: { scrollWidth: number; clientWidth: number } } }
          ).document.documentElement
          return { scroll: root.scrollWidth, client: root.clientWidth }
        })
        expect({ path, ...widths }).toEqual({ path, scroll: widths.client, client: widths.client })
      }
      await page.goto(`${server.url}/`)
      await picturesDrawn(page)
      await screenshot(page, 'catalogue-phone.png')
      await expectNoLeaks(page)
      await context.close()
    },
    TIMEOUT,
  )

  test(
    'every page passes axe-core with no serious or critical violation, signed in or not',
    async () => {
      requireChromium()
      const context = await newContext()
      const page = await context.newPage()
      await axeOnEveryPage(page)
      const paths = [
        '/',
        '/?q=garcia',
        '/?q=nothing-matches',
        '/?page=3',
        '/artists/2',
        '/login',
        '/signup',
        '/artists/999',
        '/problems/validation-error',
      ]
      const problems: string[] = []
      const check = async (label: string) => {
        for (const path of paths) {
          await page.goto(`${server.url}${path}`)
          await page.waitForLoadState('load')
          problems.push(...(await accessibilityProblems(page)).map((problem) => `${label} ${path}: ${problem}`))
        }
      }
      await check('visitor')
      await page.goto(`${server.url}/signup`)
      await page.getByLabel('Name').fill('Ana')
      await page.getByLabel('Email').fill('ana@rock-legends.com')
      await page.getByLabel('Password').fill('i-love-rock')
      await page.getByRole('button', { name: 'Sign up' }).click()
      await page.waitForURL(`${server.url}/`)
      await visible(page.getByText('Signed in as Ana'))
      await check('signed in')
      expect(problems).toEqual([])
      await expectNoLeaks(page)
      await context.close()
    },
    TIMEOUT,
  )
})
