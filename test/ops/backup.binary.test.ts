/**
 * `rock-legends verify`, `backup` and `restore` against the compiled executable, on a JSON data file and on
 * PostgreSQL: a round trip gives back the store as it was (its tokens and keys still work), verify names each problem
 * planted, a store a running server owns is refused, and a restore killed at any moment leaves the old data or the
 * new, never a mix, with the old kept aside.
 */

import { describe, expect, test } from 'bun:test'
import { copyFileSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Album } from '../../src/model/album.ts'
import type { StoreDocument } from '../../src/model/store-document.ts'
import { contentChecksum, decodeBackup, encodeBackup } from '../../src/ops/backup-format.ts'
import { readDataFile } from '../../src/ops/read-data-file.ts'
import {
  binaryFixtures,
  ensureBinary,
  killedAtMoments,
  type RunningBinary,
  runBinary,
  writeLargeDataFile,
} from '../support/binary.ts'
import { skipWithoutPostgres, type TestPostgres, testPostgres } from '../support/postgres.ts'

const KEY = 'backup-test-service-key'
const { directory, serve, stop } = binaryFixtures('rock-legends-backup-', KEY)

/** Runs `rock-legends ARGS` to its exit. */
const rl = (...args: string[]) => runBinary(args)

const call = async (server: RunningBinary, path: string, init: RequestInit = {}) => {
  const response = await fetch(`${server.url}${path}`, init)
  const text = await response.text()
  // biome-ignore lint/suspicious/noExplicitAny: tests read whatever JSON a response holds, field by field
  return { status: response.status, body: (text ? JSON.parse(text) : undefined) as any }
}
const post = (server: RunningBinary, path: string, body: unknown, headers: Record<string, string> = {}) =>
  call(server, path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  })

/** An account with a bearer token and a personal API key, and writes made with each. */
async function populate(server: RunningBinary): Promise<{ token: string; key: string }> {
  const carlos = { name: 'Carlos', email: 'carlos@rock-legends.com', password: 'i-love-rock' }
  expect((await post(server, '/api/v1/user/signup', carlos)).status).toBe(201)
  const login = await post(server, '/api/v1/user/login', { email: carlos.email, password: carlos.password })
  expect(login.status).toBe(200)
  const token = login.body.token as string
  const created = await post(server, '/api/v1/user/api-keys', { name: 'ci' }, { authorization: `Bearer ${token}` })
  expect(created.status).toBe(201)
  const key = created.body.key as string
  const artist = await post(server, '/api/v1/artists', { name: 'Backed Up' }, { authorization: `Bearer ${token}` })
  expect(artist.status).toBe(201)
  expect(
    (await post(server, `/api/v1/artists/${artist.body.id}/albums`, { name: 'Kept', year: 1999 }, { 'x-api-key': key }))
      .status,
  ).toBe(201)
  return { token, key }
}

/** The old token and key still work on `server`. */
async function credentialsWork(server: RunningBinary, { token, key }: { token: string; key: string }) {
  expect((await call(server, '/api/v1/user/me', { headers: { authorization: `Bearer ${token}` } })).status).toBe(200)
  expect((await post(server, '/api/v1/artists', { name: 'After Restore' }, { 'x-api-key': key })).status).toBe(201)
}

/** The store's content as a server would start on it: the data file with its journal replayed, in current form. */
function fileContent(file: string): StoreDocument {
  const read = readDataFile(file)
  expect(read.problems).toEqual([])
  return read.document as StoreDocument
}

const backupOf = (file: string) => {
  const decoded = decodeBackup(readFileSync(file, 'utf8'))
  expect(decoded.problems).toEqual([])
  return decoded.backup as NonNullable<typeof decoded.backup>
}

