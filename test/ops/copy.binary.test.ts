/**
 * `rock-legends copy` against the compiled executable: a store made by the executable (seeded, accounts signed up,
 * tokens from logins, personal keys, artists created) moved JSON → PostgreSQL → JSON is equal to the original; a
 * replica started over the copied database serves the old URLs, tokens and keys, and gives the next ids after the
 * old ones; a non-empty target, a store a running server owns and a source with problems are refused, changing
 * nothing; `--replace` keeps what it replaces aside; a copy killed with SIGKILL leaves the target old or new.
 */

import { describe, expect, test } from 'bun:test'
import { copyFileSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Album } from '../../src/model/album.ts'
import type { StoreDocument } from '../../src/model/store-document.ts'
import { contentChecksum, decodeBackup } from '../../src/ops/backup-format.ts'
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

const KEY = 'copy-test-service-key'
const { directory, serve, stop } = binaryFixtures('rock-legends-copy-', KEY)

/** Runs `rock-legends ARGS` to its exit, in `cwd` (where a copy into a database keeps what it replaces). */
const rl = (cwd: string, ...args: string[]) => runBinary(args, { cwd })

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

/** What a store made by the executable holds besides the seed: its accounts' secrets and the URLs of what they made. */
interface Made {
  tokens: string[]
  keys: string[]
  urls: string[]
}

/**
 * Two accounts signed up, each logged in (a bearer token) with a personal API key; one token logged out (revoked);
 * artists and albums created with the tokens and keys.
 */
async function populate(server: RunningBinary): Promise<Made> {
  const made: Made = { tokens: [], keys: [], urls: ['/api/v1/artists?limit=5&offset=30', '/api/v1/artists?q=moved'] }
  for (const [name, email] of [
    ['Carlos', 'carlos@rock-legends.com'],
    ['Nora', 'Nora@Example.COM'],
  ] as const) {
    expect((await post(server, '/api/v1/user/signup', { name, email, password: 'i-love-rock' })).status).toBe(201)
    const login = await post(server, '/api/v1/user/login', { email, password: 'i-love-rock' })
    expect(login.status).toBe(200)
    const token = login.body.token as string
    const auth = { authorization: `Bearer ${token}` }
    const created = await post(server, '/api/v1/user/api-keys', { name: `${name}'s key` }, auth)
    expect(created.status).toBe(201)
    const key = created.body.key as string
    const artist = await post(server, '/api/v1/artists', { name: `${name} Moved` }, auth)
    expect(artist.status).toBe(201)
    const album = await post(
      server,
      `/api/v1/artists/${artist.body.id}/albums`,
      { name: 'Kept', year: 1999 },
      {
        'x-api-key': key,
      },
    )
    expect(album.status).toBe(201)
    made.tokens.push(token)
    made.keys.push(key)
    made.urls.push(`/api/v1/artists/${artist.body.id}`, `/api/v1/artists/${artist.body.id}/albums`)
    made.urls.push(`/api/v1/albums/${album.body.id}`)
  }
  // A token logged out stays refused after the move.
  const extra = await post(server, '/api/v1/user/login', { email: 'carlos@rock-legends.com', password: 'i-love-rock' })
  expect(
    (await post(server, '/api/v1/user/logout', {}, { authorization: `Bearer ${extra.body.token}` })).status,
  ).toBeLessThan(300)
  made.tokens.push(`revoked:${extra.body.token}`)
  return made
}

/** What each URL answers on `server`, by URL. */
async function answers(server: RunningBinary, urls: string[]): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {}
  for (const url of urls) {
    const { status, body } = await call(server, url)
    out[url] = { status, body }
  }
  return out
}

