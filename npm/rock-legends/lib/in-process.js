/**
 * `createService(options)`: the whole service in-process, answering Web Requests with no port and no child process
 * (src/service.ts, bundled for Node into `service.cjs` when the package is packed). Loaded on first use: a suite that
 * only starts servers never reads its megabyte.
 */
import { loadService } from './load-service.js'

export async function createService(options) {
  const service = await loadService()
  return service.createService(options)
}
