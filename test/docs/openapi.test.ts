import { describe, expect, spyOn, test } from 'bun:test'
import { Validator } from '@seriousme/openapi-schema-validator'
import Ajv2020 from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'
import { createApp } from '../../src/app.ts'
import * as generation from '../../src/docs/document.ts'
import { integerBounds } from '../../src/docs/parameters.ts'
import type { Operation, Schema } from '../../src/docs/shapes.ts'
import { INT64_MAX, integerRangePattern } from '../../src/http/integer-param.ts'
import { openMemoryStore } from '../../src/store/document/memory.ts'
import { CARLOS } from '../accounts/helpers.ts'
import { testApp } from '../helpers.ts'
import { servedDocument } from '../support/openapi.ts'

const document = await servedDocument()
const operations = Object.entries(document.paths).flatMap(([path, item]) =>
  Object.entries(item).map(([method, operation]): [string, string, Operation] => [method, path, operation]),
)
const byId = (id: string) => operations.find(([, , operation]) => operation.operationId === id)?.[2] as Operation

// The document's own schemas, with its `#/components/…` references resolving.
const ajv = new Ajv2020({ strict: false })
addFormats(ajv)
ajv.addSchema(document as object, 'doc')
const schemaValidator = (schema: Schema) => ajv.compile({ $id: `check-${Math.random()}`, ...refsInto(schema) })
const refsInto = (schema: Schema): Schema =>
  JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"doc#/components/'))

