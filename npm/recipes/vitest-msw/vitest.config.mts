import { defineConfig } from 'vitest/config'

// Component tests: a DOM from jsdom, and Node's own fetch, which MSW intercepts.
export default defineConfig({ test: { environment: 'jsdom' } })
