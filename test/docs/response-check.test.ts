import { describe, expect, test } from 'bun:test'
import { createApp } from '../../src/app.ts'
import { openMemoryStore } from '../../src/store/document/memory.ts'
import { type Answer, expectDocumented } from '../support/openapi.ts'

const JSON_TYPE = { 'content-type': 'application/json' }
// What a read answers besides its body (src/http/conditional.ts).
const TAGGED = { ...JSON_TYPE, etag: '"q3ZCr0YdUuq1pW4pVfDgxw"', 'cache-control': 'no-cache' }
// What every list page carries besides its tag (src/http/pagination.ts).
const PAGE_LINKS = '</api/v1/artists?limit=1&offset=0>; rel="first", </api/v1/artists?limit=1&offset=0>; rel="last"'
const PROBLEM = { 'content-type': 'application/problem+json' }
const artist = { id: 1, name: 'Luis Alberto Spinetta', band: 'Almendra' }
const notFound = { type: '/problems/not-found', title: 'Not found', status: 404, detail: 'There is no artist 9.' }

const answer = (
  method: string,
  path: string,
  status: number,
  headers: Record<string, string>,
  body?: unknown,
): Answer => ({
  method,
  path,
  status,
  headers: new Headers(headers),
  text: body === undefined ? '' : JSON.stringify(body),
})

// The hook in test/helpers.ts runs this on every answer of the suite; here it is shown to catch each kind of drift.
describe('expectDocumented', () => {
  test.each([
    ['an artist', answer('GET', '/api/v1/artists/1', 200, TAGGED, artist)],
    [
      'a page with its query',
      answer(
        'GET',
        '/api/v1/artists?limit=1',
        200,
        { ...TAGGED, link: PAGE_LINKS },
        {
          data: [artist],
          meta: { limit: 1, offset: 0, total: 1, next: null },
        },
      ),
    ],
    ['a problem', answer('GET', '/api/v1/artists/9', 404, PROBLEM, notFound)],
    ['a 204', answer('DELETE', '/api/v1/user/api-keys/3', 204, {})],
    ['a 304 of a read', answer('GET', '/api/v1/artists/1', 304, { etag: TAGGED.etag, 'cache-control': 'no-cache' })],
    ['a route outside the document', answer('GET', '/covers/artists/1.svg', 200, { 'content-type': 'image/svg+xml' })],
    ['a method outside the document', answer('POST', '/api/v1/artists/1', 405, PROBLEM, notFound)],
  ])('accepts %s', async (_, documented) => {
    await expectDocumented(documented)
  })

  test.each([
    [
      'a body that breaks the schema',
      answer('GET', '/api/v1/artists/1', 200, TAGGED, { ...artist, id: '1' }),
      '/id must be integer',
    ],
    [
      'a missing field',
      answer('GET', '/api/v1/artists/1', 200, TAGGED, { id: 1, band: 'X' }),
      "must have required property 'name'",
    ],
    [
      'a null optional field',
      answer('GET', '/api/v1/artists/1', 200, TAGGED, { ...artist, image: null }),
      '/image must be string',
    ],
    [
      'an undocumented status',
      answer('GET', '/api/v1/artists/1', 409, PROBLEM, notFound),
      'status 409 is not documented',
    ],
    [
      'an error as plain JSON',
      answer('GET', '/api/v1/artists/9', 404, JSON_TYPE, notFound),
      'media type application/json',
    ],
    [
      'a problem type the operation cannot give',
      answer('GET', '/api/v1/artists/1', 400, PROBLEM, {
        type: '/problems/malformed-json',
        title: 'x',
        status: 400,
        detail: 'x',
      }),
      'problem type',
    ],
    ['a 204 with a body', answer('POST', '/api/v1/user/logout', 204, JSON_TYPE, {}), 'no body'],
    [
      'a 401 without its challenge',
      answer('POST', '/api/v1/artists', 401, PROBLEM, { ...notFound, type: '/problems/unauthorized', status: 401 }),
      'WWW-Authenticate',
    ],
    ['a 201 without Location', answer('POST', '/api/v1/artists', 201, JSON_TYPE, artist), 'Location'],
    ['a read without its ETag', answer('GET', '/api/v1/artists/1', 200, JSON_TYPE, artist), 'ETag'],
    ['a 304 with a body', answer('GET', '/api/v1/artists/1', 304, TAGGED, artist), 'no body'],
    ['a 304 where no read can give one', answer('PUT', '/api/v1/artists/1', 304, TAGGED), 'status 304'],
    [
      'a 412 without the current ETag',
      answer('PUT', '/api/v1/artists/1', 412, PROBLEM, {
        type: '/problems/precondition-failed',
        title: 'A condition of the request does not hold',
        status: 412,
        detail: 'x',
      }),
      'ETag',
    ],
  ])('rejects %s', async (_, drifted, message) => {
    await expect(expectDocumented(drifted)).rejects.toThrow(message)
  })
})

describe('answers the suite does not make through `call`', () => {
  test.each([
    ['POST', '/api/v1/artists'],
    ['PUT', '/api/v1/artists/1'],
    ['DELETE', '/api/v1/artists/1'],
    ['POST', '/api/v1/user/signup'],
    ['POST', '/api/v1/user/logout'],
  ])('a read-only server refusing %s %s is documented', async (method, path) => {
    const app = createApp({ store: openMemoryStore(), readOnly: true })
    const response = await app.handle(new Request(`http://localhost${path}`, { method }))
    expect(response.status).toBe(403)
    const { status, headers } = response
    await expectDocumented({ method, path, status, headers, text: await response.text() })
  })
})