describe('GET /openapi.json', () => {
  test('is OpenAPI 3.1 that a maintained validator accepts', async () => {
    const validator = new Validator()
    expect(await validator.validate(structuredClone(document) as unknown as Record<string, unknown>)).toEqual({
      valid: true,
    })
    expect(validator.version).toBe('3.1')
  })

  test('is built once per app and served as built', async () => {
    const build = spyOn(generation, 'buildDocument')
    const app = createApp({ store: openMemoryStore() })
    const get = () => app.handle(new Request('http://localhost/openapi.json'))
    const first = await get()
    const second = await get()
    expect(first.headers.get('content-type')).toBe('application/json')
    expect(await second.text()).toBe(await first.text())
    expect(build).toHaveBeenCalledTimes(1)
    build.mockRestore()
  })

  test('describes the API, its tags, its credentials, and the origin it was fetched from as its server', () => {
    expect(document.info.description.length).toBeGreaterThan(200)
    // The published document's tags (test/clients/document.test.ts), and Events.
    expect(document.tags.map((tag) => tag.name)).toEqual(['Artists', 'Events', 'Authentication'])
    expect(document.servers).toEqual([{ url: 'http://localhost', description: 'This server' }])
    expect(document.components.securitySchemes).toMatchObject({
      bearerAuth: { type: 'http', scheme: 'bearer' },
      apiKeyHeader: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
    })
  })

  test('gives every operation a unique operationId, a summary, a description, a tag and its security', () => {
    const ids = operations.map(([, , operation]) => operation.operationId)
    expect(new Set(ids).size).toBe(22)
    for (const [, , operation] of operations) {
      expect(operation.summary?.length).toBeGreaterThan(5)
      expect(operation.description?.length).toBeGreaterThan(20)
      expect(document.tags.map((tag) => tag.name)).toContain(operation.tags?.[0] as string)
      expect(operation.security).toBeArray()
    }
    const open = operations.filter(([, , operation]) => operation.security?.length === 0)
    expect(open.map(([, , operation]) => operation.operationId).sort()).toEqual(
      [
        'createUser',
        'getAlbum',
        'getAllAlbums',
        'getAllArtists',
        'getArtist',
        'getArtistHistory',
        'loginUser',
        'streamEvents',
      ].sort(),
    )
    expect(byId('deleteArtist').deprecated).toBe(true)
    expect(operations.filter(([, , operation]) => operation.deprecated)).toHaveLength(1)
  })

  test('documents integer parameters as int64 with their bounds and defaults', () => {
    const list = byId('getAllArtists').parameters ?? []
    expect(list.map(({ name, in: where, required, schema }) => ({ name, where, required, ...schema }))).toEqual([
      expect.objectContaining({ name: 'limit', where: 'query', required: false, type: 'integer', format: 'int64' }),
      expect.objectContaining({ name: 'offset', where: 'query', required: false, type: 'integer', format: 'int64' }),
      // Extensions of the published contract: see test/catalogue/search.test.ts.
      expect.objectContaining({ name: 'q', where: 'query', required: false, type: 'string' }),
      expect.objectContaining({ name: 'sort', where: 'query', required: false, type: 'string' }),
      // Conditional requests: see test/catalogue/conditional.test.ts.
      expect.objectContaining({ name: 'If-None-Match', where: 'header', required: false, type: 'string' }),
      expect.objectContaining({ name: 'If-Match', where: 'header', required: false, type: 'string' }),
    ])
    // No maximum: a larger limit is accepted and lowered to 100, so a generated client must not refuse it.
    expect(list[0]?.schema).toMatchObject({ minimum: 1, default: 10 })
    expect(list[0]?.schema).not.toHaveProperty('maximum')
    expect(list[0]?.description).toContain('values above 100 are lowered to 100')
    expect(list[1]?.schema).toMatchObject({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, default: 0 })
    for (const [, path, operation] of operations)
      for (const parameter of (operation.parameters ?? []).filter(
        // Header parameters are the conditional requests' (src/docs/conditional.ts): entity tags, strings.
        ({ name, in: where }) => name !== 'q' && name !== 'sort' && name !== 'kind' && where !== 'header',
      )) {
        expect(parameter.schema).toMatchObject({ type: 'integer', format: 'int64' })
        expect(parameter.description?.length).toBeGreaterThan(5)
        if (parameter.in === 'path') expect(path).toContain(`{${parameter.name}}`)
        if (parameter.in === 'path')
          expect(parameter.schema).toEqual({ type: 'integer', format: 'int64', minimum: 1, examples: [1] })
      }
  })

  test('takes JSON bodies only (a PATCH a JSON merge patch first), each with examples that are valid bodies', () => {
    const withBodies = operations.filter(([, , operation]) => operation.requestBody)
    expect(withBodies.map(([, , operation]) => operation.operationId).sort()).toEqual(
      [
        'createAlbum',
        'createApiKey',
        'createArtist',
        'createUser',
        'loginUser',
        'patchAlbum',
        'patchArtist',
        'updateAlbum',
        'updateArtist',
      ].sort(),
    )
    for (const [method, , { requestBody }] of withBodies) {
      expect(Object.keys(requestBody?.content ?? {})).toEqual(
        method === 'patch' ? ['application/merge-patch+json', 'application/json'] : ['application/json'],
      )
      if (method === 'patch')
        expect(requestBody?.content['application/merge-patch+json']).toEqual(
          requestBody?.content['application/json'] as never,
        )
      const media = requestBody?.content['application/json']
      const examples = Object.values(media?.examples ?? {})
      expect(examples.length).toBeGreaterThan(0)
      const validate = schemaValidator(media?.schema as Schema)
      for (const { value } of examples) expect(validate(value)).toBe(true)
    }
  })

  test('documents every error as a problem+json with the Problem schema and a valid example of each type', () => {
    const validateProblem = schemaValidator({ $ref: '#/components/schemas/Problem' })
    for (const [method, , operation] of operations) {
      expect(operation.responses['500']).toBeDefined()
      if (method !== 'get')
        expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining(['400', '413', '415']))
      for (const [status, response] of Object.entries(operation.responses)) {
        expect(response.description).not.toStartWith('Response for status')
        if (Number(status) < 400) continue
        expect(Object.keys(response.content ?? {})).toEqual(['application/problem+json'])
        const media = response.content?.['application/problem+json']
        expect(media?.schema).toEqual({ $ref: '#/components/schemas/Problem' })
        for (const { value } of Object.values(media?.examples ?? {})) {
          expect(validateProblem(value)).toBe(true)
          expect((value as { status: number }).status).toBe(Number(status))
        }
      }
    }
    expect(byId('updateArtist').responses['401']?.headers).toHaveProperty('WWW-Authenticate')
    expect(byId('loginUser').responses['429']?.headers).toHaveProperty('Retry-After')
    expect(byId('deleteArtist').responses['400']?.headers).toHaveProperty('Deprecation')
  })

  test('documents entity tags: ETag on reads and writes, If-None-Match and 304, If-Match and 412', () => {
    const headerNames = (operationId: string) =>
      (byId(operationId).parameters ?? []).filter(({ in: where }) => where === 'header').map(({ name }) => name)
    for (const [operationId, kind] of [
      ['getArtist', 'strong'],
      ['getAlbum', 'strong'],
      ['getAllArtists', 'weak'],
      ['getAllAlbums', 'weak'],
    ] as const) {
      const { responses } = byId(operationId)
      expect(headerNames(operationId)).toEqual(['If-None-Match', 'If-Match'])
      expect(responses['200']?.headers?.ETag?.required).toBe(true)
      expect(responses['200']?.headers?.ETag?.description).toContain(kind)
      expect(responses['304']?.content).toBeUndefined()
      expect(Object.keys(responses['304']?.headers ?? {})).toEqual(['ETag', 'Cache-Control'])
    }
    for (const [operationId, status] of [
      ['createArtist', '201'],
      ['createAlbum', '201'],
      ['updateArtist', '200'],
    ] as const) {
      expect(byId(operationId).responses[status]?.headers?.ETag?.required).toBe(true)
      // A create is also safe to retry with its Idempotency-Key.
      const retried = status === '201' ? ['Idempotency-Key'] : []
      expect(headerNames(operationId)).toEqual(['If-Match', 'If-None-Match', ...retried])
    }
    // Every operation of the catalogue but the deprecated delete (always 400) honours both with its tags (RFC 9110
    // section 13); every other operation has no tag, and answers 412 where a condition cannot hold.
    const tagged = [
      'createAlbum',
      'createArtist',
      'deleteAlbum',
      'getAlbum',
      'getAllAlbums',
      'getAllArtists',
      'getArtist',
      'getArtistHistory',
      'patchAlbum',
      'patchArtist',
      'updateAlbum',
      'updateArtist',
    ]
    const withPreconditions = operations.filter(([, , operation]) => operation.responses['412'])
    expect(withPreconditions.map(([, , operation]) => operation.operationId).sort()).toEqual(
      operations
        .map(([, , operation]) => operation.operationId)
        .filter((id) => id !== 'deleteArtist')
        .sort(),
    )
    for (const [method, , operation] of withPreconditions) {
      const stale = operation.responses['412']
      expect(stale?.headers?.ETag?.required).toBe(tagged.includes(operation.operationId) ? true : undefined)
      expect(Object.keys(stale?.content?.['application/problem+json']?.examples ?? {})).toEqual(['precondition-failed'])
      if (method === 'get') expect(operation.responses['304']).toBeDefined()
    }
  })

  test('documents 201 with Location, and 204 without a body', () => {
    for (const [, , operation] of operations) {
      if (operation.responses['201']) expect(operation.responses['201'].headers).toHaveProperty('Location')
      if (operation.responses['204']) {
        expect(operation.responses['204'].description).toEqual(expect.any(String))
        expect(operation.responses['204']).not.toHaveProperty('content')
      }
    }
    expect(byId('logoutUser').responses['204']).toBeDefined()
    expect(byId('revokeApiKey').responses['204']).toBeDefined()
  })

  test('every problem type it shows is a page of the server', async () => {
    const { call } = testApp()
    const types = new Set(
      operations.flatMap(([, , operation]) =>
        Object.values(operation.responses).flatMap((response) =>
          Object.values(response.content?.['application/problem+json']?.examples ?? {}).map(
            ({ value }) => (value as { type: string }).type,
          ),
        ),
      ),
    )
    expect(types.size).toBeGreaterThan(10)
    for (const type of types) {
      const page = await call(type)
      expect(page.status).toBe(200)
      expect(page.text.length).toBeGreaterThan(40)
    }
  })
})

