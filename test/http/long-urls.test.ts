import { describe, expect, test } from 'bun:test'
import { MAX_TARGET_LENGTH } from '../../src/http/request-target.ts'
import { asService, testApp } from '../helpers.ts'

describe('a request target over 8 KiB', () => {
  test('→ 414 problem on a read, before a write reads its credentials or body, and on no route', async () => {
    const { app, call } = testApp()
    const pad = 'x'.repeat(MAX_TARGET_LENGTH)
    const read = await call(`/api/v1/artists?pad=${pad}`)
    expect(read.status).toBe(414)
    expect(read.json).toMatchObject({ type: '/problems/uri-too-long', status: 414 })
    const write = await app.handle(
      new Request(`http://localhost/api/v1/artists?pad=${pad}`, { method: 'POST', body: 'not json' }),
    )
    expect(write.status).toBe(414)
    const nowhere = await app.handle(new Request(`http://localhost/nowhere/${pad}`))
    expect(nowhere.status).toBe(414)
    const ok = await call(`/api/v1/artists?pad=${'x'.repeat(MAX_TARGET_LENGTH - 30)}`, { headers: asService })
    expect(ok.status).toBe(200)
  })
})
