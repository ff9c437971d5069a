/**
 * RFC 9110's conditions on the resources that have no entity tag (src/http/conditional.ts, `conditionsWithoutTags`):
 * the account routes, the operator's and the fixtures' controls, health checks, the event stream and the pages. No
 * tag can match one, so `If-Match` holds only as `*` where the resource exists, and `If-None-Match: *` fails where it
 * exists: 304 for a read, 412 for anything else; credentials and validation are answered first.
 */
import { describe, expect, test } from 'bun:test'
import { bearer, CARLOS, signedIn } from '../accounts/helpers.ts'
import { fixtureWorld, operatorJson } from '../fixtures/support.ts'
import { asService, testApp } from '../helpers.ts'

const USER = '/api/v1/user'

describe('a resource without tags that exists (its path answers GET)', () => {
  test('a read: If-None-Match: * is 304, a tag in If-Match is 412, If-Match: * and a tag in If-None-Match are served', async () => {
    const { call } = testApp()
    const { token } = await signedIn(call)
    const me = (headers: Record<string, string>) => call(`${USER}/me`, { headers: { ...bearer(token), ...headers } })
    const notModified = await me({ 'if-none-match': '*' })
    expect(notModified.status).toBe(304)
    expect(notModified.text).toBe('')
    const refused = await me({ 'if-match': '"q3ZCr0YdUuq1pW4pVfDgxw"' })
    expect(refused.status).toBe(412)
    expect(refused.json.type).toBe('/problems/precondition-failed')
    expect(refused.headers.get('etag')).toBeNull()
    expect((await me({ 'if-match': '*' })).status).toBe(200)
    expect((await me({ 'if-none-match': '"q3ZCr0YdUuq1pW4pVfDgxw"' })).status).toBe(200)
    for (const path of ['/healthz', '/livez', '/']) {
      expect((await call(path, { headers: { 'if-none-match': '*' } })).status).toBe(304)
      expect((await call(path, { headers: { 'if-match': '"x"' } })).status).toBe(412)
    }
  })

  test('a write: If-None-Match: * is 412 and nothing is done; If-Match: * is served', async () => {
    const { call } = testApp()
    const { token } = await signedIn(call)
    const createKey = (headers: Record<string, string>) =>
      call(`${USER}/api-keys`, { method: 'POST', body: { name: 'CI' }, headers: { ...bearer(token), ...headers } })
    const refused = await createKey({ 'if-none-match': '*' })
    expect(refused.status).toBe(412)
    expect((await call(`${USER}/api-keys`, { headers: bearer(token) })).json.meta.total).toBe(0)
    expect((await createKey({ 'if-match': '"x"' })).status).toBe(412)
    expect((await createKey({ 'if-match': '*' })).status).toBe(201)
    expect((await call(`${USER}/api-keys`, { headers: bearer(token) })).json.meta.total).toBe(1)
  })
})

describe('a resource without a representation (its path answers no GET)', () => {
  test('If-Match never holds, even as *; If-None-Match: * holds', async () => {
    const { call } = testApp()
    const signUp = (headers: Record<string, string>) =>
      call(`${USER}/signup`, { method: 'POST', body: CARLOS, headers })
    expect((await signUp({ 'if-match': '*' })).status).toBe(412)
    expect((await signUp({ 'if-match': '"x"' })).status).toBe(412)
    expect((await signUp({ 'if-none-match': '*' })).status).toBe(201)
  })
})

describe('what comes before the conditions', () => {
  test('missing credentials are 401 and an invalid body 400, whatever the conditions', async () => {
    const { call } = testApp()
    expect((await call(`${USER}/logout`, { method: 'POST', headers: { 'if-match': '"x"' } })).status).toBe(401)
    const invalid = await call(`${USER}/signup`, {
      method: 'POST',
      body: { name: 'A' },
      headers: { 'if-match': '"x"' },
    })
    expect(invalid.status).toBe(400)
    expect((await call('/__admin/users', { headers: { ...asService, 'if-none-match': '*' } })).status).toBe(304)
  })

  test('a fixture control: a fault is not armed when a condition fails', async () => {
    const world = await fixtureWorld()
    const arm = (headers: Record<string, string>) =>
      world.json('/__admin/faults', {
        method: 'POST',
        headers: { ...operatorJson('team-a'), ...headers },
        body: JSON.stringify({ method: 'GET', path: '/api/v1/artists', status: 503 }),
      })
    expect((await arm({ 'if-match': '"x"' })).status).toBe(412)
    expect((await arm({ 'if-none-match': '*' })).status).toBe(412)
    expect((await world.json('/__admin/faults', { headers: operatorJson('team-a') })).body.meta.total).toBe(0)
    expect((await arm({ 'if-match': '*' })).status).toBe(201)
  })

  test('the catalogue keeps its own tags: If-Match with the current ETag of /openapi.json is served', async () => {
    const { call } = testApp()
    const document = await call('/openapi.json')
    const etag = document.headers.get('etag') as string
    expect((await call('/openapi.json', { headers: { 'if-match': etag } })).status).toBe(200)
    expect((await call('/openapi.json', { headers: { 'if-none-match': etag } })).status).toBe(304)
  })
})
