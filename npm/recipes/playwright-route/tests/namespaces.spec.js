import { test as base } from '@playwright/test'
import { createService } from 'rock-legends'
import { BASE, expect, routeApp } from './fixtures.js'

// With fixtures: a namespace per test, with its own catalogue, journal and faults; the route puts requests in it.
const test = base.extend({
  service: [
    async ({}, use) => {
      const service = await createService({ seed: true, fixtures: true })
      await use(service)
      await service.close()
    },
    { scope: 'worker' },
  ],
  ns: async ({ service }, use, testInfo) => {
    const ns = service.namespace(`test-${testInfo.testId}`)
    await use(ns)
    await ns.drop()
  },
  page: async ({ page, service, ns }, use) => {
    await routeApp(page, service, ns.headers)
    await use(page)
  },
})

test('shows the catalogue the test loaded', async ({ page, ns }) => {
  await ns.load({ artists: [{ name: 'Moris', band: 'Los Beatniks', albums: [] }] })
  await page.goto(`${BASE}/app`)
  await expect(page.getByRole('listitem')).toHaveText(['Moris'])
})

test('shows the problem of a 503, and the request is in the journal', async ({ page, ns }) => {
  await ns.fault({ method: 'GET', path: '/api/v1/artists', status: 503 })
  await page.goto(`${BASE}/app`)
  await expect(page.getByRole('alert')).toHaveText(/^Fault \d+, armed .* with 503/)
  expect(await ns.requests()).toMatchObject([{ method: 'GET', path: '/api/v1/artists', status: 503 }])
})
