/** The package's library entry: build the app in-process, or start a whole server, and talk to it with types. */
// The types of the files the pages embed, for a project whose TypeScript checks these sources as its dependency's: its
// `include` does not reach them, and without them tsc finds no types for `import css from './pages.css'`.
/// <reference path="./web/embedded-files.d.ts" />

// The npm package's client and fixture handles, the same functions: code written against `npm install rock-legends`
// runs unchanged against this package (docs/testing-with-rock-legends.md).
export {
  type Client,
  type ClientOptions,
  type ConnectedServer,
  connect,
  createClient,
  type Namespace,
  type Problem,
  ProblemError,
} from '../npm/rock-legends/lib/index.js'
export { type App, type AppOptions, createApp } from './app.ts'
export { captureStartState, type Reset } from './fixtures/reset.ts'
export { checkHealth, type Health } from './healthcheck.ts'
export type { Album } from './model/album.ts'
export type { Artist } from './model/artist.ts'
// `Snapshot` too: embedders' code that names what `snapshot()` answers by that name keeps compiling.
export type { StoreDocument as Snapshot, StoreDocument } from './model/store-document.ts'
export { type RunningServer, type ServerOptions, type StartOptions, startServer } from './server.ts'
export { createService, type PasswordMode, type Service, type ServiceOptions } from './service.ts'
export { openMemoryStore } from './store/document/memory.ts'
export { openJsonFileStore } from './store/json-file/json-file.ts'
export type { Store } from './store/store.ts'
export type { CertificatePair, CertificateSource } from './tls/certificates.ts'
export { createTypedClient, type TypedClient } from './typed-client.ts'
