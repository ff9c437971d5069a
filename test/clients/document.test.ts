/**
 * What generated clients depend on in `/openapi.json`, checked on the document itself (test/clients/generators.test.ts
 * generates the clients): everything the published document names is still there under the same name, every
 * request body and page has a name of its own, and `servers` names the origin each request reached, safely.
 */
import { afterAll, beforeAll, describe, expect, spyOn, test } from 'bun:test'
import { connect } from 'node:net'
import { createApp } from '../../src/app.ts'
import * as generation from '../../src/docs/document.ts'
import type { OpenApiDocument, Schema } from '../../src/docs/shapes.ts'
import { type RunningServer, startServer } from '../../src/server.ts'
import { openMemoryStore } from '../../src/store/document/memory.ts'
import published from '../contract/argentine-rock-legends.openapi.json' with { type: 'json' }
import { servedDocument } from '../support/openapi.ts'

const document = await servedDocument()

const operations = (paths: Record<string, Record<string, unknown>>) =>
  Object.entries(paths).flatMap(([path, item]) =>
    Object.entries(item as Record<string, { operationId: string; tags?: string[] }>).map(([method, operation]) => ({
      path,
      method,
      operationId: operation.operationId,
      tags: operation.tags,
    })),
  )

describe('what the published document names is still there, under the same names', () => {
  test('its tags', () => {
    const ours = document.tags.map((tag) => tag.name)
    for (const tag of published.tags) expect(ours).toContain(tag.name)
  })

  test('each of its operations: the same operationId, method and path, under the same tags only', () => {
    const ours = operations(document.paths)
    for (const operation of operations(published.paths))
      expect(ours.find(({ operationId }) => operationId === operation.operationId)).toEqual(operation)
    // Ours alone go under the same tags or new ones, never under a tag that a published operation left.
    const publishedTags = new Set(published.tags.map((tag) => tag.name))
    for (const { tags } of ours) expect(tags?.length).toBe(1)
    expect(ours.filter(({ tags }) => tags?.some((tag) => !publishedTags.has(tag))).map(({ tags }) => tags)).toEqual([
      ['Events'],
    ])
  })

  test.each(['schemas', 'parameters', 'responses', 'securitySchemes'] as const)('its components: %s', (kind) => {
    const ours = Object.keys(document.components[kind] ?? {})
    expect(ours).toEqual(expect.arrayContaining(Object.keys(published.components[kind])))
  })

  test('Error is Problem, by reference', () => {
    expect(document.components.schemas.Error).toMatchObject({ $ref: '#/components/schemas/Problem' })
  })
})

describe('every request body and every page of a list is a named component', () => {
  const refName = (schema: Schema | undefined) => String(schema?.$ref ?? '').replace('#/components/schemas/', '')

  test('request bodies', () => {
    const bodies = Object.values(document.paths).flatMap((item) =>
      Object.values(item).flatMap(({ operationId, requestBody }) =>
        requestBody ? [{ operationId, keys: Object.keys(requestBody.content['application/json']?.schema ?? {}) }] : [],
      ),
    )
    expect(bodies.length).toBeGreaterThan(5)
    expect(bodies).toEqual(bodies.map(({ operationId }) => ({ operationId, keys: ['$ref'] })))
    expect(refName(document.paths['/api/v1/user/signup']?.post?.requestBody?.content['application/json']?.schema)).toBe(
      'NewUser',
    )
  })

  test('every JSON answer of a success, pages included', () => {
    for (const item of Object.values(document.paths))
      for (const operation of Object.values(item))
        for (const [status, response] of Object.entries(operation.responses)) {
          const schema = response.content?.['application/json']?.schema
          if (status.startsWith('2') && schema)
            expect([operation.operationId, Object.keys(schema)]).toEqual([operation.operationId, ['$ref']])
        }
  })

  test('pages are `{ data, meta }` with one PageMeta, and each is a PaginatedResource', () => {
    const page = document.components.schemas.ArtistPage as Schema
    expect(page).toMatchObject({
      type: 'object',
      required: ['data', 'meta'],
      properties: {
        data: { type: 'array', items: { $ref: '#/components/schemas/Artist' } },
        meta: { $ref: '#/components/schemas/PageMeta' },
      },
    })
    expect(document.components.schemas.PaginatedResource).toMatchObject({
      properties: { meta: { $ref: '#/components/schemas/PageMeta' } },
    })
    const pages = Object.keys(document.components.schemas).filter((name) => name.endsWith('Page'))
    expect(pages.sort()).toEqual(['AlbumPage', 'ApiKeyPage', 'ArtistChangePage', 'ArtistPage'])
  })

  test('no two components are the same schema under two names', () => {
    const entries = Object.entries(document.components.schemas).filter(([name]) => name !== 'Error')
    const same = entries.flatMap(([name, schema], index) =>
      entries
        .slice(index + 1)
        .flatMap(([other, candidate]) => (Bun.deepEquals(schema, candidate) ? [[name, other]] : [])),
    )
    expect(same).toEqual([])
  })
})

