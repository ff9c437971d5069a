const { startServer } = require('rock-legends')

// One server for the whole run, started before the workers, which find it through the environment.
module.exports = async () => {
  const server = await startServer({ seed: true, fixtures: true })
  process.env.ROCK_LEGENDS_URL = server.url
  process.env.ROCK_LEGENDS_API_KEY = server.apiKey
  globalThis.rockLegends = server // for global-teardown.js, which runs in this process
}
