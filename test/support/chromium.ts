import { existsSync } from 'node:fs'
import { type Browser, chromium, type Locator } from 'playwright-core'

/**
 * Debian's Chromium, headless: the `chromium-headless-shell` package (installed by .ci/run), the same Chromium build
 * as the `chromium` package without the desktop browser around it, as Playwright itself runs headless tests. It does
 * the browser tests' work with two thirds of the CPU time of `chromium --headless` (117.6 s against 79.9 s for the
 * five browser files, one after another, on the 2-core machine of docs/development.md), and starts in 0.5 s of CPU
 * against 1.5 s. Where only the `chromium` package is installed, that is used instead. playwright-core only drives
 * it and never downloads a browser.
 */
export const CHROMIUM =
  ['/usr/bin/chromium-headless-shell', '/usr/bin/chromium'].find(existsSync) ?? '/usr/bin/chromium-headless-shell'

/** The flags the browser tests start it with: headless, and nothing that reaches out on its own. */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
]

/**
 * How long one browser test may take: a few seconds alone, but Chromium gets a fraction of a core while the rest of
 * the run (its other worker, the contract suite over PostgreSQL, their servers) shares a 2-core machine, and the
 * longest test (two sign-ups, three tabs, live updates) once took more than a minute there.
 */
export const BROWSER_TEST_TIMEOUT = 120_000

/** Host names of this machine: requests elsewhere are blocked and counted by the browser tests. */
export const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]'])

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
