import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { type BrowserContext, chromium, type Page, type Request } from 'playwright-core'
import type { OpenApiDocument } from '../../src/docs/shapes.ts'
import { type RunningBinary, removeDir, startBinary, tempDir } from '../support/binary.ts'
import {
  BROWSER_TEST_TIMEOUT,
  CHROMIUM,
  CHROMIUM_ARGS,
  chromiumMissing,
  listOutside,
  requireChromium,
  visible,
} from '../support/chromium.ts'

// Written on every run, and shown in the README.
const SCREENSHOT = join(import.meta.dir, 'docs-screenshot.png')
const KEY = 'browser-test-service-key'
const TIMEOUT = BROWSER_TEST_TIMEOUT

const missing = chromiumMissing('the browser test of /docs')
const inCi = process.env.CI === 'true'

let server: RunningBinary
let context: BrowserContext
let profile: string
let spec: OpenApiDocument

/** Every request for something beyond this machine, from any page or worker of the browser: failed, and listed. */
const outside: string[] = []

/**
 * A new page that also lists the requests its Content-Security-Policy refused: those stop in the page, before any
 * request is made. Only refused URLs count: Scalar's bundled zod probes whether eval works, and takes no for an answer.
 */
async function isolatedPage(): Promise<{ page: Page; refused: () => Promise<string[]> }> {
  const page = await context.newPage()
  await page.addInitScript(() => {
    // Runs in the page, whose globals the project's types (no DOM) do not describe.
    type Violation = { blockedURI: string; violatedDirective: string }
    const win = globalThis as unknown as {
      refused: string[]
      document: { addEventListener(type: string, listener: (event: Violation) => void): void }
    }
    win.refused = []
    win.document.addEventListener('securitypolicyviolation', (event) => {
      if (/^https?:/.test(event.blockedURI)) win.refused.push(`${event.violatedDirective} ${event.blockedURI}`)
    })
  })
  return { page, refused: () => page.evaluate(() => (globalThis as unknown as { refused: string[] }).refused) }
}

let docs: { page: Page; refused: () => Promise<string[]> } | undefined

/**
 * /docs, opened in an {@link isolatedPage} by the first test that needs it and then shared by the tests that follow,
 * in their order: each load of Scalar costs about 3 s of CPU. A test that leaves a dialog open closes it.
 */
async function docsPage(): Promise<{ page: Page; refused: () => Promise<string[]> }> {
  if (!docs) {
    docs = await isolatedPage()
    await docs.page.goto(`${server.url}/docs`)
  }
  return docs
}

/** Nothing left the machine, or tried to. */
async function expectNoLeaks(refused: () => Promise<string[]>) {
  expect(outside).toEqual([])
  expect(await refused()).toEqual([])
}

/** Every operation of the document, with the label of its "Test Request" button. */
function operations() {
  return Object.entries(spec.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, operation]) => ({
      summary: operation.summary ?? operation.operationId,
      testRequest: `Test Request (${method} ${path})`,
    })),
  )
}

