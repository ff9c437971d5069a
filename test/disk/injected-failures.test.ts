import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { copyFileSync, existsSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { createApp } from '../../src/app.ts'
import { captureStartState } from '../../src/fixtures/reset.ts'
import { openJsonFileStore } from '../../src/store/json-file/json-file.ts'
import type { Store } from '../../src/store/store.ts'
import { SERVICE_KEY } from '../helpers.ts'
import { removeDir, tempDir } from '../support/binary.ts'
import { expectDocumented } from '../support/openapi.ts'
import { type Fault, faultyFileSystem } from './failing-fs.ts'

// Write failures injected at each step of a durable write, through the store's file-system seam: the request that
// meets one gets a 503 problem, nothing acknowledged earlier is lost, the server writes again once the fault clears,
// and the refused write is absent after a restart (a clean one, and a crash at that moment).

let dirs: string[] = []
let file: string
beforeEach(() => {
  dirs = [tempDir('rock-legends-faults-')]
  file = join(dirs[0] as string, 'db.json')
})
afterEach(() => {
  for (const dir of dirs) removeDir(dir)
})

/** A server over a data file whose writes go through a file system that can be made to fail. */
async function serve(options: { compactAfterBytes?: number; reset?: boolean } = {}) {
  const disk = faultyFileSystem()
  const store = await openJsonFileStore(file, { fs: disk.fs, compactAfterBytes: options.compactAfterBytes })
  const reported: unknown[] = []
  const app = createApp({
    store,
    apiKeys: [SERVICE_KEY],
    report: (_, error) => reported.push(error),
    reset: options.reset ? await captureStartState(store) : undefined,
  })
  const call = async (method: string, path: string, body?: unknown) => {
    const headers: Record<string, string> = { 'x-api-key': SERVICE_KEY }
    if (body !== undefined) headers['content-type'] = 'application/json'
    const response = await app.handle(
      new Request(`http://localhost${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
      }),
    )
    const text = await response.text()
    await expectDocumented({ method, path, status: response.status, headers: response.headers, text })
    return { status: response.status, json: text ? JSON.parse(text) : undefined }
  }
  const names = async () => {
    const page = await call('GET', '/api/v1/artists?limit=100')
    return (page.json.data as { name: string }[]).map((artist) => artist.name)
  }
  return { disk, store, call, names, reported }
}

/** Copies the data file and journal as they are now: what a crash at this moment would leave. */
function crashCopy(): string {
  const dir = tempDir('rock-legends-faults-')
  dirs.push(dir)
  copyFileSync(file, join(dir, 'db.json'))
  if (existsSync(`${file}.journal`)) copyFileSync(`${file}.journal`, join(dir, 'db.json.journal'))
  return join(dir, 'db.json')
}

/**
 * Waits until a background compaction has folded the whole journal into the data file: up to 20 s, as a busy machine
 * (three test workers on two cores) may delay the compaction's writes by more than 2 s.
 */
async function folded() {
  const deadline = Date.now() + 20_000
  while (Date.now() < deadline && (statSync(`${file}.journal`, { throwIfNoEntry: false })?.size ?? 0) > 0)
    await Bun.sleep(10)
  expect(statSync(`${file}.journal`).size).toBe(0)
}

async function namesIn(path: string) {
  const store = await openJsonFileStore(path)
  try {
    return await namesOf(store)
  } finally {
    await store.close()
  }
}

const namesOf = async (store: Store) =>
  (await store.artists.list({ limit: 1000, offset: 0 })).items.map((artist) => artist.name)

const STORE_UNAVAILABLE = {
  status: 503,
  json: expect.objectContaining({ type: '/problems/store-unavailable', status: 503 }),
}

describe('a write the disk refuses', () => {
  // Earlier data lies in the data file (a first session, closed) and, but for faults met when the journal is
  // opened, in the journal too (a write of this session, before the fault).
  test.each<[string, Fault]>([
    ['disk full while appending', { step: 'write', code: 'ENOSPC', target: 'journal' }],
    [
      'disk full halfway through an append (a short write)',
      { step: 'write', code: 'ENOSPC', target: 'journal', short: 'then-full' },
    ],
    ['fsync failing', { step: 'sync', code: 'EIO', target: 'journal' }],
    ['an immutable journal', { step: 'write', code: 'EPERM', target: 'journal' }],
    ['permission denied opening the journal', { step: 'open', code: 'EACCES', target: 'journal' }],
    ['a read-only file system', { step: 'open', code: 'EROFS', target: 'any' }],
  ])('%s → 503, nothing earlier lost, writes resume, the refused one never appears', async (_, fault) => {
    const first = await serve()
    expect((await first.call('POST', '/api/v1/artists', { name: 'Kept' })).status).toBe(201)
    expect((await first.call('POST', '/api/v1/artists/1/albums', { name: 'Kept album', year: 1970 })).status).toBe(201)
    await first.store.close()
    const server = await serve()
    const kept = ['Kept']
    if (fault.step !== 'open') {
      expect((await server.call('POST', '/api/v1/artists', { name: 'Kept 2' })).status).toBe(201)
      kept.push('Kept 2')
    }
    server.disk.arm(fault)
    expect(await server.call('POST', '/api/v1/artists', { name: 'Refused' })).toMatchObject(STORE_UNAVAILABLE)
    expect(await server.call('PUT', '/api/v1/artists/1', { name: 'Refused rename' })).toMatchObject(STORE_UNAVAILABLE)
    expect(server.disk.state.attempts).toBeGreaterThan(0)
    expect(await server.names()).toEqual(kept)
    // Reported once for the outage, not once per refused write (src/http/error-handler.ts, `outageReporter`).
    expect(server.reported.length).toBe(1)
    const duringFault = crashCopy()
    server.disk.clear()
    expect((await server.call('POST', '/api/v1/artists', { name: 'After' })).status).toBe(201)
    expect(await server.names()).toEqual([...kept, 'After'])
    const afterFault = crashCopy()
    await server.store.close()
    expect(await namesIn(duringFault)).toEqual(kept)
    expect(await namesIn(afterFault)).toEqual([...kept, 'After'])
    expect(await namesIn(file)).toEqual([...kept, 'After'])
    const reopened = await openJsonFileStore(file)
    expect((await reopened.albums.listByArtist(1, { limit: 10, offset: 0 }))?.items.map((album) => album.name)).toEqual(
      ['Kept album'],
    )
    await reopened.close()
  })

  test('a write the disk completes only in part, then in full once space is back, is acknowledged whole', async () => {
    const server = await serve()
    expect((await server.call('POST', '/api/v1/artists', { name: 'Kept' })).status).toBe(201)
    server.disk.arm({ step: 'write', code: 'ENOSPC', target: 'journal', short: 'then-recovers' })
    expect((await server.call('POST', '/api/v1/artists', { name: 'Written in two goes' })).status).toBe(201)
    expect(server.disk.state.attempts).toBe(1)
    expect((await server.call('POST', '/api/v1/artists', { name: 'After' })).status).toBe(201)
    const expected = ['Kept', 'Written in two goes', 'After']
    expect(await namesIn(crashCopy())).toEqual(expected)
    await server.store.close()
    expect(await namesIn(file)).toEqual(expected)
  })

  test('many writers meeting a full disk together are all refused together, and nothing else changes', async () => {
    const server = await serve()
    await server.call('POST', '/api/v1/artists', { name: 'Kept' })
    server.disk.arm({ step: 'write', code: 'ENOSPC', target: 'journal', short: 'then-full' })
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => server.call('POST', '/api/v1/artists', { name: `Writer ${i}` })),
    )
    expect(answers.every((answer) => answer.status === 503)).toBe(true)
    server.disk.clear()
    const after = await Promise.all(
      Array.from({ length: 5 }, (_, i) => server.call('POST', '/api/v1/artists', { name: `After ${i}` })),
    )
    expect(after.map((answer) => answer.status)).toEqual([201, 201, 201, 201, 201])
    const copy = crashCopy()
    await server.store.close()
    const expected = ['Kept', 'After 0', 'After 1', 'After 2', 'After 3', 'After 4']
    expect(await namesIn(copy)).toEqual(expected)
    expect(await namesIn(file)).toEqual(expected)
  })
})

describe('a replacement of the whole document (POST /__admin/reset) the disk refuses', () => {
  // Earlier data lies in three places: the data file of a first session, a compaction of this one, and its journal.
  test.each<[string, Fault]>([
    ['disk full writing the new document', { step: 'write', code: 'ENOSPC', target: 'data' }],
    ['disk full halfway through it', { step: 'write', code: 'ENOSPC', target: 'data', short: 'then-full' }],
    ['permission denied creating the temporary file', { step: 'open', code: 'EACCES', target: 'data' }],
    ['the rename over the data file failing', { step: 'rename', code: 'EPERM', target: 'data' }],
    ['the rename emptying the journal failing', { step: 'rename', code: 'EXDEV', target: 'journal' }],
  ])('%s → 503, and the data stays as acknowledged, now and after a restart', async (_, fault) => {
    const first = await serve()
    expect((await first.call('POST', '/api/v1/artists', { name: 'Old' })).status).toBe(201)
    await first.store.close()
    const server = await serve({ reset: true, compactAfterBytes: 1 })
    const long = {
      name: 'Kept',
      description: 'A long description, so that the journal outgrows the data file. '.repeat(20),
    }
    expect((await server.call('POST', '/api/v1/artists', long)).status).toBe(201)
    await folded()
    expect((await server.call('POST', '/api/v1/artists', { name: 'Kept too' })).status).toBe(201)
    server.disk.arm(fault)
    expect(await server.call('POST', '/__admin/reset')).toMatchObject({ status: 503 })
    const kept = ['Old', 'Kept', 'Kept too']
    expect(await server.names()).toEqual(kept)
    expect(await namesIn(crashCopy())).toEqual(kept)
    server.disk.clear()
    expect((await server.call('POST', '/api/v1/artists', { name: 'After' })).status).toBe(201)
    expect(await server.names()).toEqual([...kept, 'After'])
    expect(await namesIn(crashCopy())).toEqual([...kept, 'After'])
    expect((await server.call('POST', '/__admin/reset')).status).toBe(204)
    expect(await server.names()).toEqual(['Old'])
    const afterReset = crashCopy()
    await server.store.close()
    expect(await namesIn(afterReset)).toEqual(['Old'])
    expect(await namesIn(file)).toEqual(['Old'])
  })
})

describe('folding the journal into the data file (compaction) when the disk refuses', () => {
  test.each<[string, Fault]>([
    ['disk full', { step: 'write', code: 'ENOSPC', target: 'data' }],
    [
      'disk full halfway through the new data file',
      { step: 'write', code: 'ENOSPC', target: 'data', short: 'then-full' },
    ],
    ['the rename failing', { step: 'rename', code: 'EPERM', target: 'data' }],
    ['the journal rename failing', { step: 'rename', code: 'EXDEV', target: 'journal' }],
  ])('%s: writes go on (the journal holds them), and nothing is lost once it works again', async (_, fault) => {
    const server = await serve({ compactAfterBytes: 1 })
    server.disk.arm(fault)
    for (let i = 0; i < 5; i++)
      expect((await server.call('POST', '/api/v1/artists', { name: `A${i}` })).status).toBe(201)
    // The compaction the writes started has tried the armed step (asked until then, for 5 s).
    for (let i = 0; i < 500 && server.disk.state.attempts === 0; i++) await Bun.sleep(10)
    expect(server.disk.state.attempts).toBeGreaterThan(0)
    expect(await namesIn(crashCopy())).toEqual(['A0', 'A1', 'A2', 'A3', 'A4'])
    server.disk.clear()
    // A5 outweighs the data file of A0–A4, so the journal is due for folding after it (a journal is folded once it
    // is as large as the data file) whatever a compaction still running meanwhile does: if it fails, A5's commit
    // tries again once it is over; if it succeeds, A5 alone is still due.
    const a5 = { name: 'A5', description: 'A long story. '.repeat(300) }
    expect((await server.call('POST', '/api/v1/artists', a5)).status).toBe(201)
    await folded()
    // Folded at last: the data file alone holds everything.
    expect(JSON.parse(readFileSync(file, 'utf8')).artists).toHaveLength(6)
    await server.store.close()
    expect(await namesIn(file)).toEqual(['A0', 'A1', 'A2', 'A3', 'A4', 'A5'])
  })

  test('a new data file the disk completes only in part, then in full once space is back, is whole', async () => {
    const server = await serve({ compactAfterBytes: 1 })
    server.disk.arm({ step: 'write', code: 'ENOSPC', target: 'data', short: 'then-recovers' })
    expect((await server.call('POST', '/api/v1/artists', { name: 'Folded in two goes' })).status).toBe(201)
    await folded()
    expect(server.disk.state.attempts).toBe(1)
    // The data file alone (the journal is empty now) must hold it, whole.
    expect(await namesIn(crashCopy())).toEqual(['Folded in two goes'])
    await server.store.close()
    expect(await namesIn(file)).toEqual(['Folded in two goes'])
  })

  test('a write acknowledged while a refused compaction is still running is folded in once that one has failed', async () => {
    // The compaction the first write starts meets the full disk and hangs there until `stuck` lets go; the disk
    // works again meanwhile, and a second write is acknowledged. No write follows it that could start another.
    const server = await serve({ compactAfterBytes: 1 })
    const stuck = Promise.withResolvers<void>()
    server.disk.arm({ step: 'write', code: 'ENOSPC', target: 'data', until: stuck.promise })
    expect((await server.call('POST', '/api/v1/artists', { name: 'Before' })).status).toBe(201)
    for (let i = 0; i < 500 && server.disk.state.attempts === 0; i++) await Bun.sleep(10)
    expect(server.disk.state.attempts).toBe(1)
    server.disk.clear()
    expect((await server.call('POST', '/api/v1/artists', { name: 'During' })).status).toBe(201)
    stuck.resolve()
    await folded()
    expect(JSON.parse(readFileSync(file, 'utf8')).artists.map((artist: { name: string }) => artist.name)).toEqual([
      'Before',
      'During',
    ])
    await server.store.close()
    expect(await namesIn(file)).toEqual(['Before', 'During'])
  })

  test('on close: the close fails loudly, and the journal still holds every write for the next start', async () => {
    const server = await serve()
    for (let i = 0; i < 3; i++) await server.call('POST', '/api/v1/artists', { name: `A${i}` })
    server.disk.arm({ step: 'rename', code: 'EPERM', target: 'data' })
    await expect(server.store.close()).rejects.toThrow(/EPERM/)
    expect(readFileSync(`${file}.journal`, 'utf8').trim().split('\n')).toHaveLength(3)
    expect(existsSync(`${file}.lock`)).toBe(false)
    expect(await namesIn(file)).toEqual(['A0', 'A1', 'A2'])
  })
})
