import { API_KEY, expect, test } from './fixtures.js'

test('the pages show the worker’s own catalogue', async ({ page, request, namespace }) => {
  await request.post('/api/v1/artists', { headers: { 'X-API-Key': API_KEY }, data: { name: `Solo en ${namespace}` } })
  await page.goto('/?page=3')
  await expect(page.getByText('33 artists; showing 25–33.')).toBeVisible()
  await expect(page.getByRole('link', { name: `Solo en ${namespace}` })).toBeVisible()
  await expect(page.getByRole('link', { name: /^Solo en worker-/ })).toHaveCount(1)
})
