import { test as base } from '@playwright/test'
import { startServer } from 'rock-legends'

export { expect } from '@playwright/test'

export const test = base.extend({
  // One server per worker, reset before each test; `request` and `page` then use it as their baseURL.
  rockLegends: [
    async ({}, use) => {
      const server = await startServer({ seed: true, allowReset: true })
      await use(server)
      await server.stop()
    },
    { scope: 'worker' },
  ],
  baseURL: async ({ rockLegends }, use) => {
    await rockLegends.reset()
    await use(rockLegends.url)
  },
})