describe('the security each operation documents is the one it enforces', () => {
  test.each(operations.map(([method, path, operation]) => [operation.operationId, method, path, operation] as const))(
    '%s',
    async (_, method, path, operation) => {
      const { app, call } = testApp()
      // The event stream never ends: its status is all there is to check.
      if (operation.operationId === 'streamEvents') {
        const response = await app.handle(new Request(`http://localhost${path}`))
        await response.body?.cancel()
        expect(response.status).toBe(200)
        return
      }
      const example = Object.values(operation.requestBody?.content['application/json']?.examples ?? {})[0]?.value
      // Login's own 401 is for a wrong password: let the example's user exist.
      if (operation.operationId === 'loginUser') await call('/api/v1/user/signup', { method: 'POST', body: CARLOS })
      const { status } = await call(path.replace(/\{[^}]+\}/g, '1'), { method: method.toUpperCase(), body: example })
      if (operation.security?.length) expect(status).toBe(401)
      else expect(status).not.toBe(401)
    },
  )
})

describe('integerBounds', () => {
  test.each([
    [1, INT64_MAX],
    [0, BigInt(Number.MAX_SAFE_INTEGER)],
    [1, 100n],
    [0, 9n],
  ] as const)('reads the bounds back from the pattern of %d…%d', (minimum, maximum) => {
    expect(integerBounds(integerRangePattern(minimum, maximum))).toEqual({ minimum, maximum })
  })

  test.each(['\\S', '^(?:0|[1-9]\\d*)$', '^(?:1|2|3)$', ''])('leaves any other pattern alone: %p', (pattern) => {
    expect(integerBounds(pattern)).toBeUndefined()
  })
})
