import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { hashSecret } from '../../src/auth/secrets.ts'
import type { Credential } from '../../src/model/credential.ts'
import type { New } from '../../src/model/form.ts'
import type { StoreDocument } from '../../src/model/store-document.ts'
import { openJsonFileStore } from '../../src/store/json-file/json-file.ts'
import { StoreUnavailableError } from '../../src/store/store.ts'
import { bearer, CARLOS, createKey, manualClock, signedIn } from '../accounts/helpers.ts'
import { testApp } from '../helpers.ts'
import { removeDir, tempDir } from '../support/binary.ts'
import { countingStore } from '../support/stores.ts'

const HOUR = 3_600_000
const MARIA = { name: 'Maria', email: 'maria@rock-legends.com', password: 'rock-n-roll' }

let dir: string
let file: string
beforeEach(() => {
  dir = tempDir()
  file = join(dir, 'db.json')
})
afterEach(() => removeDir(dir))

describe('revoked and expired credentials leave the data file', () => {
  test('purged at a later login, gone from the file once compacted, and still refused after a restart', async () => {
    const clock = manualClock('2025-06-01T12:00:00Z')
    const store = await openJsonFileStore(file)
    const { call } = testApp(store, { now: clock.now })
    const login = () =>
      call('/api/v1/user/login', { method: 'POST', body: { email: CARLOS.email, password: CARLOS.password } })
    const { token: loggedOut } = await signedIn(call)
    const revokedKey = await createKey(call, bearer(loggedOut), 'old')
    await call(`/api/v1/user/api-keys/${revokedKey.id}`, { method: 'DELETE', headers: bearer(loggedOut) })
    const liveKey = await createKey(call, bearer(loggedOut), 'kept')
    await call('/api/v1/user/logout', { method: 'POST', headers: bearer(loggedOut) })
    const expired = (await login()).json.token as string
    // Another account that never logs in again: its expired token goes with the periodic purge of every account.
    const { token: mariasExpired } = await signedIn(call, MARIA)
    clock.advance(25 * HOUR)
    const current = (await login()).json.token as string
    const dead = [loggedOut, revokedKey.key, expired, mariasExpired]
    expect((await store.credentials.listByUser(1)).map((credential) => credential.prefix)).toEqual([
      liveKey.prefix,
      current.slice(0, 11),
    ])
    expect(await store.credentials.listByUser(2)).toEqual([])
    await store.close()

    const onDisk = JSON.parse(readFileSync(file, 'utf8')) as StoreDocument
    expect(onDisk.credentials.map((credential) => credential.hash)).toEqual([
      hashSecret(liveKey.key),
      hashSecret(current),
    ])
    // Ids are never reused: the counter still counts the purged credentials.
    expect(onDisk.counters.credentials).toBe(6)
    const text = readFileSync(file, 'utf8')
    for (const secret of dead) expect(text).not.toContain(hashSecret(secret))

    const reopened = await openJsonFileStore(file)
    try {
      const again = testApp(reopened, { now: clock.now })
      for (const secret of [loggedOut, expired, mariasExpired])
        expect((await again.call('/api/v1/user/me', { headers: bearer(secret) })).status).toBe(401)
      expect((await again.call('/api/v1/user/me', { headers: { 'x-api-key': revokedKey.key } })).status).toBe(401)
      expect((await again.call('/api/v1/user/me', { headers: { 'x-api-key': liveKey.key } })).status).toBe(200)
      expect((await again.call('/api/v1/user/me', { headers: bearer(current) })).status).toBe(200)
      expect((await createKey(again.call, bearer(current), 'new')).id).toBe(7)
    } finally {
      await reopened.close()
    }
  })
})

describe('purging in the store', () => {
  const credential = (hash: string, fields: Partial<New<Credential>> = {}): New<Credential> => ({
    userId: 1,
    kind: 'token',
    name: null,
    hash,
    prefix: 'rl_tok_',
    createdAt: '2025-06-01T12:00:00.000Z',
    expiresAt: '2025-06-02T12:00:00.000Z',
    lastUsedAt: null,
    revokedAt: null,
    epoch: 0,
    ...fields,
  })

  async function storeWithUser() {
    const { store, state } = countingStore()
    await store.users.insert({
      name: 'U',
      email: 'u@example.com',
      passwordHash: 'x',
      createdAt: 'now',
      disabledAt: null,
    })
    return { store, state }
  }

  test('removes only dead credentials, needs no write of its own, and keeps ids increasing', async () => {
    const { store, state } = await storeWithUser()
    const revoked = await store.credentials.insert(credential('aa'))
    await store.credentials.revoke(revoked.id, '2025-06-01T13:00:00.000Z')
    await store.credentials.insert(credential('bb', { expiresAt: '2025-06-01T14:00:00.000Z' }))
    const key = await store.credentials.insert(credential('cc', { kind: 'key', expiresAt: null }))
    const writes = state.writes
    expect(await store.credentials.purge('2025-06-01T14:00:00.000Z')).toBe(2)
    expect(state.writes).toBe(writes)
    expect(await store.credentials.listByUser(1)).toEqual([key])
    for (const hash of ['aa', 'bb']) expect(await store.credentials.findByHash(hash)).toBeUndefined()
    expect((await store.credentials.insert(credential('dd'))).id).toBe(4)
  })

  test('a batch that fails after a purge is undone by id: what it revoked is live again, what it added is gone', async () => {
    const { store, state } = await storeWithUser()
    const dead = await store.credentials.insert(credential('aa'))
    await store.credentials.revoke(dead.id, '2025-06-01T12:30:00.000Z')
    const kept = await store.credentials.insert(credential('bb'))
    state.failing = true
    const outcomes = await Promise.allSettled([
      store.credentials.revoke(kept.id, '2025-06-01T13:00:00.000Z'),
      // Purges the user's dead credential ("aa") from the middle of the collection before adding one.
      store.credentials.insert(credential('cc', { createdAt: '2025-06-01T13:00:00.000Z' }), {
        max: 10,
        whenFull: 'refuse',
      }),
    ])
    for (const outcome of outcomes)
      expect(outcome.status === 'rejected' && outcome.reason).toBeInstanceOf(StoreUnavailableError)
    expect(await store.credentials.findByHash('bb')).toEqual(kept)
    expect(await store.credentials.findByHash('cc')).toBeUndefined()
    expect((await store.credentials.listByUser(1)).filter((each) => each.revokedAt === null)).toEqual([kept])
    state.failing = false
    const added = await store.credentials.insert(credential('dd'))
    expect((await store.credentials.listByUser(1)).at(-1)).toEqual(added)
    expect(added.id).toBeGreaterThan(kept.id)
  })
})