describe('a JSON data file', () => {
  test('backup → verify → restore gives the store back, and its token and key still work', async () => {
    const dir = directory()
    const data = join(dir, 'db.json')
    const server = await serve(data, ['--seed'])
    const secrets = await populate(server)
    // Killed: the last writes are in the journal alone, which the backup must read too.
    await stop(server, 'SIGKILL')
    expect(readFileSync(`${data}.journal`, 'utf8').length).toBeGreaterThan(0)
    const original = fileContent(data)

    const backup = join(dir, 'backup.json')
    const taken = await rl('backup', backup, '--data', data)
    expect(taken).toMatchObject({ code: 0 })
    expect(taken.stdout).toContain('33 artists')
    const written = backupOf(backup)
    expect(written).toMatchObject({ format: 'rock-legends-backup', formatVersion: 1, store: 'json-file' })
    expect(written.content).toEqual(original)
    expect(written.content.users[0]?.passwordHash).toStartWith('$argon2id$')
    // It holds what the data file holds, hashes only: readable by the operator alone, like the data file.
    expect(lstatSync(backup).mode & 0o777).toBe(0o600)
    expect(readFileSync(backup, 'utf8')).not.toContain(secrets.token)
    expect(readFileSync(backup, 'utf8')).not.toContain(secrets.key)
    // Nothing of the store was changed by reading it: the journal is still there, unfolded.
    expect(readFileSync(`${data}.journal`, 'utf8').length).toBeGreaterThan(0)

    expect(await rl('verify', backup)).toMatchObject({ code: 0 })
    expect(await rl('verify', '--data', data)).toMatchObject({ code: 0 })

    const restored = join(dir, 'restored', 'db.json')
    const put = await rl('restore', backup, '--data', restored)
    expect(put).toMatchObject({ code: 0 })
    expect(fileContent(restored)).toEqual(original)
    const again = await serve(restored)
    await credentialsWork(again, secrets)
  })

  test('restore over a store keeps the data it replaces aside, and says where', async () => {
    const dir = directory()
    const data = join(dir, 'db.json')
    await stop(await serve(data, ['--seed']))
    const backup = join(dir, 'backup.json')
    expect(await rl('backup', backup, '--data', data)).toMatchObject({ code: 0 })
    const server = await serve(data)
    const secrets = await populate(server)
    await stop(server, 'SIGKILL')
    const changed = fileContent(data)

    const put = await rl('restore', backup, '--data', data)
    expect(put).toMatchObject({ code: 0 })
    const aside = readdirSync(dir).filter((name) => name.startsWith('db.json.before-restore-'))
    expect(aside).toHaveLength(2) // the data file and its journal
    const kept = join(dir, aside.find((name) => !name.endsWith('.journal')) as string)
    expect(put.stdout).toContain(kept)
    expect(fileContent(kept)).toEqual(changed)
    expect(fileContent(data)).toEqual(backupOf(backup).content)
    expect(existsSync(`${data}.journal`)).toBe(false)
    // The account made after the backup is gone with everything else of that time.
    const after = await serve(data)
    expect(
      (await call(after, '/api/v1/user/me', { headers: { authorization: `Bearer ${secrets.token}` } })).status,
    ).toBe(401)
  })

  test('backup goes through the running server that owns a data file; restore refuses it, naming its pid', async () => {
    const dir = directory()
    const data = join(dir, 'db.json')
    const backup = join(dir, 'backup.json')
    await stop(await serve(data, ['--seed']))
    expect(await rl('backup', backup, '--data', data)).toMatchObject({ code: 0 })
    const before = readFileSync(data, 'utf8')
    const server = await serve(data)
    const pid = server.process.pid

    const taken = await rl('backup', join(dir, 'other.json'), '--data', data)
    expect(taken.code).toBe(0)
    expect(taken.stdout).toContain(`through the server at ${server.url} (pid ${pid}), which kept serving`)
    expect(backupOf(join(dir, 'other.json')).content).toEqual(backupOf(backup).content)

    const put = await rl('restore', backup, '--data', data)
    expect(put.code).toBe(1)
    expect(put.stderr).toContain(`pid ${pid}`)
    expect(readFileSync(data, 'utf8')).toBe(before)
    expect(readdirSync(dir).filter((name) => name.includes('before-restore'))).toEqual([])

    // verify reads the served file without its lock and without changing anything; the server keeps serving.
    const lock = readFileSync(`${data}.lock`, 'utf8')
    expect(await rl('verify', '--data', data)).toMatchObject({ code: 0 })
    expect(readFileSync(`${data}.lock`, 'utf8')).toBe(lock)
    expect((await call(server, '/api/v1/artists?limit=1')).status).toBe(200)
  })

  test('a damaged data file at start-up points to verify and restore', async () => {
    const dir = directory()
    const data = join(dir, 'db.json')
    writeFileSync(data, '{"version":1,', { mode: 0o600 })
    const start = await rl('--data', data, '--port', '0', '--log', 'off')
    expect(start.code).toBe(2)
    expect(start.stderr).toContain(`rock-legends verify --data ${data}`)
    expect(start.stderr).toContain(`rock-legends restore BACKUP --data ${data}`)
    const checked = await rl('verify', '--data', data)
    expect(checked.code).toBe(1)
    expect(checked.stdout).toContain(`${data}: is not JSON`)
  })
})

