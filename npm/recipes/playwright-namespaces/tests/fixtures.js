import { test as base, expect } from '@playwright/test'

export { expect }

/** The service key the server was started with (playwright.config.js): it may write, and reset a namespace. */
export const API_KEY = 'test-key'

export const test = base.extend({
  // The worker's namespace: `worker-0`, `worker-1`, … (one per worker running at once).
  namespace: [async ({}, use, workerInfo) => use(`worker-${workerInfo.parallelIndex}`), { scope: 'worker' }],
  // Every request and page of the worker's tests carries it.
  extraHTTPHeaders: async ({ namespace }, use) => use({ 'Rock-Legends-Namespace': namespace }),
  // Back to the seeded catalogue before each test: the worker's namespace only, the others' go on.
  resetNamespace: [
    async ({ request }, use) => {
      const reset = await request.post('/__admin/reset', { headers: { 'X-API-Key': API_KEY } })
      expect(reset.status()).toBe(204)
      await use()
    },
    { auto: true },
  ],
})
