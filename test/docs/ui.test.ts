import { describe, expect, test } from 'bun:test'
import { SCALAR_VERSION } from '../../src/docs/scalar.ts'
import { testApp } from '../helpers.ts'

const BUNDLE = `/docs/assets/scalar-api-reference-${SCALAR_VERSION}.js`

describe('GET /docs', () => {
  test('is a page whose every script comes from this server, under a policy that refuses anything else', async () => {
    const { call } = testApp()
    const { status, headers, text } = await call('/docs')
    expect(status).toBe(200)
    expect(headers.get('content-type')).toBe('text/html; charset=utf-8')
    expect([...text.matchAll(/(?:src|href)="([^"]*)"/g)].map((match) => match[1])).toEqual([
      'data:,',
      // Back to the catalogue's pages, and the document.
      '/',
      '/openapi.json',
      BUNDLE,
      '/docs/assets/docs.js',
    ])
    const policy = headers.get('content-security-policy') ?? ''
    expect(policy).toContain("default-src 'none'")
    for (const directive of ['script-src', 'connect-src', 'font-src', 'img-src', 'style-src'])
      expect(policy).toMatch(new RegExp(`${directive} 'self'[^;]*(;|$)`))
    expect(policy).not.toContain('http')
  })

  test('serves the pinned Scalar bundle from the executable, cacheable for good', async () => {
    const { call } = testApp()
    const { status, headers, text } = await call(BUNDLE)
    expect(status).toBe(200)
    expect(headers.get('content-type')).toBe('text/javascript; charset=utf-8')
    expect(headers.get('cache-control')).toBe('public, max-age=31536000, immutable')
    expect(text.length).toBeGreaterThan(1_000_000)
    expect(text).toContain('createApiReference')
  })

  test('configures Scalar to reach nothing but this server', async () => {
    const { call } = testApp()
    const { headers, text } = await call('/docs/assets/docs.js')
    expect(headers.get('content-type')).toBe('text/javascript; charset=utf-8')
    const configuration = JSON.parse(/createApiReference\('#app', (.*)\)/.exec(text)?.[1] ?? 'null')
    expect(configuration).toMatchObject({
      url: '/openapi.json',
      withDefaultFonts: false,
      proxyUrl: '',
      telemetry: false,
      agent: { disabled: true },
      mcp: { disabled: true },
      showDeveloperTools: 'never',
    })
  })

  test.each(['nothing.js', 'scalar-api-reference-0.0.0.js', '..%2Fpackage.json'])(
    'answers an unknown asset (%s) with a 404 problem',
    async (file) => {
      const { call } = testApp()
      const { status, headers } = await call(`/docs/assets/${file}`)
      expect(status).toBe(404)
      expect(headers.get('content-type')).toBe('application/problem+json')
    },
  )
})
