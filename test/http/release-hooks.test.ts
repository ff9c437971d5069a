import { afterAll, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import pkg from '../../package.json' with { type: 'json' }
import { createApp } from '../../src/app.ts'
import { Metrics } from '../../src/metrics/metrics.ts'
import { openMemoryStore } from '../../src/store/document/memory.ts'
import { removeDir, tempDir } from '../support/binary.ts'

// Elysia decides from the text of each transform hook (and of a few other kinds) whether a route must await it: a
// hook whose text looks like it returns a call, such as the minified arrow `({set})=>{set.x??=performance.now()}`, is
// awaited on every request, a trip through the microtask queue. The release build minifies (package.json `build`),
// so a hook can compile one way in tests and another in the executable. Here src/app.ts is bundled with the
// build's own minify flags and each route's compiled handler is read: the release build must await no transform
// hook that the source does not, and the hottest read (GET one artist) must await no hook at all before its answer.

const ROOT = join(import.meta.dir, '..', '..')
const BUILD = pkg.scripts.build
const dir = tempDir('rock-legends-release-hooks-')
afterAll(() => removeDir(dir))

type CreateApp = typeof createApp
type AnyRoute = { method: string; path: string; compile(): unknown }

/** `src/app.ts` and `src/metrics/metrics.ts` bundled as the release build minifies them (once). */
let bundled: Promise<{ createApp: CreateApp; Metrics: typeof Metrics }> | undefined
const releaseModules = () => {
  bundled ??= bundle()
  return bundled
}

async function bundle(): Promise<{ createApp: CreateApp; Metrics: typeof Metrics }> {
  const built = await Bun.build({
    entrypoints: [join(ROOT, 'src/app.ts'), join(ROOT, 'src/metrics/metrics.ts')],
    outdir: dir,
    root: join(ROOT, 'src'),
    target: 'bun',
    format: 'esm',
    splitting: BUILD.includes('--splitting'),
    minify: { syntax: BUILD.includes('--minify-syntax'), whitespace: BUILD.includes('--minify-whitespace') },
  })
  if (!built.success) throw new AggregateError(built.logs, 'the bundle failed')
  const app = await import(join(dir, 'app.js'))
  const metrics = await import(join(dir, 'metrics', 'metrics.js'))
  return { createApp: app.createApp, Metrics: metrics.Metrics }
}

/** Each route's compiled handler, by method and path. */
function compiled(app: { routes: unknown[] }): Map<string, string> {
  const handlers = new Map<string, string>()
  for (const route of app.routes as AnyRoute[]) handlers.set(`${route.method} ${route.path}`, String(route.compile()))
  return handlers
}

const awaitedTransforms = (handler: string) => handler.match(/await e\.transform\[\d+\]/g) ?? []

describe('the release build compiles the per-request hooks as the source does', () => {
  const CONFIGURATIONS: [string, { log: boolean; metrics: boolean }][] = [
    ['the access log (the default)', { log: true, metrics: false }],
    ['--metrics with --log off', { log: false, metrics: true }],
    ['the access log and --metrics', { log: true, metrics: true }],
  ]

  test.each(CONFIGURATIONS)('%s: no transform hook is awaited that the source does not await', async (_, options) => {
    const release = await releaseModules()
    const store = openMemoryStore()
    const accessLog = options.log ? () => {} : undefined
    const source = compiled(createApp({ store, accessLog, metrics: options.metrics ? new Metrics() : undefined }))
    const minified = compiled(
      release.createApp({ store, accessLog, metrics: options.metrics ? new release.Metrics() : undefined }),
    )
    expect([...minified.keys()]).toEqual([...source.keys()])
    for (const [route, handler] of minified)
      expect(awaitedTransforms(handler), route).toEqual(awaitedTransforms(source.get(route) as string))
    // GET one artist awaits its handler and nothing else before its answer (the error branch may await).
    const read = minified.get('GET /api/v1/artists/:artistId') as string
    const answered = read.slice(0, read.indexOf('}catch(error)'))
    expect(answered.match(/await [^\n]*/g)).toEqual(['await handler(c)'])
  })

  test('--cors and --read-only: their hooks before routing are not awaited', async () => {
    const release = await releaseModules()
    const store = openMemoryStore()
    const options = { store, cors: ['https://app.example'], readOnly: true, accessLog: () => {} }
    const calls = (app: { compile(): unknown; fetch: unknown }) => {
      app.compile()
      return String(app.fetch).match(/[^\n]*onRequest\[\d+\][^\n]*/g)
    }
    const source = calls(createApp(options))
    expect(source).toEqual(['try{re=mapEarlyResponse(onRequest[0](c),c.set)', 'onRequest[1](c)'])
    expect(calls(release.createApp(options))).toEqual(source)
  })
})
