import { describe, expect, test } from 'bun:test'
import { createApp } from '../../src/app.ts'
import { openMemoryStore } from '../../src/store/document/memory.ts'
import { servedDocument } from '../support/openapi.ts'

// CORS stays closed unless the operator opens it: no operation tells a browser on another site that it may read
// the answer, and an opened server names only the listed origins, never with credentials.

const document = await servedDocument()
const operations = Object.entries(document.paths).flatMap(([path, methods]) =>
  Object.keys(methods).map((method) => [method.toUpperCase(), path.replace(/\{\w+\}/g, '1')] as const),
)

async function corsHeaders(cors: string[] | undefined, method: string, path: string, origin: string) {
  const app = createApp({ store: openMemoryStore(), apiKeys: ['k'], cors })
  const headers = { origin, 'x-api-key': 'k', 'content-type': 'application/json' }
  const answers = [
    await app.handle(
      new Request(`http://localhost${path}`, { method, headers, body: method === 'GET' ? undefined : '{}' }),
    ),
    await app.handle(
      new Request(`http://localhost${path}`, {
        method: 'OPTIONS',
        headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': 'x-api-key' },
      }),
    ),
  ]
  return answers.flatMap((answer) =>
    [...answer.headers.keys()]
      .filter((name) => name.startsWith('access-control-'))
      .map((name) => [name, answer.headers.get(name)]),
  )
}

describe('CORS', () => {
  test.each(operations)('closed by default: %s %s answers no origin', async (method, path) => {
    expect(await corsHeaders(undefined, method, path, 'https://evil.example')).toEqual([])
  })

  test.each(operations)(
    'opened for one origin: %s %s answers only it, never with credentials',
    async (method, path) => {
      expect(await corsHeaders(['https://app.example'], method, path, 'https://evil.example')).toEqual([])
      expect(await corsHeaders(['https://app.example'], method, path, 'null')).toEqual([])
      const listed = await corsHeaders(['https://app.example'], method, path, 'https://app.example')
      expect(listed).toContainEqual(['access-control-allow-origin', 'https://app.example'])
      expect(listed.map(([name]) => name)).not.toContain('access-control-allow-credentials')
    },
  )
})
