/** The package's library entry: build the app in-process, or start a whole server, and talk to it with types. */
export { captureStartState, type Reset } from './admin/reset.ts'
export { type App, type AppOptions, createApp } from './app.ts'
export { type Client, createClient } from './client.ts'
export { checkHealth, type Health } from './healthcheck.ts'
export { type RunningServer, type ServerOptions, startServer } from './server.ts'
export { openMemoryStore } from './store/document/memory.ts'
export { openJsonFileStore } from './store/json-file/json-file.ts'
export type { Album, Artist, Snapshot, Store } from './store/store.ts'
