import { defineConfig } from '@playwright/test'

// One server for the whole run, started before the workers and stopped after them; each worker works in a
// namespace of its own on it (tests/fixtures.js).
export default defineConfig({
  testDir: './tests',
  fullyParallel: true,
  workers: 3,
  webServer: {
    command: 'npx rock-legends --port 4010 --data :memory: --seed --fixtures --api-key test-key --log off',
    url: 'http://127.0.0.1:4010/healthz',
  },
  use: { baseURL: 'http://127.0.0.1:4010' },
})