describe.skipIf(missing && !inCi)('the interactive documentation, in headless Chromium against the executable', () => {
  beforeAll(async () => {
    if (missing) return
    server = await startBinary(['--port', '0', '--data', ':memory:', '--seed', '--api-key', KEY, '--log', 'off'])
    spec = (await (await fetch(`${server.url}/openapi.json`)).json()) as OpenApiDocument
    profile = tempDir('rock-legends-chromium-')
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      args: CHROMIUM_ARGS,
      viewport: { width: 1280, height: 800 },
    })
    listOutside(context, outside)
  }, TIMEOUT)

  afterAll(async () => {
    await context?.close()
    await server?.stop()
    if (profile) removeDir(profile)
  })

  test(
    'shows every operation, asks nothing of any other machine, and is captured for the README',
    async () => {
      requireChromium()
      const { page, refused } = await docsPage()
      await visible(page.getByRole('heading', { name: 'Rock Legends', exact: true }))
      const sidebar = page.locator('aside')
      for (const { summary } of operations()) await visible(sidebar.getByText(summary, { exact: true }))
      // The page as it opens, before any click. The port changes with every run; hidden, it leaves the screenshot
      // unchanged from one run to the next.
      await page.screenshot({
        path: SCREENSHOT,
        mask: [page.getByText(server.url, { exact: true })],
        maskColor: '#ffffff',
      })
      // Operations render as they scroll into view: visit each, as a reader would, until its section is there.
      for (const { summary, testRequest } of operations()) {
        await sidebar.getByText(summary, { exact: true }).click()
        await visible(page.getByRole('button', { name: testRequest, exact: true }))
      }
      await expectNoLeaks(refused)
    },
    TIMEOUT,
  )

  test(
    '"Test Request" with the service key lists the artists (200)',
    async () => {
      requireChromium()
      const { page, refused } = await docsPage()
      const sent: string[] = []
      const listen = (request: Request) => {
        if (request.url().includes('/api/')) sent.push(`${request.headers()['x-api-key']} ${request.url()}`)
      }
      page.on('request', listen)
      await page.getByRole('button', { name: 'Selected Auth Type: apiKeyHeader' }).first().waitFor()
      await page.locator('input.scalar-password-input').first().fill(KEY)
      await page.getByRole('button', { name: 'Test Request (get /api/v1/artists)', exact: true }).click()
      await page.getByRole('button', { name: /^Send get request/ }).click()
      await visible(page.getByText('200 OK', { exact: true }))
      await visible(page.getByText('"Luis Alberto Spinetta"').first())
      // The documented defaults, `sort=id` (an extension of the published contract) among them.
      expect(sent).toEqual([`${KEY} ${server.url}/api/v1/artists?limit=10&offset=0&sort=id`])
      await expectNoLeaks(refused)
      page.off('request', listen)
      await page.keyboard.press('Escape') // closes the request's dialog
    },
    TIMEOUT,
  )

  test(
    '"Test Request" with a bearer token from login shows who is signed in (200)',
    async () => {
      requireChromium()
      const user = { name: 'Carlos', email: 'carlos@rock-legends.com', password: 'i-love-rock' }
      const post = (path: string, body: object) =>
        fetch(`${server.url}${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        })
      expect((await post('/api/v1/user/signup', user)).status).toBe(201)
      const login = await post('/api/v1/user/login', { email: user.email, password: user.password })
      const { token } = (await login.json()) as { token: string }
      const { page, refused } = await docsPage()
      const sent: string[] = []
      const listen = (request: Request) => {
        const headers = request.headers()
        if (request.url().includes('/api/')) sent.push(`${headers['x-api-key']} ${headers.authorization}`)
      }
      page.on('request', listen)
      await page.getByRole('button', { name: 'Selected Auth Type: apiKeyHeader' }).first().click()
      // The list selects several schemes at once: choose the bearer token, then leave out the API key.
      await page.getByRole('option', { name: 'bearerAuth', exact: true }).click()
      await page.getByRole('option', { name: 'apiKeyHeader', exact: true }).click()
      await page.keyboard.press('Escape')
      await page.getByRole('button', { name: 'Selected Auth Type: bearerAuth' }).first().waitFor()
      await page.locator('input.scalar-password-input').first().fill(token)
      await page.getByText('Who am I', { exact: true }).first().click()
      await page.getByRole('button', { name: 'Test Request (get /api/v1/user/me)', exact: true }).click()
      await page.getByRole('button', { name: /^Send get request/ }).click()
      await visible(page.getByText('200 OK', { exact: true }))
      await visible(page.getByText('"carlos@rock-legends.com"'))
      // The bearer token alone: the service key the previous test typed on this page is no longer sent.
      expect(sent).toEqual([`undefined Bearer ${token}`])
      await expectNoLeaks(refused)
      page.off('request', listen)
      await page.keyboard.press('Escape')
    },
    TIMEOUT,
  )
})
