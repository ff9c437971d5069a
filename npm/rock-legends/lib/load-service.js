/**
 * The bundled service, one CommonJS file, from the ES module entry (the CommonJS entry uses load-service.cjs). It is
 * loaded with `require`: `import` of a CommonJS file first scans all of it for the names it exports, which for a
 * megabyte costs more than loading it.
 */
import { createRequire } from 'node:module'

export async function loadService() {
  try {
    return createRequire(import.meta.url)('./service.cjs')
  } catch (error) {
    if (error?.code !== 'MODULE_NOT_FOUND' || !String(error.message).includes('service.cjs')) throw error
    throw new Error(
      'createService needs lib/service.cjs, which `bun run pack` bundles into the package: from a clone of the repository, import createService from its src/index.ts',
    )
  }
}
