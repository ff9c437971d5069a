/**
 * rock-legends for Node and Bun: start the compiled server as a fixture, or make the service in-process, and talk to
 * it with types.
 */
export { binaryPath } from './binary.js'
export { createClient, ProblemError } from './client.js'
export { createService } from './in-process.js'
export { connect } from './namespace.js'
export { startServer } from './server.js'
