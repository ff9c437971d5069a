/**
 * The bundled service (one CommonJS file, which `import` loads as its default export), from the ES module entry; the
 * CommonJS entry uses load-service.cjs.
 */
export async function loadService() {
  try {
    return (await import('./service.cjs')).default
  } catch (error) {
    if (error?.code !== 'ERR_MODULE_NOT_FOUND' || !String(error.message).includes('service.cjs')) throw error
    throw new Error(
      'createService needs lib/service.cjs, which `bun run pack` bundles into the package: from a clone of the repository, import createService from its src/index.ts',
    )
  }
}
