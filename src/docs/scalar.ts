import { dirname, join } from 'node:path'
import type { EmbeddedAsset } from '../http/embedded-assets.ts'
import { sizedResponse } from '../http/sized-response.ts'
import { NotFoundError } from '../model/errors.ts'

/**
 * Where Scalar's standalone bundle is, and its version. The executable, and a run from a clone, take them from the
 * repository's own install by path (src/docs/scalar-files.ts), which is what lets the build embed the bundle. Installed
 * as a dependency (`bun add`, by path, git URL or tarball), Scalar sits where the package manager put it, hoisted
 * beside this package as a rule: that path then names nothing and the module fails to load, so Scalar is found as any
 * dependency is, through its manifest (`package.json` resolves whatever a package's exports list; they do not list
 * the bundle). The npm package's in-process service leaves the 4 MB bundle out: there `/docs` is served only where
 * the project installed `@scalar/api-reference` itself, and is otherwise a 404 naming `/openapi.json`.
 */
function installedScalar(): { path: string; version: string } | undefined {
  try {
    return require('./scalar-files.ts')
  } catch {
    try {
      const manifest = require.resolve('@scalar/api-reference/package.json')
      return { path: join(dirname(manifest), 'dist/browser/standalone.js'), version: require(manifest).version }
    } catch {
      return undefined
    }
  }
}

const scalar = installedScalar()

/** The version of Scalar API Reference embedded, in its assets' names so that browsers may cache them for good. */
export const SCALAR_VERSION = scalar?.version

const BUNDLE = `scalar-api-reference-${SCALAR_VERSION}.js`
const INIT = 'docs.js'

// Everything that would reach beyond this server is switched off: the fonts from fonts.scalar.com (system fonts
// instead), the request proxy at proxy.scalar.com, the AI agent, MCP, telemetry and the developer toolbar.
const configuration = {
  url: '/openapi.json',
  withDefaultFonts: false,
  proxyUrl: '',
  telemetry: false,
  agent: { disabled: true },
  mcp: { disabled: true },
  showDeveloperTools: 'never',
  hideClientButton: true,
  persistAuth: false,
  defaultOpenAllTags: true,
  documentDownloadType: 'json',
  authentication: { preferredSecurityScheme: 'apiKeyHeader' },
  metaData: { title: 'Rock Legends API' },
}

const init = `Scalar.createApiReference('#app', ${JSON.stringify(configuration)})\n`

const page = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Rock Legends API</title>
<link rel="icon" href="data:,">
</head>
<body>
<nav style="font: 14px system-ui, sans-serif; padding: 8px 16px; border-bottom: 1px solid #8884">
<a href="/">← Rock Legends catalogue</a> · <a href="/openapi.json">openapi.json</a>
</nav>
<div id="app"></div>
<script src="/docs/assets/${BUNDLE}"></script>
<script src="/docs/assets/${INIT}"></script>
</body>
</html>
`

// The browser itself refuses anything from elsewhere, should a future bundle try: a second guarantee besides the
// configuration above. Scalar adds its styles inline.
const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "worker-src 'self' blob:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ')

const JAVASCRIPT = 'text/javascript; charset=utf-8'

/** The interactive documentation page at `/docs`; 404 where Scalar's bundle is not there to serve. */
export const docsPage = () => {
  if (!scalar)
    throw new NotFoundError(
      "The API reference page needs Scalar's bundle, which this build leaves out: /openapi.json describes the API.",
    )
  return sizedResponse(page, {
    headers: {
      'content-type': 'text/html; charset=utf-8',
      'content-security-policy': CSP,
      'cache-control': 'no-cache',
    },
  })
}

/**
 * The page's assets by file name, served from the executable itself. A Map, not an object: a name from the URL such
 * as `constructor` or `__proto__` must find nothing, not a property every object inherits.
 */
export const docsAssets: ReadonlyMap<string, EmbeddedAsset> = new Map(
  scalar && [
    // The bundle's name carries its version, so a new version is a new URL and this one may be cached for good.
    [
      BUNDLE,
      {
        name: BUNDLE,
        source: { path: scalar.path },
        headers: { 'content-type': JAVASCRIPT, 'cache-control': 'public, max-age=31536000, immutable' },
      },
    ],
    [
      INIT,
      { name: INIT, source: { text: init }, headers: { 'content-type': JAVASCRIPT, 'cache-control': 'no-cache' } },
    ],
  ],
)
