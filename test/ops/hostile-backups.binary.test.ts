import { describe, expect, test } from 'bun:test'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { argon2id } from '../../src/auth/password.ts'
import type { StoreDocument } from '../../src/model/store-document.ts'
import { encodeBackup } from '../../src/ops/backup-format.ts'
import { binaryFixtures, runBinary } from '../support/binary.ts'
import { STORED_HASH } from '../support/passwords.ts'
import { skipWithoutPostgres, type TestPostgres, testPostgres } from '../support/postgres.ts'

// Backups and data files that held what the API would refuse used to pass `verify` and then hurt: a password hash
// costing 1 GiB made each login take 10 s and a gigabyte; a counter at 2^53 − 1 made three creates share one id; a
// name holding U+0000 failed a restore into PostgreSQL with the driver's error, and the 2^53 file with a stack
// trace. Each is now refused where it is read (verify, restore, start-up), by location, and never reaches the store.

const KEY = 'rl_hostile_backups_test_key_0123456789'
const { directory, serve } = binaryFixtures('rock-legends-hostile-', KEY)

/** A document of one artist and one user, with `change` applied. */
function document(change: (doc: StoreDocument) => void): StoreDocument {
  const doc: StoreDocument = {
    version: 1,
    counters: { artists: 1, albums: 0, users: 1, credentials: 0 },
    artists: [{ id: 1, name: 'Pappo' }],
    albums: [],
    users: [
      {
        id: 1,
        name: 'Ana',
        email: 'ana@rock-legends.com',
        passwordHash: STORED_HASH,
        createdAt: '2026-01-01T00:00:00.000Z',
        disabledAt: null,
        credentialsEpoch: 0,
      },
    ],
    credentials: [],
  }
  change(doc)
  return doc
}

/** `doc` as a data file and as a backup (with its checksum right) in a new directory. */
function written(doc: StoreDocument) {
  const dir = directory()
  const data = join(dir, 'db.json')
  const backup = join(dir, 'backup.json')
  writeFileSync(data, JSON.stringify(doc))
  const meta = { takenAt: '2026-01-01T00:00:00.000Z', store: 'json-file' as const, build: 'test' }
  writeFileSync(backup, [...encodeBackup(meta, doc)].join(''))
  return { dir, data, backup }
}

const COSTLY = '$argon2id$v=19$m=1048576,t=3,p=1$AAD5zJn2lG9UM52je2v90A$vgmcpjIiqCFnrFHZH4m/coxoKwJJACEjLVLVS1Lko0M'

const HOSTILE: [string, (doc: StoreDocument) => void, string][] = [
  [
    'a password hash costing 1 GiB',
    (doc) => {
      ;(doc.users[0] as { passwordHash: string }).passwordHash = COSTLY
    },
    "/users/0/passwordHash: user 1's password hash costs m=1048576,t=3,p=1: more than a login may spend",
  ],
  [
    'a counter past 2^53 − 1',
    (doc) => {
      doc.counters.artists = 2 ** 53
    },
    '/counters/artists: must be an integer from 0 to 9007199254740991',
  ],
  [
    'a name holding U+0000',
    (doc) => {
      ;(doc.artists[0] as { name: string }).name = 'Pap\u0000po'
    },
    '/artists/0/name: must not contain U+0000 or an unpaired UTF-16 surrogate',
  ],
  [
    'a description past 10,000 characters',
    (doc) => {
      ;(doc.artists[0] as { description?: string }).description = 'x'.repeat(10_001)
    },
    '/artists/0/description: must be a string of at most 10000 characters',
  ],
]

describe('what the API would refuse, in a backup or a data file', () => {
  for (const [what, change, problem] of HOSTILE)
    test(`${what}: verify names it, restore and start-up refuse it, and nothing prints a stack`, async () => {
      const { data, backup, dir } = written(document(change))
      const checked = await runBinary(['verify', backup])
      expect(checked.code).toBe(1)
      expect(checked.stdout).toContain(problem)
      const checkedFile = await runBinary(['verify', '--data', data])
      expect(checkedFile.code).toBe(1)
      expect(checkedFile.stdout).toContain(problem)
      const target = join(dir, 'target.json')
      const restored = await runBinary(['restore', backup, '--data', target])
      expect(restored.code).toBe(1)
      expect(`${restored.stdout}${restored.stderr}`).toContain(problem)
      const started = await runBinary(['--data', data, '--port', '0', '--log', 'off'])
      expect(started.code).toBe(2)
      expect(started.stderr).toContain(problem.replace(/user 1's password hash /, ''))
      for (const output of [checked, checkedFile, restored, started])
        expect(`${output.stdout}${output.stderr}`).not.toMatch(/\n\s+at |\/src\/|\.ts:\d/)
    }, 30_000)

  test('a hash costing more than the server makes is never verified: the login is refused at once', async () => {
    // Verified, it would take seconds and a gigabyte; refused, it takes nothing, whatever the password.
    const started = performance.now()
    expect(await argon2id.verify(COSTLY, 'i-love-rock')).toBe(false)
    expect(performance.now() - started).toBeLessThan(1000)
    expect(await argon2id.verify(STORED_HASH, 'i-love-rock')).toBe(true)
  })

  test('a store whose counter reached 2^53 − 1 refuses creates instead of giving one id twice', async () => {
    const { data } = written(
      document((doc) => {
        doc.counters.artists = Number.MAX_SAFE_INTEGER
      }),
    )
    const server = await serve(data)
    const statuses: number[] = []
    for (const name of ['Luca', 'Pappo', 'Moris']) {
      const created = await fetch(`${server.url}/api/v1/artists`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': KEY },
        body: JSON.stringify({ name }),
      })
      statuses.push(created.status)
    }
    expect(statuses).toEqual([503, 503, 503])
    const listed = (await (await fetch(`${server.url}/api/v1/artists`)).json()) as { meta: { total: number } }
    expect(listed.meta.total).toBe(1)
  }, 30_000)
})

describe.skipIf(skipWithoutPostgres())('restoring them into PostgreSQL', () => {
  let postgres: TestPostgres
  test('each is refused before the database is touched, in one line, without a stack trace', async () => {
    postgres ??= await testPostgres()
    for (const [, change, problem] of HOSTILE) {
      const { backup } = written(document(change))
      const target = postgres.url(await postgres.freshDatabase())
      const restored = await runBinary(['restore', backup, '--data', target])
      expect(restored.code).toBe(1)
      expect(`${restored.stdout}${restored.stderr}`).toContain(problem)
      expect(`${restored.stdout}${restored.stderr}`).not.toMatch(/\n\s+at |\/src\/|\.ts:\d/)
      expect((await runBinary(['verify', '--data', target])).code).toBe(0)
    }
  }, 60_000)
})
