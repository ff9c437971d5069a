/**
 * Live updates: `GET /api/v1/events` in-process (`app.handle`), over this run's backend (the memory store, or
 * PostgreSQL in the SQL run): each change kind with its URL and representation, resuming with `Last-Event-ID`, the
 * reload outside the window, heartbeats, a slow reader dropped, the bounds per address and in total.
 */
import { afterEach, describe, expect, test } from 'bun:test'
import { createApp } from '../../src/app.ts'
import type { EventStreamLimits } from '../../src/events/streams.ts'
import { CHANGE_WINDOW, ChangeHub, changeBytes } from '../../src/store/changes.ts'
import type { Store } from '../../src/store/store.ts'
import { testStore } from '../support/backends.ts'
import { dataOf, type SseReader, sse } from './sse.ts'

const KEY = 'events-test-key'
const asService = { 'x-api-key': KEY, 'content-type': 'application/json' }

let open: SseReader[] = []
let stores: Store[] = []
afterEach(async () => {
  await Promise.all(open.map((stream) => stream.close()))
  open = []
  await Promise.all(stores.map((store) => store.close().catch(() => {})))
  stores = []
})

function setUp(events: Partial<EventStreamLimits> = {}, options: { cors?: string[]; readOnly?: boolean } = {}) {
  const store = testStore()
  stores.push(store)
  const app = createApp({ store, apiKeys: [KEY], report: () => {}, events, ...options })
  const call = (path: string, init: RequestInit = {}) => app.handle(new Request(`http://localhost${path}`, init))
  const connect = async (headers: Record<string, string> = {}) => {
    const response = await call('/api/v1/events', { headers })
    if (response.status !== 200) return { response, stream: undefined }
    const stream = sse(response)
    open.push(stream)
    return { response, stream }
  }
  /** A stream that has read its `ready` event. */
  const follow = async (headers: Record<string, string> = {}) => {
    const { stream } = await connect(headers)
    if (!stream) throw new Error('the stream was refused')
    const ready = await stream.nextEvent()
    return { stream, ready }
  }
  const createArtist = async (body: object) => {
    const response = await call('/api/v1/artists', { method: 'POST', headers: asService, body: JSON.stringify(body) })
    expect(response.status).toBe(201)
    return (await response.json()) as { id: number; name: string }
  }
  return { app, store, call, connect, follow, createArtist }
}

