/** The package's library entry: build the app in-process, or start a whole server. */
export { type App, type AppOptions, createApp } from './app.ts'
export { type RunningServer, type ServerOptions, startServer } from './server.ts'
export { openJsonFileStore } from './store/json-file.ts'
export { openMemoryStore } from './store/memory.ts'
export type { Album, Artist, Store } from './store/store.ts'