describe('verify', () => {
  /** A document with one of each problem planted, and what verify must say about each. */
  function planted(seeded: StoreDocument): { content: StoreDocument; expected: string[] } {
    const content = structuredClone(seeded)
    const album = { ...(content.albums[0] as Album), id: content.counters.albums + 1, artistId: 999 }
    content.albums.push(album)
    content.counters.albums += 1
    content.counters.artists -= 1 // behind the last artist's id
    content.users.push({
      id: 1,
      name: 'Carlos',
      email: 'carlos@rock-legends.com',
      passwordHash: 'plain-text-password',
      createdAt: '2026-01-01T00:00:00.000Z',
      disabledAt: null,
      credentialsEpoch: 0,
    })
    content.counters.users = 1
    const credential = {
      kind: 'token' as const,
      name: null,
      prefix: 'rl_tok_AbCd',
      createdAt: '2026-01-01T00:00:00.000Z',
      expiresAt: null,
      lastUsedAt: null,
      revokedAt: null,
      epoch: 0,
    }
    content.credentials.push({ ...credential, id: 1, userId: 7, hash: 'a'.repeat(64) })
    content.credentials.push({ ...credential, id: 2, userId: 1, hash: 'not-a-sha-256' })
    content.counters.credentials = 2
    const lastArtist = content.artists.length - 1
    const lastAlbum = content.albums.length - 1
    return {
      content,
      expected: [
        `/artists/${lastArtist}/id: id ${content.counters.artists + 1} is past /counters/artists (${content.counters.artists})`,
        `/albums/${lastAlbum}/artistId: album ${album.id} belongs to artist 999, which does not exist`,
        "/users/0/passwordHash: user 1's password hash is not an argon2id PHC string",
        '/credentials/0/userId: credential 1 belongs to user 7, which does not exist',
        "/credentials/1/hash: credential 2's hash is not a hex SHA-256",
      ],
    }
  }

  test('names each problem planted in a data file, a backup and its checksum; restore refuses such a backup', async () => {
    const dir = directory()
    const seededFile = join(dir, 'seeded.json')
    await stop(await serve(seededFile, ['--seed']))
    const { content, expected } = planted(fileContent(seededFile))

    const data = join(dir, 'db.json')
    writeFileSync(data, JSON.stringify(content), { mode: 0o600 })
    const fromFile = await rl('verify', '--data', data)
    expect(fromFile.code).toBe(1)
    for (const line of expected) expect(fromFile.stdout).toContain(`${data}: ${line}`)
    expect(fromFile.stdout).toContain(`${expected.length} problems found`)

    const backup = join(dir, 'planted-backup.json')
    const meta = { takenAt: new Date().toISOString(), store: 'json-file' as const, build: 'test' }
    writeFileSync(backup, [...encodeBackup(meta, content)].join(''))
    const fromBackup = await rl('verify', backup)
    expect(fromBackup.code).toBe(1)
    for (const line of expected) expect(fromBackup.stdout).toContain(`/content${line}`)
    expect(fromBackup.stdout).not.toContain('/checksum')

    const target = join(dir, 'target.json')
    const refused = await rl('restore', backup, '--data', target)
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain('not a sound backup')
    expect(existsSync(target)).toBe(false)

    // A sound backup changed by one character after it was written: the checksum no longer matches.
    const sound = join(dir, 'sound.json')
    expect(await rl('backup', sound, '--data', seededFile)).toMatchObject({ code: 0 })
    const text = readFileSync(sound, 'utf8')
    writeFileSync(sound, text.replace('"name":"Charly García"', '"name":"Charly Garcia"'))
    const tampered = await rl('verify', sound)
    expect(tampered.code).toBe(1)
    expect(tampered.stdout).toContain('/checksum: does not match the content')
    writeFileSync(sound, text.replace(/"checksum":"sha256:[0-9a-f]{4}/, '"checksum":"sha256:0000'))
    expect((await rl('verify', sound)).stdout).toContain('/checksum: does not match the content')
  })

  test('usage: one of FILE or --data, exit 2', async () => {
    expect((await rl('verify')).code).toBe(2)
    expect((await rl('restore', 'x.json')).code).toBe(2)
    expect((await rl('backup')).code).toBe(2)
  })
})

describe('restore killed with SIGKILL at any moment', () => {
  test('leaves the old data or the new, never a mix, and the old kept aside', async () => {
    await ensureBinary()
    const dir = directory()
    // The new data: a backup of the seeded catalogue.
    const seededFile = join(dir, 'seeded', 'db.json')
    await stop(await serve(seededFile, ['--seed']))
    const backup = join(dir, 'new.json')
    expect(await rl('backup', backup, '--data', seededFile)).toMatchObject({ code: 0 })
    const newSum = contentChecksum(backupOf(backup).content)

    // The old data: large, so that copying it aside and folding its journal take a while, and with a journal, as a
    // crashed server leaves it.
    const old = join(dir, 'old', 'db.json')
    const artists = writeLargeDataFile(old, fileContent(seededFile))
    const server = await serve(old)
    await populate(server)
    await stop(server, 'SIGKILL')
    const oldSum = contentChecksum(fileContent(old))

    const fresh = (run: number) => {
      const target = join(dir, `run-${run}`, 'db.json')
      mkdirSync(join(dir, `run-${run}`), { mode: 0o755 })
      copyFileSync(old, target)
      copyFileSync(`${old}.journal`, `${target}.journal`)
      return target
    }
    const started = Date.now()
    const whole = fresh(0)
    expect(await rl('restore', backup, '--data', whole)).toMatchObject({ code: 0 })
    const duration = Date.now() - started

    // Kills spread from the start to well past the uncut run's duration: before anything, while the old data is
    // copied aside and its journal folded, while the new file is written, after the rename. After each, the target
    // is the old data or the new, a file the server opens (one name, ours), and the new only with the old kept aside.
    const outcomes = { old: 0, oldWithAside: 0, new: 0 }
    await killedAtMoments({
      runs: 12,
      duration,
      spread: 1.3,
      start: (run) => ({ args: ['restore', backup, '--data', fresh(run)] }),
      check: async (run) => {
        const target = join(dir, `run-${run}`, 'db.json')
        const sum = contentChecksum(fileContent(target))
        expect([oldSum, newSum]).toContain(sum)
        expect(lstatSync(target).nlink).toBe(1)
        const kept = readdirSync(join(dir, `run-${run}`)).find((name) => /before-restore-[^.]*Z$/.test(name))
        if (sum === newSum) {
          outcomes.new += 1
          expect(kept).toBeDefined()
          expect(contentChecksum(fileContent(join(dir, `run-${run}`, kept as string)))).toBe(oldSum)
        } else if (kept) outcomes.oldWithAside += 1
        else outcomes.old += 1
        // Whatever the kill left (a lock nobody holds, a temporary file), the next restore goes through.
        if (run % 4 === 0) {
          expect(await rl('restore', backup, '--data', target)).toMatchObject({ code: 0 })
          expect(contentChecksum(fileContent(target))).toBe(newSum)
        }
      },
    })
    expect(outcomes.new).toBeGreaterThan(0)
    expect(outcomes.old + outcomes.oldWithAside).toBeGreaterThan(0)
    console.log(`restore over ${artists} artists: ${duration} ms whole; after SIGKILL: ${JSON.stringify(outcomes)}`)
  }, 120_000)
})

describe.skipIf(skipWithoutPostgres())('a PostgreSQL database', () => {
  let postgres: TestPostgres
  const database = async () => {
    postgres ??= await testPostgres()
    return postgres.url(await postgres.freshDatabase())
  }

  test('backup → verify → restore into another database gives it back; its token and key still work', async () => {
    const dir = directory()
    const source = await database()
    const server = await serve(source, ['--seed'])
    const secrets = await populate(server)
    await stop(server)

    const backup = join(dir, 'backup.json')
    const taken = await rl('backup', backup, '--data', source)
    expect(taken).toMatchObject({ code: 0 })
    const written = backupOf(backup)
    expect(written.store).toBe('postgresql')
    expect(written.content.artists).toHaveLength(33)
    expect(await rl('verify', backup)).toMatchObject({ code: 0 })
    expect(await rl('verify', '--data', source)).toMatchObject({ code: 0 })

    const target = await database()
    const put = await rl('restore', backup, '--data', target)
    expect(put).toMatchObject({ code: 0 })
    const aside = /kept in (\S+)/.exec(put.stdout)?.[1] as string
    expect(aside.startsWith(dir)).toBe(true)
    expect(backupOf(aside).content.artists).toEqual([])

    // What the restored database holds is what was backed up (checksums over the canonical content).
    const again = join(dir, 'again.json')
    expect(await rl('backup', again, '--data', target)).toMatchObject({ code: 0 })
    expect(backupOf(again).checksum).toBe(written.checksum)

    const replica = await serve(target)
    await credentialsWork(replica, secrets)
    // A server is using it now: restore refuses, naming the connections.
    const refused = await rl('restore', backup, '--data', target)
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain('in use by')
    expect(refused.stderr).toContain('pid ')
  }, 60_000)

  test('a restore into a database forgets its reset point: a replica with --allow-reset resets to what was restored', async () => {
    const dir = directory()
    const source = await database()
    const seeded = await serve(source, ['--seed'])
    await populate(seeded)
    await stop(seeded)
    const backup = join(dir, 'backup.json')
    expect(await rl('backup', backup, '--data', source)).toMatchObject({ code: 0 })
    // The target's reset point is the seeded catalogue (32 artists), taken by its first replica with --allow-reset.
    const target = await database()
    await stop(await serve(target, ['--seed', '--allow-reset']))
    expect(await rl('restore', backup, '--data', target)).toMatchObject({ code: 0 })
    const replica = await serve(target, ['--allow-reset'])
    const reset = await fetch(`${replica.url}/__admin/reset`, { method: 'POST', headers: { 'x-api-key': KEY } })
    expect(reset.status).toBe(204)
    const page = (await (await fetch(`${replica.url}/api/v1/artists?limit=1`)).json()) as { meta: { total: number } }
    expect(page.meta.total).toBe(33)
    await stop(replica)
  }, 60_000)

  test('a JSON backup restores into PostgreSQL and back, equal to the original', async () => {
    const dir = directory()
    const data = join(dir, 'db.json')
    const server = await serve(data, ['--seed'])
    const secrets = await populate(server)
    await stop(server)
    const backup = join(dir, 'from-file.json')
    expect(await rl('backup', backup, '--data', data)).toMatchObject({ code: 0 })
    const target = await database()
    expect(await rl('restore', backup, '--data', target)).toMatchObject({ code: 0 })
    const back = join(dir, 'from-database.json')
    expect(await rl('backup', back, '--data', target)).toMatchObject({ code: 0 })
    expect(backupOf(back).content).toEqual(backupOf(backup).content)
    await credentialsWork(await serve(target), secrets)
  }, 60_000)
})
