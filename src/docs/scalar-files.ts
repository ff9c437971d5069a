// Scalar's standalone bundle and version as the repository's own install holds them, for src/docs/scalar.ts. A file
// import needs a path Bun sees while bundling, so that the executable embeds the file; the bundle is not among the
// package's exports, so the path names it in node_modules, where `bun install` in a clone puts it.
import bundle from '../../node_modules/@scalar/api-reference/dist/browser/standalone.js' with { type: 'file' }
import scalar from '../../node_modules/@scalar/api-reference/package.json' with { type: 'json' }

/** The path of the bundle: in the executable, the file embedded in it. */
export const path: string = bundle

/** The version of Scalar API Reference the bundle is. */
export const version: string = scalar.version
