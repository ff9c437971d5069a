/**
 * A client whose base URL ends in `/` sends `//api/v1/…` (generated clients do): such a path, matching no route, is
 * answered 308 to the path it meant, so the request is sent again there, method and body kept. Through a real server
 * and `fetch`, as such a client does.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createApp } from '../../src/app.ts'
import { collapsedTarget } from '../../src/http/request-target.ts'
import { type RunningServer, startServer } from '../../src/index.ts'
import { openMemoryStore } from '../../src/store/document/memory.ts'

const KEY = 'slashes-test-key'
let server: RunningServer

beforeAll(async () => {
  server = await startServer({ seed: true, apiKeys: [KEY] })
})
afterAll(() => server?.stop())

describe('collapsedTarget', () => {
  test.each([
    ['http://h//api/v1/artists/1', '/api/v1/artists/1'],
    ['http://h/api//v1///artists?q=a//b', '/api/v1/artists?q=a//b'],
    ['http://h//', '/'],
    ['http://h//evil.example/x', '/evil.example/x'],
    ['http://h/api/v1/artists', undefined],
    ['/api//v1', undefined],
  ])('%s → %s', (url, meant) => {
    expect(collapsedTarget(url)).toBe(meant as string | undefined)
  })
})

describe('a path with a repeated slash', () => {
  test('is answered 308 to the path it meant, query kept, with no body', async () => {
    const app = createApp({ store: openMemoryStore() })
    const answer = await app.handle(new Request('http://localhost//api/v1/artists?limit=2'))
    expect(answer.status).toBe(308)
    expect(answer.headers.get('location')).toBe('/api/v1/artists?limit=2')
    expect(answer.headers.get('x-content-type-options')).toBe('nosniff')
    expect(await answer.text()).toBe('')
  })

  test('reads through a base URL ending in / work, over real HTTP', async () => {
    const base = `${server.url}/`
    const list = await fetch(`${base}/api/v1/artists?limit=1`)
    expect(list.status).toBe(200)
    expect(((await list.json()) as { meta: { limit: number } }).meta.limit).toBe(1)
    const one = await fetch(`${base}/api/v1/artists/2`)
    expect(one.status).toBe(200)
    expect(((await one.json()) as { name: string }).name).toBe('Charly García')
  })

  test('a write is sent again with its method, credentials and body, and is made once', async () => {
    const before = ((await (await fetch(`${server.url}/api/v1/artists?limit=1`)).json()) as { meta: { total: number } })
      .meta.total
    const answer = await fetch(`${server.url}//api/v1/artists`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': KEY },
      body: JSON.stringify({ name: 'Celeste Carballo' }),
    })
    expect(answer.status).toBe(201)
    expect(((await answer.json()) as { name: string }).name).toBe('Celeste Carballo')
    const after = ((await (await fetch(`${server.url}/api/v1/artists?limit=1`)).json()) as { meta: { total: number } })
      .meta.total
    expect(after).toBe(before + 1)
  })

  test('an unknown path stays unknown once its slashes are one: 308, then 404', async () => {
    const answer = await fetch(`${server.url}//nowhere//at-all`)
    expect(answer.status).toBe(404)
    expect(new URL(answer.url).pathname).toBe('/nowhere/at-all')
  })
})
