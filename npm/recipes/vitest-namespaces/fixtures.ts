import { type Client, connect, createClient, type Namespace } from 'rock-legends'
import { test as base, inject } from 'vitest'

const server = connect(inject('rockLegends'))

// Each test gets a namespace of its own on the one server (created on first use, dropped after the test), and a
// client whose every request carries it.
export const test = base.extend<{ ns: Namespace; api: Client }>({
  ns: async ({ task }, use) => {
    const ns = server.namespace(`test-${task.id}`)
    await use(ns)
    await ns.drop()
  },
  api: async ({ ns }, use) => {
    await use(createClient(server.url, { apiKey: server.apiKey, headers: ns.headers }))
  },
})
