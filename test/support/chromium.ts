import { existsSync } from 'node:fs'
import { type Browser, type BrowserContext, chromium, type Locator } from 'playwright-core'

/**
 * Debian's Chromium, headless: the `chromium-headless-shell` package (installed by .ci/run), the same Chromium build
 * as the `chromium` package without the desktop browser around it, as Playwright itself runs headless tests. It does
 * the browser tests' work with two thirds of the CPU time of `chromium --headless`, and starts in 0.5 s of CPU
 * against 1.5 s. Where only the `chromium` package is installed, that is used instead. playwright-core only drives
 * it and never downloads a browser.
 */
export const CHROMIUM =
  ['/usr/bin/chromium-headless-shell', '/usr/bin/chromium'].find(existsSync) ?? '/usr/bin/chromium-headless-shell'

/**
 * Every host name and address but this machine's resolves to nothing, in the browser's own network stack: a request
 * for anything elsewhere, from a page, a worker or a service worker, by name or by IP address (v4 or v6), fails with
 * `net::ERR_NAME_NOT_RESOLVED` before any packet (or DNS query) leaves. {@link listOutside} lists such requests.
 */
export const ONLY_THIS_MACHINE =
  '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1, EXCLUDE [::1]'

/** The flags the browser tests start it with: headless, nothing that reaches out on its own, nowhere to reach. */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  ONLY_THIS_MACHINE,
]

/**
 * How long one browser test may take: a few seconds alone, but Chromium gets a fraction of a core while the rest of
 * the run (its other worker, the contract suite over PostgreSQL, their servers) shares a 2-core machine, and the
 * longest test (two sign-ups, three tabs, live updates) can take more than a minute there.
 */
export const BROWSER_TEST_TIMEOUT = 120_000

/** Host names of this machine: requests elsewhere cannot leave ({@link ONLY_THIS_MACHINE}) and are listed. */
export const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]'])

/** Whether a request for `url` would leave this machine (`data:` and `blob:` URLs never do). */
export const leavesMachine = (url: URL) =>
  url.protocol !== 'data:' && url.protocol !== 'blob:' && !LOOPBACK.has(url.hostname)

/**
 * Lists in `outside` every request of `context` (its pages, their workers, its service workers) for anything beyond
 * this machine; {@link ONLY_THIS_MACHINE} already makes each fail. Listening to the `request` event costs next to
 * nothing, where routing every request (`context.route`, as these tests did before) paused each one for a round trip
 * to the test process and turned the browser's HTTP cache off.
 */
export function listOutside(context: BrowserContext, outside: string[]): void {
  context.on('request', (request) => {
    const url = new URL(request.url())
    if (leavesMachine(url)) outside.push(url.href)
  })
}

/** True when there is no browser here; says so once, unless under CI, where `requireChromium` then fails. */
export function chromiumMissing(what: string): boolean {
  const missing = !existsSync(CHROMIUM)
  if (missing && process.env.CI !== 'true')
    console.warn(
      `\n!!! SKIPPING ${what}: ${CHROMIUM} is not installed (apt-get install -y chromium-headless-shell). In CI this fails.\n`,
    )
  return missing
}

/** In CI a missing browser is a failure, not a reason to skip. */
export function requireChromium(): void {
  if (!existsSync(CHROMIUM))
    throw new Error(`${CHROMIUM} is not installed: .ci/run installs Debian's chromium-headless-shell package.`)
}

/** Debian's Chromium, started headless with {@link CHROMIUM_ARGS}. */
export const launchChromium = (): Promise<Browser> => chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS })

/** Waits until `locator` is shown (bun's `expect` does not know Playwright's locators); throws after 10 s. */
export const visible = (locator: Locator) => locator.first().waitFor({ state: 'visible', timeout: 10_000 })
