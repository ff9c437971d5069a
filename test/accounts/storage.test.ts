import { expect, test } from 'bun:test'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { argon2id } from '../../src/auth/password.ts'
import { hashSecret } from '../../src/auth/secrets.ts'
import { openJsonFileStore } from '../../src/store/json-file/json-file.ts'
import { testApp } from '../helpers.ts'
import { bearer, CARLOS, createKey, signedIn, writeArtist } from './helpers.ts'

test('the data file holds hashes and prefixes, never the password, a token or a key', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rock-legends-accounts-'))
  try {
    const store = await openJsonFileStore(join(dir, 'db.json'))
    let secrets: string[]
    try {
      // The production hasher, whose parameters the data file must show (testApp's default is a cheaper one).
      const { call } = testApp(store, { passwords: argon2id })
      const { token } = await signedIn(call)
      const { key, prefix } = await createKey(call, bearer(token))
      expect((await writeArtist(call, { 'x-api-key': key })).status).toBe(201)
      secrets = [token, key]
      expect(prefix).toBe(key.slice(0, 11))
    } finally {
      await store.close()
    }
    const text = readFileSync(join(dir, 'db.json'), 'utf8')
    expect(text).not.toContain(CARLOS.password)
    for (const secret of secrets) {
      // Not the secret, nor its random part: only the prefix and the SHA-256 hash are stored.
      expect(text).not.toContain(secret)
      expect(text).not.toContain(secret.slice(11))
      expect(text).toContain(hashSecret(secret))
    }
    const document = JSON.parse(text)
    expect(document.users[0].passwordHash).toStartWith('$argon2id$v=19$m=19456,t=2,p=1$')
    // The use of the key (a last-used time, kept in memory) was saved when the store closed.
    expect(
      document.credentials.find((credential: { kind: string }) => credential.kind === 'key').lastUsedAt,
    ).not.toBeNull()
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})
