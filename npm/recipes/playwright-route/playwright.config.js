import { defineConfig } from '@playwright/test'

// No webServer: the page and its API are both answered in the test process (tests/fixtures.js).
export default defineConfig({ testDir: './tests' })
