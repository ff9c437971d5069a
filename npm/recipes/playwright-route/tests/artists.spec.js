import { BASE, expect, test } from './fixtures.js'

test('lists the seeded legends', async ({ page }) => {
  await page.goto(`${BASE}/app`)
  await expect(page.getByRole('listitem')).toHaveCount(32)
  await expect(page.getByRole('listitem').first()).toHaveText('Luis Alberto Spinetta')
})

test('shows the detail of a 404 problem', async ({ page }) => {
  await page.goto(`${BASE}/app?artist=9999`)
  await expect(page.getByRole('alert')).toHaveText('There is no artist 9999.')
})

test('shows an artist the page wrote with the service key', async ({ page, service }) => {
  await page.goto(`${BASE}/app`)
  const created = await page.evaluate(async (apiKey) => {
    const headers = { 'Content-Type': 'application/json', 'X-API-Key': apiKey }
    const body = JSON.stringify({ name: 'Pescado Rabioso', band: 'Pescado Rabioso' })
    const response = await fetch('/api/v1/artists', { method: 'POST', headers, body })
    return { status: response.status, id: (await response.json()).id }
  }, service.apiKey)
  expect(created).toEqual({ status: 201, id: 33 })
  await page.goto(`${BASE}/app?artist=33`)
  await expect(page.getByRole('heading')).toHaveText('Pescado Rabioso')
})

test('reset() puts the seeded catalogue back', async ({ page, service }) => {
  const created = await service.fetch('/api/v1/artists', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-API-Key': service.apiKey },
    body: JSON.stringify({ name: 'Pescado Rabioso' }),
  })
  expect(created.status).toBe(201)
  await service.reset()
  await page.goto(`${BASE}/app`)
  await expect(page.getByRole('listitem')).toHaveCount(32)
  await expect(page.getByText('Pescado Rabioso')).toHaveCount(0)
})