/** The old tokens and keys work on `server` (a logged-out one stays refused), and write with the next ids. */
async function secretsWork(server: RunningBinary, made: Made, nextArtistId: number) {
  for (const entry of made.tokens) {
    const revoked = entry.startsWith('revoked:')
    const token = entry.replace('revoked:', '')
    const me = await call(server, '/api/v1/user/me', { headers: { authorization: `Bearer ${token}` } })
    expect(me.status).toBe(revoked ? 401 : 200)
  }
  const written = await post(
    server,
    '/api/v1/artists',
    { name: 'After The Move' },
    { 'x-api-key': made.keys[0] as string },
  )
  expect(written.status).toBe(201)
  expect(written.body.id).toBe(nextArtistId)
  const token = made.tokens[1] as string
  const album = await post(
    server,
    `/api/v1/artists/${nextArtistId}/albums`,
    { name: 'New', year: 2026 },
    {
      authorization: `Bearer ${token}`,
    },
  )
  expect(album.status).toBe(201)
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

/** What the store `data` holds, as a backup taken by the executable says. */
async function contentOf(dir: string, data: string): Promise<StoreDocument> {
  const file = join(dir, `content-${Bun.randomUUIDv7()}.json`)
  expect(await rl(dir, 'backup', file, '--data', data)).toMatchObject({ code: 0 })
  return backupOf(file).content
}

describe('usage', () => {
  test('copy needs --from and --to, takes nothing else, and says so with exit 2', async () => {
    const dir = directory()
    for (const args of [
      ['copy'],
      ['copy', '--from', 'a.json'],
      ['copy', '--to', 'b.json'],
      ['copy', '--from', 'a.json', '--to', 'b.json', '--data', 'c.json'],
      ['copy', '--from', ':memory:', '--to', 'b.json'],
      ['copy', 'a.json', 'b.json'],
    ]) {
      const result = await rl(dir, ...args)
      expect(result.code).toBe(2)
      expect(result.stderr).toContain('rock-legends copy: ')
      expect(result.stderr).toContain('(see rock-legends copy --help)')
    }
    const help = await rl(dir, 'copy', '--help')
    expect(help.code).toBe(0)
    expect(help.stdout).toContain('rock-legends copy --from FILE|postgres://… --to FILE|postgres://… [--replace]')
    expect((await rl(dir, '--help')).stdout).toContain('copy --from SOURCE --to TARGET [--replace]')
  })
})

describe('between data files', () => {
  test('refuses a source or target a running server owns, naming its pid and address; a missing or same source', async () => {
    const dir = directory()
    const source = join(dir, 'source.json')
    const target = join(dir, 'target.json')
    const server = await serve(source, ['--seed'])
    const owned = await rl(dir, 'copy', '--from', source, '--to', target)
    expect(owned.code).toBe(1)
    expect(owned.stderr).toContain(`${source} is in use by the server with pid ${server.process.pid} at ${server.url}`)
    expect(existsSync(target)).toBe(false)
    await stop(server)

    const other = await serve(target)
    const into = await rl(dir, 'copy', '--from', source, '--to', target)
    expect(into.code).toBe(1)
    expect(into.stderr).toContain(`${target} is in use by the server with pid ${other.process.pid} at ${other.url}`)
    await stop(other)

    const missing = await rl(dir, 'copy', '--from', join(dir, 'nothing.json'), '--to', join(dir, 'new.json'))
    expect(missing.code).toBe(1)
    expect(missing.stderr).toContain('does not exist')
    expect(existsSync(join(dir, 'new.json'))).toBe(false)
    const same = await rl(dir, 'copy', '--from', source, '--to', `${source}.journal`)
    expect(same.code).toBe(1)
    expect(same.stderr).toContain('the same store')
  })

  test('refuses a non-empty target (saying what it holds) unless --replace, which keeps it aside', async () => {
    const dir = directory()
    const source = join(dir, 'source.json')
    await stop(await serve(source, ['--seed']))
    const target = join(dir, 'target', 'db.json')
    const server = await serve(target)
    const made = await populate(server)
    await stop(server, 'SIGKILL') // the writes are in the journal alone
    const old = fileContent(target)
    const oldText = readFileSync(target, 'utf8')

    const refused = await rl(dir, 'copy', '--from', source, '--to', target)
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain(`${target} is not empty: it holds 2 artists, 2 albums, 2 users, 5 credentials`)
    expect(refused.stderr).toContain('--replace')
    expect(readFileSync(target, 'utf8')).toBe(oldText)
    expect(readdirSync(join(dir, 'target')).filter((name) => name.includes('before-copy'))).toEqual([])

    const replaced = await rl(dir, 'copy', '--from', source, '--to', target, '--replace')
    expect(replaced).toMatchObject({ code: 0 })
    expect(fileContent(target)).toEqual(fileContent(source))
    const aside = readdirSync(join(dir, 'target')).filter((name) => name.includes('.before-copy-'))
    expect(aside).toHaveLength(2) // the data file and its journal
    const kept = join(dir, 'target', aside.find((name) => !name.endsWith('.journal')) as string)
    expect(replaced.stdout).toContain(`what it held is kept in ${kept}`)
    expect(fileContent(kept)).toEqual(old)
    // What it replaced is gone with the rest: the old accounts' tokens are unknown now.
    const after = await serve(target)
    const me = await call(after, '/api/v1/user/me', { headers: { authorization: `Bearer ${made.tokens[0]}` } })
    expect(me.status).toBe(401)
  })

  test('refuses a source with problems, naming each, and changes nothing', async () => {
    const dir = directory()
    const source = join(dir, 'source.json')
    await stop(await serve(source, ['--seed']))
    const content = fileContent(source)
    content.albums.push({
      ...(content.albums[0] as Album),
      id: content.counters.albums + 1,
      artistId: 999,
    })
    content.counters.albums += 1
    writeFileSync(source, JSON.stringify(content), { mode: 0o600 })
    const target = join(dir, 'target.json')
    const refused = await rl(dir, 'copy', '--from', source, '--to', target)
    expect(refused.code).toBe(1)
    expect(refused.stdout).toContain('belongs to artist 999, which does not exist')
    expect(refused.stderr).toContain(`${source} has problems (above), so nothing was copied`)
    expect(existsSync(target)).toBe(false)
  })
})

describe.skipIf(skipWithoutPostgres())('between a data file and PostgreSQL', () => {
  let postgres: TestPostgres
  const database = async () => {
    postgres ??= await testPostgres()
    return postgres.url(await postgres.freshDatabase())
  }

  test('JSON → PostgreSQL → JSON gives back the original; a replica over the copy serves the old URLs, tokens and keys', async () => {
    const dir = directory()
    const data = join(dir, 'db.json')
    const server = await serve(data, ['--seed'])
    const made = await populate(server)
    const before = await answers(server, made.urls)
    // Killed: the last writes are in the journal alone, which the copy must read too.
    await stop(server, 'SIGKILL')
    expect(readFileSync(`${data}.journal`, 'utf8').length).toBeGreaterThan(0)
    const original = fileContent(data)
    const journal = readFileSync(`${data}.journal`, 'utf8')

    const db = await database()
    const there = await rl(dir, 'copy', '--from', data, '--to', db)
    expect(there).toMatchObject({ code: 0, stderr: '' })
    expect(there.stdout).toContain(`copied ${data} to the database at `)
    expect(there.stdout).toContain('34 artists, 309 albums, 2 users, 5 credentials')
    expect(there.stdout).toContain(`reads back sound and the same: checksum ${contentChecksum(original)}`)
    expect(there.stdout).toContain('held no records: nothing was replaced')
    // The source is left as it was, journal and all.
    expect(readFileSync(`${data}.journal`, 'utf8')).toBe(journal)
    expect(await contentOf(dir, db)).toEqual(original)
    // And from one database to another.
    const other = await database()
    expect(await rl(dir, 'copy', '--from', db, '--to', other)).toMatchObject({ code: 0, stderr: '' })
    expect(await contentOf(dir, other)).toEqual(original)

    const back = join(dir, 'back', 'db.json')
    const again = await rl(dir, 'copy', '--from', db, '--to', back)
    expect(again).toMatchObject({ code: 0, stderr: '' })
    expect(fileContent(back)).toEqual(original)
    // It holds password hashes: readable by its owner alone, as a server makes its data file.
    expect(lstatSync(back).mode & 0o777).toBe(0o600)
    expect(readFileSync(back, 'utf8')).not.toContain(made.tokens[0] as string)
    expect(contentChecksum(fileContent(back))).toBe(contentChecksum(original))

    // A replica over the copied database: the same answers at the same URLs, the old secrets work, and the next ids
    // follow the old ones.
    const replica = await serve(db)
    expect(await answers(replica, made.urls)).toEqual(before)
    await secretsWork(replica, made, original.counters.artists + 1)
    // And the data file copied back serves them as well.
    const file = await serve(back)
    expect(await answers(file, made.urls)).toEqual(before)
    await secretsWork(file, made, original.counters.artists + 1)
  }, 60_000)

  test('refuses a database another connection uses, as source or target; a non-empty one unless --replace', async () => {
    const dir = directory()
    const data = join(dir, 'db.json')
    const fileServer = await serve(data, ['--seed'])
    // One artist more than the seed: a store that differs from the database's reset point (below).
    expect((await post(fileServer, '/api/v1/artists', { name: 'Only In The File' }, { 'x-api-key': KEY })).status).toBe(
      201,
    )
    await stop(fileServer)
    const db = await database()
    // With --allow-reset: the database keeps a reset point (the seeded catalogue, before the accounts below).
    const replica = await serve(db, ['--seed', '--allow-reset'])
    const populated = await populate(replica)
    expect(populated.keys).toHaveLength(2)

    const into = await rl(dir, 'copy', '--from', data, '--to', db)
    expect(into.code).toBe(1)
    expect(into.stderr).toMatch(/the database at .* is in use by \d+ other connections? \(pid \d+ from /)
    expect(into.stderr).toContain('a copy fills a store only while no server uses it; stop the replicas first')
    const from = await rl(dir, 'copy', '--from', db, '--to', join(dir, 'out.json'))
    expect(from.code).toBe(1)
    expect(from.stderr).toContain('is in use by')
    expect(from.stderr).toContain('a copy reads a store only while no server uses it')
    expect(existsSync(join(dir, 'out.json'))).toBe(false)
    await stop(replica)
    const old = await contentOf(dir, db)

    const refused = await rl(dir, 'copy', '--from', data, '--to', db)
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain('is not empty: it holds 34 artists, 309 albums, 2 users, 5 credentials')
    expect(await contentOf(dir, db)).toEqual(old)

    const replaced = await rl(dir, 'copy', '--from', data, '--to', db, '--replace')
    expect(replaced).toMatchObject({ code: 0 })
    const aside = /what it held is kept in (\S+)/.exec(replaced.stdout)?.[1] as string
    expect(aside).toStartWith(join(dir, 'rock-legends.before-copy-'))
    expect(backupOf(aside).content).toEqual(old)
    expect(lstatSync(aside).mode & 0o777).toBe(0o600)
    expect(await contentOf(dir, db)).toEqual(fileContent(data))
    // The reset point of the data it replaced is forgotten: a replica with --allow-reset resets to the copy, not to it.
    const resettable = await serve(db, ['--allow-reset'])
    expect((await post(resettable, '/api/v1/artists', { name: 'Gone After Reset' }, { 'x-api-key': KEY })).status).toBe(
      201,
    )
    expect((await call(resettable, '/__admin/reset', { method: 'POST', headers: { 'x-api-key': KEY } })).status).toBe(
      204,
    )
    await stop(resettable)
    expect(await contentOf(dir, db)).toEqual(fileContent(data))
    // What it kept aside restores: the replaced data was not lost.
    expect(await rl(dir, 'restore', aside, '--data', db)).toMatchObject({ code: 0 })
    expect(await contentOf(dir, db)).toEqual(old)
  }, 60_000)

  test('copy --replace into PostgreSQL killed with SIGKILL at any moment leaves the old data or the new', async () => {
    await ensureBinary()
    const dir = directory()
    // The new data: a large data file, so that the copy takes a while.
    const seededFile = join(dir, 'seeded', 'db.json')
    await stop(await serve(seededFile, ['--seed']))
    const source = join(dir, 'source', 'db.json')
    const artists = writeLargeDataFile(source, fileContent(seededFile))
    const newSum = contentChecksum(fileContent(source))

    // The old data: the seeded catalogue with accounts, in a database, and kept as a backup to put back each run.
    const db = await database()
    const server = await serve(db, ['--seed'])
    await populate(server)
    await stop(server)
    const oldBackup = join(dir, 'old.json')
    expect(await rl(dir, 'backup', oldBackup, '--data', db)).toMatchObject({ code: 0 })
    const oldSum = contentChecksum(backupOf(oldBackup).content)
    const reset = async () => {
      expect(await rl(dir, 'restore', oldBackup, '--data', db)).toMatchObject({ code: 0 })
    }

    const started = Date.now()
    expect(await rl(dir, 'copy', '--from', source, '--to', db, '--replace')).toMatchObject({ code: 0 })
    const duration = Date.now() - started
    expect(contentChecksum(await contentOf(dir, db))).toBe(newSum)

    // `oldWithAside`: killed mid-copy, after the old data was kept aside and before the new was committed.
    const outcomes = { old: 0, oldWithAside: 0, new: 0 }
    const runDir = (run: number) => join(dir, `run-${run}`)
    await killedAtMoments({
      runs: 8,
      duration,
      spread: 1.2,
      start: async (run) => {
        await reset()
        mkdirSync(runDir(run))
        return { args: ['copy', '--from', source, '--to', db, '--replace'], cwd: runDir(run) }
      },
      check: async (run) => {
        const sum = contentChecksum(await contentOf(runDir(run), db))
        expect([oldSum, newSum]).toContain(sum)
        if (sum === newSum) {
          outcomes.new += 1
          // The new data only once the old was kept aside, whole.
          const kept = readdirSync(runDir(run)).find((name) => name.startsWith('rock-legends.before-copy-')) as string
          expect(kept).toBeDefined()
          expect(contentChecksum(backupOf(join(runDir(run), kept)).content)).toBe(oldSum)
        } else if (readdirSync(runDir(run)).some((name) => /^rock-legends\.before-copy-.*\.json$/.test(name)))
          outcomes.oldWithAside += 1
        else outcomes.old += 1
      },
    })
    expect(outcomes.new).toBeGreaterThan(0)
    console.log(
      `copy of ${artists} artists into PostgreSQL: ${duration} ms whole; after SIGKILL: ${JSON.stringify(outcomes)}`,
    )
  }, 180_000)

  test('copy --replace into a data file killed with SIGKILL at any moment leaves the old data or the new', async () => {
    await ensureBinary()
    const dir = directory()
    const db = await database()
    await stop(await serve(db, ['--seed']))
    const newSum = contentChecksum(await contentOf(dir, db))
    // The old data: large, with a journal, as a crashed server leaves it.
    const seededFile = join(dir, 'seeded', 'db.json')
    await stop(await serve(seededFile, ['--seed']))
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
    expect(await rl(dir, 'copy', '--from', db, '--to', fresh(0), '--replace')).toMatchObject({ code: 0 })
    const duration = Date.now() - started

    // `oldWithAside`: killed mid-copy, after the old data was kept aside and before the new took its place.
    const outcomes = { old: 0, oldWithAside: 0, new: 0 }
    await killedAtMoments({
      runs: 8,
      duration,
      spread: 1.2,
      start: (run) => ({ args: ['copy', '--from', db, '--to', fresh(run), '--replace'] }),
      check: (run) => {
        const sum = contentChecksum(fileContent(join(dir, `run-${run}`, 'db.json')))
        expect([oldSum, newSum]).toContain(sum)
        if (sum === newSum) {
          outcomes.new += 1
          const kept = readdirSync(join(dir, `run-${run}`)).find((name) => /before-copy-[^.]*Z$/.test(name))
          expect(kept).toBeDefined()
          expect(contentChecksum(fileContent(join(dir, `run-${run}`, kept as string)))).toBe(oldSum)
        } else if (readdirSync(join(dir, `run-${run}`)).some((name) => /before-copy-[^.]*Z$/.test(name)))
          outcomes.oldWithAside += 1
        else outcomes.old += 1
      },
    })
    expect(outcomes.new).toBeGreaterThan(0)
    console.log(
      `copy over ${artists} artists in a data file: ${duration} ms whole; after SIGKILL: ${JSON.stringify(outcomes)}`,
    )
  }, 180_000)
})
