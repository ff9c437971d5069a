import { startServer } from 'rock-legends'
import type { TestProject } from 'vitest/node'

// One server for the whole run, started before any test file and stopped after the last.
export default async function setup(project: TestProject) {
  const server = await startServer({ seed: true, fixtures: true })
  project.provide('rockLegends', { url: server.url, apiKey: server.apiKey })
  return () => server.stop()
}

declare module 'vitest' {
  export interface ProvidedContext {
    rockLegends: { url: string; apiKey: string }
  }
}
