import { defineConfig } from 'vitest/config'

export default defineConfig({
  // Vitest's own files only: Playwright's (tests/*.spec.js), in the same project, are not Vitest tests.
  test: { include: ['**/*.test.ts'], globalSetup: './global-setup.ts' },
})