describe('the event stream', () => {
  test('answers an event stream that no proxy buffers or caches, starting with `ready`', async () => {
    const { connect } = setUp()
    const { response, stream } = await connect()
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8')
    expect(response.headers.get('cache-control')).toBe('no-cache, no-transform')
    expect(response.headers.get('x-accel-buffering')).toBe('no')
    expect(response.headers.get('x-content-type-options')).toBe('nosniff')
    expect((await stream?.next())?.retry).toBe(3000)
    const ready = await stream?.nextEvent()
    expect(ready?.event).toBe('ready')
    expect(ready?.id).toBeString()
    expect(dataOf(ready ?? {})).toEqual({
      heartbeatSeconds: 15,
      window: { events: CHANGE_WINDOW.events, minutes: CHANGE_WINDOW.ms / 60_000 },
    })
  })

  test('each change comes with an id, the URL of the resource, its representation as GET answers it, when and by whom', async () => {
    const { follow, call, createArtist } = setUp()
    const { stream } = await follow()
    const artist = await createArtist({ name: 'Luis Alberto Spinetta', band: 'Almendra' })
    const created = await stream.nextEvent()
    expect(created.event).toBe('artist-created')
    const url = `/api/v1/artists/${artist.id}`
    // When and by whom, as the artist's history says it.
    const made = { at: expect.stringMatching(/^\d{4}-\d\d-\d\dT[\d:.]+Z$/), by: 'service' }
    expect(dataOf(created)).toEqual({ url, artist: await (await call(url)).json(), ...made })
    expect(Math.abs(Date.parse(dataOf(created).at) - Date.now())).toBeLessThan(60_000)

    const put = await call(url, {
      method: 'PUT',
      headers: asService,
      body: JSON.stringify({ name: 'Luis Alberto Spinetta', band: 'Pescado Rabioso' }),
    })
    expect(put.status).toBe(200)
    const updated = await stream.nextEvent()
    expect(updated.event).toBe('artist-updated')
    expect(dataOf(updated)).toEqual({ url, artist: await (await call(url)).json(), ...made })

    const post = await call(`${url}/albums`, {
      method: 'POST',
      headers: asService,
      body: JSON.stringify({ name: 'Artaud', year: 1973 }),
    })
    expect(post.status).toBe(201)
    const album = (await post.json()) as { id: number }
    const added = await stream.nextEvent()
    expect(added.event).toBe('album-created')
    const albumUrl = `${url}/albums/${album.id}`
    expect(dataOf(added)).toEqual({ url: albumUrl, album: await (await call(albumUrl)).json(), ...made })

    // Every id differs; refusals and the deprecated delete (which deletes nothing) make no event.
    expect(new Set([created.id, updated.id, added.id]).size).toBe(3)
    expect((await call(url, { method: 'DELETE', headers: asService })).status).toBe(400)
    expect((await call('/api/v1/artists', { method: 'POST', headers: asService, body: '{}' })).status).toBe(400)
    const last = await createArtist({ name: 'Pappo' })
    expect(dataOf(await stream.nextEvent()).artist).toEqual(last)
  })

  test('a client back with Last-Event-ID gets what it missed, then `ready` with the latest id', async () => {
    const { follow, createArtist } = setUp()
    const first = await follow()
    await first.stream.close()
    const names = ['Charly García', 'Nito Mestre', 'León Gieco']
    for (const name of names) await createArtist({ name })

    const back = await follow({ 'last-event-id': first.ready.id as string })
    // `follow` took the first event: the missed ones come before `ready`.
    const missed = [back.ready, await back.stream.nextEvent(), await back.stream.nextEvent()]
    expect(missed.map((event) => dataOf(event).artist.name)).toEqual(names)
    const ready = await back.stream.nextEvent()
    expect(ready.event).toBe('ready')
    expect(ready.id).toBe(missed[2]?.id)

    // From the middle: only what came after.
    const middle = await follow({ 'last-event-id': missed[0]?.id as string })
    expect(dataOf(middle.ready).artist.name).toBe('Nito Mestre')

    // Up to date: nothing missed, and the next change comes live.
    const current = await follow({ 'last-event-id': ready.id as string })
    expect(current.ready.event).toBe('ready')
    await createArtist({ name: 'Fito Páez' })
    expect(dataOf(await current.stream.nextEvent()).artist.name).toBe('Fito Páez')
  })

  test('an id outside the window, or unknown, gets `reload`; the stream goes on', async () => {
    const { follow, store, createArtist } = setUp()
    for (const lastId of ['no-such-event', 'x'.repeat(1000)]) {
      const { stream, ready } = await follow({ 'last-event-id': lastId })
      expect(ready.event).toBe('reload')
      expect(dataOf(ready)).toEqual({ reason: 'outside-window' })
      expect((await stream.nextEvent()).event).toBe('ready')
      await stream.close()
    }
    const old = await follow()
    await old.stream.close()
    // One more change than the window holds, through the store (the quota of an account is not the point here).
    await Promise.all(
      Array.from({ length: CHANGE_WINDOW.events + 1 }, (_, i) => store.artists.insert({ name: `Artist ${i}` })),
    )
    const late = await follow({ 'last-event-id': old.ready.id as string })
    expect(late.ready.event).toBe('reload')
    const ready = await late.stream.nextEvent()
    expect(ready.event).toBe('ready')
    // Its id is current: coming back with it misses nothing.
    await late.stream.close()
    await createArtist({ name: 'Miguel Abuelo' })
    const resumed = await follow({ 'last-event-id': ready.id as string })
    expect(dataOf(resumed.ready).artist.name).toBe('Miguel Abuelo')
  }, 60_000)

  test('a reset of the data sends `reload` to every stream, and older ids are unknown after it', async () => {
    const { follow, store, createArtist } = setUp()
    const point = await store.resetPoint()
    const before = await follow()
    await createArtist({ name: 'Gone after the reset' })
    expect((await before.stream.nextEvent()).event).toBe('artist-created')
    await store.restore(point)
    const reload = await before.stream.nextEvent()
    expect(reload.event).toBe('reload')
    expect(dataOf(reload)).toEqual({ reason: 'reset' })
    const again = await follow({ 'last-event-id': before.ready.id as string })
    expect(again.ready.event).toBe('reload')
    // The reset's id is where a client that reloaded stands.
    await createArtist({ name: 'After the reset' })
    const resumed = await follow({ 'last-event-id': reload.id as string })
    expect(dataOf(resumed.ready).artist.name).toBe('After the reset')
  })

  test('a quiet stream gets a heartbeat comment', async () => {
    const { follow } = setUp({ heartbeatMs: 40 })
    const { stream } = await follow()
    expect(await stream.next(2000)).toEqual({ comment: 'heartbeat' })
    expect(await stream.next(2000)).toEqual({ comment: 'heartbeat' })
  })

  test('a reader that does not read is dropped once its backlog passes the bound, and its place is freed', async () => {
    const { connect, follow, store } = setUp({ perClient: 1, maxPendingBytes: 64 * 1024 })
    const slow = await connect()
    expect(slow.response.status).toBe(200)
    // The only place of this address is taken.
    expect((await connect()).response.status).toBe(429)
    // Never read: about 10 KB an event, far more than the bound and the stream's own buffer.
    const description = 'x'.repeat(10_000)
    for (let i = 0; i < 40; i++) await store.artists.insert({ name: `Big ${i}`, description })
    // The streams are handed the changes by a timer (after the writes are answered): this one comes after it.
    await new Promise((resolve) => setTimeout(resolve, 0))
    // Dropped: the place is free again, and the stream ends before all it would have carried.
    const { stream } = await follow()
    expect(stream).toBeDefined()
    let events = 0
    let ended = false
    const reader = slow.stream as SseReader
    try {
      for (;;) {
        const message = await reader.next(1000)
        if (message.event === 'artist-created') events += 1
      }
    } catch (error) {
      ended = String(error).includes('ended')
    }
    expect(ended).toBe(true)
    expect(events).toBeLessThan(40)
  })

  test('streams are bounded per address and in total: 429 with Retry-After past either', async () => {
    const perClient = setUp({ perClient: 2 })
    const a = await perClient.connect()
    const b = await perClient.connect()
    expect([a.response.status, b.response.status]).toEqual([200, 200])
    const refused = await perClient.connect()
    expect(refused.response.status).toBe(429)
    expect(refused.response.headers.get('retry-after')).toBe('30')
    expect(refused.response.headers.get('content-type')).toBe('application/problem+json')
    expect(((await refused.response.json()) as { detail: string }).detail).toContain('2 event streams open')
    // A stream that ends gives its place back.
    await a.stream?.close()
    await Bun.sleep(20)
    expect((await perClient.connect()).response.status).toBe(200)

    const total = setUp({ perClient: 10, total: 1 })
    expect((await total.connect()).response.status).toBe(200)
    const full = await total.connect()
    expect(full.response.status).toBe(429)
    expect(((await full.response.json()) as { detail: string }).detail).toContain('as many event streams open')
  })

  test('read-only servers stream; CORS answers carry their headers; Last-Event-ID may be sent cross-origin', async () => {
    const readOnly = setUp({}, { readOnly: true })
    expect((await readOnly.connect()).response.status).toBe(200)
    const cors = setUp({}, { cors: ['https://demo.example'] })
    const { response } = await cors.connect({ origin: 'https://demo.example' })
    expect(response.headers.get('access-control-allow-origin')).toBe('https://demo.example')
    const preflight = await cors.call('/api/v1/events', {
      method: 'OPTIONS',
      headers: {
        origin: 'https://demo.example',
        'access-control-request-method': 'GET',
        'access-control-request-headers': 'last-event-id',
      },
    })
    expect(preflight.headers.get('access-control-allow-headers')).toContain('Last-Event-ID')
  })

  test('the stream is in /openapi.json, answering text/event-stream', async () => {
    const { call } = setUp()
    const document = (await (await call('/openapi.json')).json()) as {
      paths: Record<string, { get: { responses: Record<string, { content: Record<string, unknown> }> } }>
    }
    const operation = document.paths['/api/v1/events']?.get
    expect(Object.keys(operation?.responses[200]?.content ?? {})).toEqual(['text/event-stream'])
    expect(Object.keys(operation?.responses[429]?.content ?? {})).toEqual(['application/problem+json'])
  })
})

