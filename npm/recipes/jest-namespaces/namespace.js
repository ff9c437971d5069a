const { connect, createClient } = require('rock-legends')

// The worker's namespace on the one server (`worker-1`, `worker-2`, …), and a client whose requests carry it.
const server = connect({ url: process.env.ROCK_LEGENDS_URL, apiKey: process.env.ROCK_LEGENDS_API_KEY })
const ns = server.namespace(`worker-${process.env.JEST_WORKER_ID}`)
const api = createClient(server.url, { apiKey: server.apiKey, headers: ns.headers })

// Before each test: back to the seeded catalogue, and an empty journal (this worker's: the others' go on).
beforeEach(async () => {
  await ns.reset()
  await ns.clearRequests()
})

module.exports = { api, ns }
