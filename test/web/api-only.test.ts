import { describe, expect, test } from 'bun:test'
import { createApp } from '../../src/app.ts'
import { parseArgs, USAGE } from '../../src/config.ts'
import { openMemoryStore } from '../../src/store/document/memory.ts'
import { API_INDEX } from '../../src/web/entry-points.ts'

// What a browser asks for: a page first, anything else at a lower weight.
const BROWSER = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' }

function app(ui: boolean) {
  const handle = createApp({ store: openMemoryStore(), ui })
  return (path: string) => handle.handle(new Request(`http://localhost${path}`, { headers: BROWSER }))
}

describe('--no-ui: the API only', () => {
  test('/ answers a JSON index of the API', async () => {
    const response = await app(false)('/')
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toBe('application/json')
    expect(response.headers.get('x-content-type-options')).toBe('nosniff')
    const index = await response.json()
    expect(index).toEqual(API_INDEX)
    expect(index).toMatchObject({ api: '/api/v1', docs: '/docs', openapi: '/openapi.json' })
  })

  test('every entry point of the index answers', async () => {
    const get = app(false)
    for (const path of Object.values(API_INDEX).filter((value) => value.startsWith('/')))
      expect({ path, status: (await get(path)).status }).toEqual({ path, status: path === '/api/v1' ? 404 : 200 })
  })

  test.each(['/artists/1', '/login', '/signup'])('%s is a 404 problem', async (path) => {
    const response = await app(false)(path)
    expect(response.status).toBe(404)
    expect(response.headers.get('content-type')).toBe('application/problem+json')
  })

  test.each(['/favicon.ico', '/problems/conflict'])('%s stays', async (path) => {
    expect((await app(false)(path)).status).toBe(200)
  })

  test('with the pages on, / is the catalogue page', async () => {
    const response = await app(true)('/')
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8')
  })
})

describe('the --no-ui flag and ROCK_LEGENDS_NO_UI', () => {
  const ui = (argv: string[], env: Record<string, string> = {}) => {
    const invocation = parseArgs(argv, env)
    if (invocation.action !== 'run') throw new Error('expected a run')
    return invocation.config.ui
  }

  test.each([
    ['nothing: pages on', [], {}, true],
    ['--no-ui', ['--no-ui'], {}, false],
    ['ROCK_LEGENDS_NO_UI=true', [], { ROCK_LEGENDS_NO_UI: 'true' }, false],
    ['ROCK_LEGENDS_NO_UI=1', [], { ROCK_LEGENDS_NO_UI: '1' }, false],
    ['ROCK_LEGENDS_NO_UI=0', [], { ROCK_LEGENDS_NO_UI: '0' }, true],
    ['ROCK_LEGENDS_NO_UI empty', [], { ROCK_LEGENDS_NO_UI: '' }, true],
  ] as const)('%s', (_, argv, env, expected) => {
    expect(ui([...argv], env)).toBe(expected)
  })

  test('takes no value, and a bad variable is a usage error', () => {
    expect(() => ui(['--no-ui=yes'])).toThrow('--no-ui takes no value')
    expect(() => ui([], { ROCK_LEGENDS_NO_UI: 'maybe' })).toThrow('ROCK_LEGENDS_NO_UI must be true or false')
  })

  test('is in the usage text', () => {
    expect(USAGE).toContain('--no-ui')
    expect(USAGE).toContain('ROCK_LEGENDS_NO_UI')
  })
})