describe('the window of changes (ChangeHub)', () => {
  test('keeps the last changes of the last minutes: older ids are told to reload', () => {
    let now = 0
    const hub = new ChangeHub('start', { events: 3, ms: 1000 }, () => now)
    const publish = (id: string) => hub.publish({ id, at: now, change: { kind: 'reset' } })
    const add = (id: string) =>
      hub.publish({ id, at: now, change: { kind: 'artist-created', artist: { id: 1, name: id } } })
    for (const id of ['a', 'b', 'c']) add(id)
    expect(hub.missedSince('start')).toHaveLength(3)
    add('d')
    expect(hub.missedSince('start')).toBe('reload')
    expect(hub.missedSince('a')).toHaveLength(3)
    now = 1500
    add('e')
    // a… d are older than the window's age now.
    expect(hub.missedSince('b')).toBe('reload')
    expect(hub.missedSince('d')).toHaveLength(1)
    publish('r')
    expect(hub.missedSince('e')).toBe('reload')
    expect(hub.missedSince('r')).toEqual([])
    expect(hub.head).toBe('r')
  })

  test('a window bounded in bytes keeps the newest changes that fit, however many its count allows', () => {
    const event = (id: string, description: string) => ({
      id,
      at: 0,
      change: { kind: 'artist-updated' as const, artist: { id: 1, name: 'Charly', description } },
    })
    const big = 'x'.repeat(10_000)
    const size = changeBytes(event('a', big))
    expect(size).toBeGreaterThan(20_000)
    const hub = new ChangeHub('start', { events: 1000, ms: 60_000, bytes: size * 3 }, () => 0)
    for (const id of ['a', 'b', 'c']) hub.publish(event(id, big))
    expect(hub.missedSince('start')).toHaveLength(3)
    hub.publish(event('d', big))
    expect(hub.missedSince('start')).toBe('reload')
    expect((hub.missedSince('a') as unknown[]).length).toBe(3)
    // Small changes fill the room a large one leaves.
    for (let i = 0; i < 100; i++) hub.publish(event(`s${i}`, ''))
    expect(hub.missedSince('b')).toBe('reload')
    expect((hub.missedSince('c') as unknown[]).length).toBe(101)
  })
})