describe('servers: the origin each request reached', () => {
  let server: RunningServer
  let port: number
  beforeAll(async () => {
    server = await startServer({ seed: false })
    port = Number(new URL(server.url).port)
  })
  afterAll(() => server.stop())

  /** `GET /openapi.json` over a socket of its own, with `Host` as given: the status, and the servers it names. */
  function withHost(host: string): Promise<{ status: number; servers?: unknown }> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () =>
        socket.write(`GET /openapi.json HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`),
      )
      const chunks: Buffer[] = []
      socket.on('data', (chunk: Buffer) => chunks.push(chunk))
      socket.on('error', reject)
      socket.on('end', () => {
        const text = Buffer.concat(chunks).toString()
        const status = Number(text.split(' ')[1])
        const body = text.slice(text.indexOf('\r\n\r\n') + 4)
        resolve(status === 200 ? { status, servers: (JSON.parse(body) as OpenApiDocument).servers } : { status })
      })
    })
  }

  test('is absolute, from the origin the client used', async () => {
    for (const origin of [server.url, `http://localhost:${port}`]) {
      const fetched = (await (await fetch(`${origin}/openapi.json`)).json()) as OpenApiDocument
      expect(fetched.servers).toEqual([{ url: origin, description: 'This server' }])
    }
    expect(await withHost(`EXAMPLE.org:${port}`)).toEqual({
      status: 200,
      servers: [{ url: `http://example.org:${port}`, description: 'This server' }],
    })
    expect((await withHost('[::1]:8080')).servers).toEqual([{ url: 'http://[::1]:8080', description: 'This server' }])
  })

  // Bun refuses most of these before any route; whatever reaches the route gives the relative `/`.
  test.each([
    'evil.example"},{"url":"https://evil.example',
    'a b',
    'user@evil.example',
    'evil.example/path',
    'evil.example:99999',
    '-evil.example',
    'evil..example',
    'évil.example',
    `${'a'.repeat(300)}.example`,
  ])('a Host that is not a plain name or address (%s) puts nothing of it in the document', async (host) => {
    const answer = await withHost(host)
    if (answer.status === 200) expect(answer.servers).toEqual([{ url: '/', description: 'This server' }])
    else expect(answer.status).toBe(400)
  })

  test('is spliced into the document built once: nothing is kept per origin', async () => {
    const build = spyOn(generation, 'buildDocument')
    const app = createApp({ store: openMemoryStore() })
    const texts = await Promise.all(
      Array.from({ length: 50 }, (_, index) =>
        app
          .handle(new Request(`http://host-${index}.example:${1000 + index}/openapi.json`))
          .then((answer) => answer.text()),
      ),
    )
    expect(build).toHaveBeenCalledTimes(1)
    build.mockRestore()
    const [first, second] = texts.map((text) => JSON.parse(text) as OpenApiDocument)
    expect(first?.servers).toEqual([{ url: 'http://host-0.example:1000', description: 'This server' }])
    expect({ ...second, servers: first?.servers }).toEqual(first as OpenApiDocument)
  })

  test('originOf keeps the scheme, host and port only', () => {
    expect(generation.originOf('https://api.example:8443/openapi.json?x=1')).toBe('https://api.example:8443')
    expect(generation.originOf('http://Example.COM:80/openapi.json')).toBe('http://example.com')
    expect(generation.originOf('http://my_service:3000/openapi.json')).toBe('http://my_service:3000')
    expect(generation.originOf('http://user:pass@example.com/openapi.json')).toBe('http://example.com')
    expect(generation.originOf('file:///openapi.json')).toBe('/')
    expect(generation.originOf('not a url')).toBe('/')
  })
})
