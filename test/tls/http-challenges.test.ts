import { expect, test } from 'bun:test'
import { HttpChallenges } from '../../src/tls/http-challenges.ts'

const challenges = new HttpChallenges()
challenges.add('token-1', 'token-1.thumbprint')
challenges.add('token-2', 'token-2.thumbprint')
challenges.remove('token-2')

test.each([
  ['GET', '/.well-known/acme-challenge/token-1', 200, 'token-1.thumbprint'],
  ['HEAD', '/.well-known/acme-challenge/token-1', 200, ''],
  ['GET', '/.well-known/acme-challenge/token-2', 404, 'no such challenge\n'],
  ['GET', '/.well-known/acme-challenge/', 404, 'no such challenge\n'],
  ['POST', '/.well-known/acme-challenge/token-1', undefined, undefined],
  ['GET', '/artists', undefined, undefined],
  ['GET', '/.well-known/other', undefined, undefined],
] as const)('%s %s answers %p', async (method, path, status, body) => {
  const answer = challenges.answer(new Request(`http://shop.example${path}`, { method }))
  expect(answer?.status).toBe(status)
  if (answer && method === 'GET') expect(await answer.text()).toBe(body as string)
})
